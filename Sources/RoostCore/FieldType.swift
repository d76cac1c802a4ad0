/// The type recorded in a class schema for one field, as Parse names it.
public enum FieldType: Hashable, Sendable {
    case string, number, boolean, date, object, array, bytes, geoPoint, file, polygon, acl
    case pointer(targetClass: String)
    case relation(targetClass: String)

    /// The Parse name of the type (`"String"`, `"Pointer"`, ...).
    public var name: String {
        switch self {
        case .string: "String"
        case .number: "Number"
        case .boolean: "Boolean"
        case .date: "Date"
        case .object: "Object"
        case .array: "Array"
        case .bytes: "Bytes"
        case .geoPoint: "GeoPoint"
        case .file: "File"
        case .polygon: "Polygon"
        case .acl: "ACL"
        case .pointer: "Pointer"
        case .relation: "Relation"
        }
    }

    /// How the type is written in error messages (`Pointer<_User>`), as Parse does.
    public var displayName: String {
        switch self {
        case .pointer(let target): "Pointer<\(target)>"
        case .relation(let target): "Relation<\(target)>"
        default: name
        }
    }

    /// The schema form: `{"type": "Pointer", "targetClass": "_User"}`.
    public var schemaJSON: JSON {
        switch self {
        case .pointer(let target), .relation(let target):
            return ["type": .string(name), "targetClass": .string(target)]
        default:
            return ["type": .string(name)]
        }
    }

    /// Reads the schema form; `nil` for an unknown type name or a Pointer/Relation without a target.
    public init?(schemaJSON: JSON) {
        guard let name = schemaJSON["type"]?.stringValue else { return nil }
        let target = schemaJSON["targetClass"]?.stringValue
        switch name {
        case "String": self = .string
        case "Number": self = .number
        case "Boolean": self = .boolean
        case "Date": self = .date
        case "Object": self = .object
        case "Array": self = .array
        case "Bytes": self = .bytes
        case "GeoPoint": self = .geoPoint
        case "File": self = .file
        case "Polygon": self = .polygon
        case "ACL": self = .acl
        case "Pointer":
            guard let target else { return nil }
            self = .pointer(targetClass: target)
        case "Relation":
            guard let target else { return nil }
            self = .relation(targetClass: target)
        default: return nil
        }
    }
}
