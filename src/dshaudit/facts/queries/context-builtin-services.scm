; Services the Cordis root Context builds in its constructor: `this.name = new Impl(...)`
; statements directly in the constructor body of `class Context`.
((class_declaration
   name: (type_identifier) @class
   body: (class_body
     (method_definition
       name: (property_identifier) @ctor
       body: (statement_block
         (expression_statement
           (assignment_expression
             left: (member_expression object: (this) property: (property_identifier) @service)
             right: (new_expression constructor: [(identifier) (member_expression)] @impl)) @assignment)))))
 (#eq? @class "Context")
 (#eq? @ctor "constructor"))
