import RoostCore

/// Checks `classLevelPermissions` written through `/schemas` as Parse Server's `validateCLP` does, with its
/// messages (all code 107), so a typo (`" *"`, `"find": {"*": 1}`) is refused instead of stored and silently
/// granting nothing.
enum ClassPermissionsValidation {
    static let checkOrder = ["find", "count", "get", "create", "update", "delete", "addField", "writeUserFields", "readUserFields",
                             "protectedFields"]
    static let operations = Set(checkOrder)

    /// - Parameters:
    ///   - value: the `classLevelPermissions` of the request.
    ///   - type: the type of a field of the class once the request's field changes apply (default fields included).
    ///   - allowCustomObjectId: user ids of any shape are accepted as keys then (Parse's `allowCustomObjectId`).
    /// - Throws: `ParseError` 107 with Parse's message for the first problem found.
    static func validate(_ value: JSON, fieldType type: (String) -> FieldType?, allowCustomObjectId: Bool) throws {
        if value == .null { return }  // Parse's `validateCLP` skips a missing value: the class falls back to the defaults.
        guard case .object(let entries) = value else {
            // Parse walks a string's indexes as keys; other shapes are refused here rather than stored.
            if let text = value.stringValue, !text.isEmpty { throw invalid("0 is not a valid operation for class level permissions") }
            throw invalid("classLevelPermissions must be an object")
        }
        // Parse reports the first bad entry in the order the client wrote them; a JSON object's order is not kept
        // here, so unknown operations come first, then Parse's own order (with `writeUserFields` before
        // `readUserFields`, as its spec cases write them).
        if let unknown = entries.keys.sorted().first(where: { !operations.contains($0) }) {
            throw invalid("\(unknown) is not a valid operation for class level permissions")
        }
        for operationKey in checkOrder {
            guard let operation = entries[operationKey] else { continue }
            if operationKey == "readUserFields" || operationKey == "writeUserFields" {
                guard let names = operation.arrayValue else {
                    throw invalid("'\(jsText(operation))' is not a valid value for class level permissions \(operationKey) - must be an array")
                }
                for name in names { try checkPointerField(name, type, operation: operationKey) }
                continue
            }
            guard case .object(let grants) = operation else {
                throw invalid("'\(jsText(operation))' is not a valid value for class level permissions \(operationKey) - must be an object")
            }
            for (entity, permit) in grants.sorted(by: { $0.key < $1.key }) {
                if operationKey == "protectedFields" {
                    try checkProtectedFields(entity, permit, type, allowCustomObjectId: allowCustomObjectId)
                    continue
                }
                guard isPermissionKey(entity, allowCustomObjectId: allowCustomObjectId) else {
                    throw invalid("'\(entity)' is not a valid key for class level permissions")
                }
                if entity == "pointerFields" {
                    guard let names = permit.arrayValue else {
                        throw invalid("'\(jsText(permit))' is not a valid value for \(operationKey)[\(entity)] - expected an array.")
                    }
                    // Parse names the operation's entry here, which JavaScript prints as "[object Object]".
                    for name in names { try checkPointerField(name, type, operation: "[object Object]") }
                    continue
                }
                guard permit == .bool(true) else {
                    let text = jsText(permit)
                    throw invalid("'\(text)' is not a valid value for class level permissions \(operationKey):\(entity):\(text)")
                }
            }
        }
    }

    private static func checkProtectedFields(_ entity: String, _ value: JSON, _ type: (String) -> FieldType?,
                                             allowCustomObjectId: Bool) throws {
        let known = entity == "*" || entity == "authenticated" || entity.hasPrefix("role:") || entity.hasPrefix("userField:")
        guard known || isUserId(entity, allowCustomObjectId: allowCustomObjectId) else {
            throw invalid("'\(entity)' is not a valid key for class level permissions")
        }
        guard let fields = value.arrayValue else {
            throw invalid("'\(jsText(value))' is not a valid value for protectedFields[\(entity)] - expected an array.")
        }
        for field in fields {
            let name = jsText(field)
            if Names.reservedFields.contains(name) { throw invalid("Default field '\(name)' can not be protected") }
            guard type(name) != nil else { throw invalid("Field '\(name)' in protectedFields:\(entity) does not exist") }
        }
    }

    /// `pointerFields`, `readUserFields` and `writeUserFields` name Pointer<_User> or Array fields.
    private static func checkPointerField(_ name: JSON, _ type: (String) -> FieldType?, operation: String) throws {
        let field = jsText(name)
        switch type(field) {
        case .pointer(UserStore.className)?, .array?: return
        default: throw invalid("'\(field)' is not a valid column for class level pointer permissions \(operation)")
        }
    }

    private static func isPermissionKey(_ key: String, allowCustomObjectId: Bool) -> Bool {
        key == "*" || key == "requiresAuthentication" || key == "pointerFields" || key.hasPrefix("role:")
            || isUserId(key, allowCustomObjectId: allowCustomObjectId)
    }

    /// Parse's `userIdRegEx`: letters and digits, or anything non-empty with custom object ids.
    private static func isUserId(_ key: String, allowCustomObjectId: Bool) -> Bool {
        if allowCustomObjectId { return !key.isEmpty }
        return !key.isEmpty && key.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)) }
    }

    private static func invalid(_ message: String) -> ParseError { ParseError(.invalidJSON, message) }

    /// How JavaScript's template strings print a JSON value (`${value}`), which Parse's messages use.
    static func jsText(_ value: JSON) -> String {
        switch value {
        case .null: return "null"
        case .bool(let flag): return flag ? "true" : "false"
        case .number(let number):
            if let integer = Int64(exactly: number) { return String(integer) }
            return "\(number)"
        case .string(let text): return text
        case .array(let items): return items.map { $0 == .null ? "" : jsText($0) }.joined(separator: ",")
        case .object: return "[object Object]"
        case .encodedFragment: return value.jsonText
        }
    }
}
