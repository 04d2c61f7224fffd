; The string members of `KNOWN_SESSION_EVENT_TYPES = new Set([...])`.
((variable_declarator
   name: (identifier) @name
   value: (new_expression
     arguments: (arguments (array (string (string_fragment) @type) @member))))
 (#eq? @name "KNOWN_SESSION_EVENT_TYPES"))
