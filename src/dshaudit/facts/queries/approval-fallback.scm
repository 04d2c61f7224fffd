; The default answer of the approval waterfall: its last argument, `() => ...`.
((call_expression
   function: (member_expression property: (property_identifier) @method)
   arguments: (arguments (arrow_function body: (_) @fallback) .)) @site
 (#eq? @method "waterfall"))

; A rejection handler that turns a throwing answerer into an outcome: `.then(onOk, () => 'x')`.
((call_expression
   function: (member_expression property: (property_identifier) @method)
   arguments: (arguments (_) (arrow_function body: (string) @fallback) .)) @site
 (#eq? @method "then"))
