/// `String(value)` as JavaScript writes a JSON value, for the error messages Parse builds that way
/// (`bad regex: 5`, `[object Object]`, arrays joined by commas).
public enum JavaScriptString {
    public static func of(_ value: JSON) -> String {
        switch value {
        case .null: return "null"
        case .bool(let flag): return flag ? "true" : "false"
        case .string(let text): return text
        case .number: return value.jsonText
        case .array(let elements):
            // Array.prototype.toString: null and undefined elements are empty.
            return elements.map { $0 == .null ? "" : of($0) }.joined(separator: ",")
        case .object, .encodedFragment: return "[object Object]"
        }
    }

    /// JavaScript's truthiness of a JSON value: false, 0, NaN, "" and null are false.
    public static func isTruthy(_ value: JSON) -> Bool {
        switch value {
        case .null, .bool(false): false
        case .number(let number): number != 0 && !number.isNaN
        case .string(let text): !text.isEmpty
        default: true
        }
    }
}
