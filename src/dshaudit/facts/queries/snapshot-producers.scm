; A message source built with `form: 'snapshot'` (object literals only: type
; declarations are property signatures, not pairs, so they do not match).
; `'snapshot' as const` counts too.
((pair
   key: (property_identifier) @key
   value: [(string (string_fragment) @form)
           (as_expression (string (string_fragment) @form))
           (satisfies_expression (string (string_fragment) @form))]) @pair
 (#eq? @key "form")
 (#eq? @form "snapshot"))
