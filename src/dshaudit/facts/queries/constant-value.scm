; `const NAME = <value>`; the reducer keeps the constants it names.
(variable_declarator name: (identifier) @key value: (_) @value) @declaration
