; `name: z.something(...).default(<value>)`: a configuration field's default.
((pair
   key: (property_identifier) @key
   value: (call_expression
     function: (member_expression property: (property_identifier) @method)
     arguments: (arguments . (_) @value .))) @pair
 (#eq? @method "default"))
