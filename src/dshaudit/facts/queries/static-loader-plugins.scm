; Default imports of Cordis plugin packages.
((import_statement
   (import_clause (identifier) @plugin)
   source: (string (string_fragment) @source)) @import
 (#match? @source "^@deepseek-ai/cordis-plugin-"))

; `ctx.plugin(X)`: a plugin mounted by hand.
((call_expression
   function: (member_expression property: (property_identifier) @method)
   arguments: (arguments . (identifier) @mounted)) @mount
 (#eq? @method "plugin"))

; `ctx.loader.builtins.name = <expression using X>`: a plugin installed as a loader builtin.
((assignment_expression
   left: (member_expression
     object: (member_expression
       object: (member_expression property: (property_identifier) @loader)
       property: (property_identifier) @builtins))
   right: (_) @mounted_expr) @mount
 (#eq? @loader "loader")
 (#eq? @builtins "builtins"))
