; `if (...) { throw ... }`: the reducer reads `Object.hasOwn(x, 'field')` tests in the condition.
(if_statement
  condition: (parenthesized_expression) @condition
  consequence: (statement_block (throw_statement))) @guard
