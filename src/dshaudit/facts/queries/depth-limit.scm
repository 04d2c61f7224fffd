; A provider class's advertised capabilities: `capabilities: SubagentCapabilities = ...`.
((class_declaration
   name: (type_identifier) @provider
   body: (class_body
     (public_field_definition
       name: (property_identifier) @field
       type: (type_annotation (type_identifier) @field_type)
       value: (_) @value) @declaration))
 (#eq? @field "capabilities")
 (#eq? @field_type "SubagentCapabilities"))

; A shared capabilities constant: `const NAME: SubagentCapabilities = ...`.
((variable_declarator
   name: (identifier) @constant
   type: (type_annotation (type_identifier) @type)
   value: (_) @constant_value) @constant_declaration
 (#eq? @type "SubagentCapabilities"))
