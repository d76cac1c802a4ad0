import RoostCore

/// Parse's field options (`/schemas` declarations `{"type": "String", "required": true, "defaultValue": "x"}`): a
/// create that leaves a field with a `defaultValue` out (or deletes it) gets the default; one that leaves out a
/// `required` field, or sets it to null or "", is refused with 142 `<field> is required`, as is an update that does
/// (Parse's `RestWrite.setRequiredFieldsIfNeeded`).
enum FieldOptions {
    /// The options in a field's declaration (`nil` when it has none).
    static func of(_ declaration: JSON) -> JSON? {
        var options: [String: JSON] = [:]
        for key in ["required", "defaultValue"] { if let value = declaration[key], value != .null { options[key] = value } }
        return options.isEmpty ? nil : .object(options)
    }

    /// The declaration `/schemas` shows: the type and its options.
    static func declaration(_ type: FieldType, options: JSON?) -> JSON {
        guard case .object(var declared) = type.schemaJSON, case .object(let extra)? = options else { return type.schemaJSON }
        declared.merge(extra) { kept, _ in kept }
        return .object(declared)
    }

    /// Every field's declaration, as `_schema` stores them and `roost export` writes them.
    static func declarations(_ fields: [String: FieldType], options: [String: JSON]) -> [String: JSON] {
        fields.reduce(into: [:]) { $0[$1.key] = declaration($1.value, options: options[$1.key]) }
    }

    /// Checks a new field's options as Parse's `validateSchemaData` does (111 for a default of another type, or an
    /// option on a Relation) and returns them.
    static func checked(_ declaration: JSON, type: FieldType, className: String, field: String) throws -> JSON? {
        guard let options = of(declaration) else { return nil }
        if let value = options["defaultValue"] {
            guard let given = try? FieldOperation.decode(value), case .set = given.0, let valueType = given.1 else {
                throw ParseError(.incorrectType, "schema mismatch for \(className).\(field) default value; expected \(type.displayName)")
            }
            if case .relation = type { throw ParseError(.incorrectType, "The 'default value' option is not applicable for \(type.displayName)") }
            guard valueType == type else {
                throw ParseError(.incorrectType,
                                 "schema mismatch for \(className).\(field) default value; expected \(type.displayName) but got \(valueType.displayName)")
            }
        } else if options["required"] == .bool(true), case .relation = type {
            throw ParseError(.incorrectType, "The 'required' option is not applicable for \(type.displayName)")
        }
        return options
    }

    /// Applies the schema's options to a save's operations (`isCreate`: defaults too, and every required field is
    /// checked; an update checks only the fields it sets). Returns the fields given their default.
    /// - Parameter skipping: fields the save carries outside `changes` (a user's credentials).
    static func apply(_ schema: ClassSchema?, to changes: inout ObjectWriter.Changes, isCreate: Bool,
                      skipping: Set<String> = []) throws -> [String] {
        guard let schema, !schema.fieldOptions.isEmpty else { return [] }
        var defaulted: [String] = []
        for (field, options) in schema.fieldOptions.sorted(by: { $0.key < $1.key }) where !skipping.contains(field) {
            let operation = changes.operations[field]
            if !isCreate && operation == nil { continue }
            let isEmpty: Bool
            switch operation {
            case nil, .delete?, .set(.null)?, .set(.string(""))?: isEmpty = true
            default: isEmpty = false
            }
            guard isEmpty else { continue }
            let leftOut = operation == nil || operation == .delete
            if isCreate, leftOut, let value = options["defaultValue"], value != .null,
               let (set, type) = try? FieldOperation.decode(value) {
                changes.operations[field] = set
                if let type { changes.types[field] = type }
                defaulted.append(field)
            } else if options["required"] == .bool(true) {
                throw ParseError(.validationError, "\(field) is required")
            }
        }
        return defaulted
    }
}
