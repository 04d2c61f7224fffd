; `name: <value>` in an object literal; the reducer keeps the pairs whose key it names.
(pair key: (property_identifier) @key value: (_) @value) @pair
