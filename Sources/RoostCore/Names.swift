/// Rules for class and field names, shared by the server and the SDK.
public enum Names {
    /// Fields every class has; clients cannot set them as ordinary fields.
    public static let reservedFields: Set<String> = ["objectId", "createdAt", "updatedAt", "ACL"]

    /// System classes the server knows; other names starting with `_` are refused.
    public static let systemClasses: Set<String> = ["_User", "_Role", "_Session", "_Installation", "_Audience", "_Product"]

    /// `^[A-Za-z][A-Za-z0-9_]*$`, at most 128 characters.
    public static func isValidIdentifier(_ name: String) -> Bool {
        let bytes = name.utf8
        guard let first = bytes.first, bytes.count <= 128, isLetter(first) else { return false }
        return bytes.allSatisfy { isLetter($0) || isDigit($0) || $0 == UInt8(ascii: "_") }
    }

    /// A class name clients may use: an identifier, or one of the system classes.
    public static func isValidClassName(_ name: String) -> Bool {
        isValidIdentifier(name) || systemClasses.contains(name)
    }

    /// A class a pointer may name: a valid class name, or one of Parse's internal classes (`_` and an identifier's
    /// characters, such as `_GlobalConfig` or `_PushStatus`).
    public static func isPointerClassName(_ name: String) -> Bool {
        if isValidClassName(name) { return true }
        let bytes = name.utf8
        return bytes.count > 1 && bytes.count <= 128 && bytes.first == UInt8(ascii: "_")
            && bytes.dropFirst().allSatisfy { isLetter($0) || isDigit($0) || $0 == UInt8(ascii: "_") }
    }

    /// A field name clients may write: an identifier that is not a reserved or forbidden word.
    public static func isValidFieldName(_ name: String) -> Bool {
        isValidIdentifier(name) && name != "length" && name != "className"
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
}
