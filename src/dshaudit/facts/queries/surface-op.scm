; Every `surfaceOp: <value>` property in an object literal: the op an event is appended with.
((pair key: (property_identifier) @key value: (_) @value) @pair
 (#eq? @key "surfaceOp"))
