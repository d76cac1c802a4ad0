import RoostCore

/// One value of a document, read in SQL from its row without reading the object, and turned into the value
/// `Aggregation.lookup` finds at the same path of the object's wire form (`.null` where it finds nothing:
/// every use of a streamed value treats a missing value as null).
struct AggregationColumn: Hashable {
    private enum Kind: Hashable { case objectId, date, number, boolean, string, json }

    private let kind: Kind
    /// The SQL expression over the class table's columns.
    let sql: String
    /// The field of `data` read, when the path is one top-level field (not a built-in one).
    let topLevelField: String?

    /// Nil for a path SQL cannot read as `lookup` does: an empty or unusual part (a digit-led part would index an
    /// array in SQLite, not in `lookup`), a path into a built-in field.
    init?(path: String, schema: ClassSchema, dialect: SQLDialect = .sqlite) {
        let parts = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard let first = parts.first else { return nil }
        let renamed = ["_id": "objectId", "_created_at": "createdAt", "_updated_at": "updatedAt"]
        let root = renamed[first] ?? first
        switch root {
        case "objectId", "createdAt", "updatedAt", "ACL":
            guard parts.count == 1 else { return nil }
            topLevelField = nil
            (kind, sql) = switch root {
            case "objectId": (.objectId, "objectId")
            case "ACL": (.json, "acl")
            default: (.date, root)
            }
            return
        default: break
        }
        guard parts.allSatisfy(Names.isValidIdentifier) else { return nil }
        topLevelField = parts.count == 1 ? root : nil
        if dialect == .postgres {
            // jsonb's text form is JSON: `value` reads it as it reads SQLite's `->` (numbers, Booleans, strings alike).
            (kind, sql) = (.json, "(data #> '{\(parts.joined(separator: ","))}')")
            return
        }
        let jsonPath = "$." + parts.joined(separator: ".")
        switch parts.count == 1 ? schema.fields[root] : nil {
        // json_extract reads numbers and Booleans without decoding; `->` keeps a string's escapes (json_extract stops at NUL).
        case .number?: (kind, sql) = (.number, "json_extract(data, '\(jsonPath)')")
        case .boolean?: (kind, sql) = (.boolean, "json_extract(data, '\(jsonPath)')")
        case .string?: (kind, sql) = (.string, "(data -> '\(jsonPath)')")
        default: (kind, sql) = (.json, "(data -> '\(jsonPath)')")
        }
    }

    /// The wire value of what `sql` read.
    func value(_ stored: SQLValue) -> JSON {
        switch (kind, stored) {
        case (_, .null): return .null
        case (.objectId, .text(let id)): return .string(id)
        case (.date, .integer(let milliseconds)): return .string(ParseDate(millisecondsSince1970: milliseconds).iso)
        case (.boolean, .integer(let flag)): return .bool(flag != 0)
        case (_, .integer(let number)): return .number(Double(number))
        case (_, .real(let number)): return .number(number)
        case (.string, .text(let text)):
            // A JSON string without escapes is its text between the quotes.
            let bytes = text.utf8
            if bytes.count >= 2, bytes.first == UInt8(ascii: "\""), !bytes.contains(UInt8(ascii: "\\")) {
                return .string(String(decoding: bytes.dropFirst().dropLast(), as: UTF8.self))
            }
            return (try? JSONParser.parse(text)) ?? .null
        case (_, .text(let text)): return (try? JSONParser.parse(text)) ?? .null
        }
    }
}
