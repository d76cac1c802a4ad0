import RoostCore

/// Parse's checks (`validateCLP`) of the fields class-level permissions name, when they are set (`POST`/`PUT
/// /schemas`): `readUserFields`, `writeUserFields` and each operation's `pointerFields` must name fields of the
/// class that hold a pointer to `_User` or an array (of such pointers); `protectedFields` must name fields of
/// the class, and none of the default ones.
enum PermissionFields {
    /// - Throws: `ParseError` 107 with Parse's message.
    static func validate(_ permissions: JSON?, fields: [String: FieldType]) throws {
        guard case .object(let entries)? = permissions else { return }
        for key in ["writeUserFields", "readUserFields"] {
            guard let value = entries[key] else { continue }
            guard case .array(let names) = value else {
                throw ParseError(.invalidJSON, "'\(javaScriptText(value))' is not a valid value for class level permissions \(key) - must be an array")
            }
            for name in names { try check(name, fields: fields, in: key) }
        }
        for operation in ["find", "count", "get", "create", "update", "delete", "addField"] {
            guard let value = entries[operation]?["pointerFields"] else { continue }
            guard case .array(let names) = value else {
                throw ParseError(.invalidJSON, "'\(javaScriptText(value))' is not a valid value for \(operation)[pointerFields] - expected an array.")
            }
            // Parse names the operation's entry here, which JavaScript prints as "[object Object]".
            for name in names { try check(name, fields: fields, in: "[object Object]") }
        }
        for (entity, value) in entries["protectedFields"]?.objectValue ?? [:] {
            guard case .array(let names) = value else {
                throw ParseError(.invalidJSON, "'\(javaScriptText(value))' is not a valid value for protectedFields[\(entity)] - expected an array.")
            }
            for name in names {
                let field = javaScriptText(name)
                if ClassSchema.defaultFields[field] != nil {
                    throw ParseError(.invalidJSON, "Default field '\(field)' can not be protected")
                }
                guard fields[field] != nil else {
                    throw ParseError(.invalidJSON, "Field '\(field)' in protectedFields:\(entity) does not exist")
                }
            }
        }
    }

    private static func check(_ name: JSON, fields: [String: FieldType], in permission: String) throws {
        let valid: Bool
        switch name.stringValue.flatMap({ fields[$0] }) {
        case .pointer(let target)?: valid = target == UserStore.className
        case .array?: valid = true
        default: valid = false
        }
        if !valid {
            throw ParseError(.invalidJSON, "'\(javaScriptText(name))' is not a valid column for class level pointer permissions \(permission)")
        }
    }

    /// A value as JavaScript's template strings print it.
    private static func javaScriptText(_ value: JSON) -> String {
        switch value {
        case .string(let text): text
        case .array(let items): items.map(javaScriptText).joined(separator: ",")
        case .object, .encodedFragment: "[object Object]"
        case .null: "null"
        case .bool(let flag): flag ? "true" : "false"
        case .number(let number): number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
        }
    }
}
