/// Validation and type inference for values in the Parse wire encoding
/// (`{"__type": "Date", "iso": ...}`, Pointer, Bytes, GeoPoint, File, Polygon).
public enum WireValue {
    /// The schema type of a field value, after checking its shape; `nil` for `null`.
    ///
    /// Dates are returned normalised (`iso` rewritten with three fraction digits in UTC).
    /// - Throws: `ParseError` 111 for a malformed `__type` value, 121 for a nested key with `$` or `.`,
    ///   107 for an out-of-range GeoPoint.
    public static func validate(_ value: JSON) throws -> (FieldType?, JSON) {
        switch value {
        case .null: return (nil, value)
        case .string: return (.string, value)
        case .number: return (.number, value)
        case .bool: return (.boolean, value)
        case .array(let elements):
            return (.array, .array(try elements.map { try validateNested($0) }))
        case .encodedFragment:
            throw ParseError(.invalidJSON, "pre-encoded JSON is not a field value")
        case .object(let members):
            guard let type = members["__type"] else {
                return (.object, try validateNested(value))
            }
            return try validateTyped(type.stringValue ?? "", members)
        }
    }

    /// A value stored inside an Object or Array field: typed values are checked, plain keys must not
    /// contain `$` or `.` (Parse error 121).
    static func validateNested(_ value: JSON) throws -> JSON {
        switch value {
        case .array(let elements): return .array(try elements.map { try validateNested($0) })
        case .object(let members):
            if let type = members["__type"]?.stringValue, type != "Object" {
                let normalized = try validateTyped(type, members).1
                // A File inside an Object or Array keeps the URL it was saved with: Parse stores such values as
                // they come (only File fields are kept by name, their URL made when read).
                if type == "File", case .object(var file) = normalized, let url = members["url"], case .string = url {
                    file["url"] = url
                    return .object(file)
                }
                return normalized
            }
            var result: [String: JSON] = [:]
            for (key, member) in members {
                if key.utf8.contains(UInt8(ascii: "$")) || key.utf8.contains(UInt8(ascii: ".")) {
                    throw ParseError(.invalidNestedKey, "Nested keys should not contain the '$' or '.' characters")
                }
                result[key] = try validateNested(member)
            }
            return .object(result)
        default: return value
        }
    }

    private static func validateTyped(_ type: String, _ members: [String: JSON]) throws -> (FieldType?, JSON) {
        switch type {
        case "Date":
            guard let text = members["iso"]?.stringValue, let date = ParseDate(iso: text) else {
                throw ParseError(.incorrectType, "This is not a valid Date")
            }
            return (.date, encode(date))
        case "Pointer":
            // As Parse, a whole number for an id is taken (as its digits), and a class may be an internal one
            // (`_GlobalConfig`): reading through it is then the master key's alone (`IncludeResolver`).
            let id = members["objectId"]?.stringValue
                ?? members["objectId"]?.numberValue.flatMap { $0 == $0.rounded() && abs($0) < 1e15 ? String(Int64($0)) : nil }
            guard let className = members["className"]?.stringValue, Names.isPointerClassName(className),
                let objectId = id, !objectId.isEmpty
            else { throw ParseError(.incorrectType, "This is not a valid Pointer") }
            return (.pointer(targetClass: className), pointer(className, objectId))
        case "Bytes":
            guard let base64 = members["base64"]?.stringValue, isBase64(base64) else {
                throw ParseError(.incorrectType, "This is not a valid Bytes")
            }
            return (.bytes, ["__type": "Bytes", "base64": .string(base64)])
        case "GeoPoint":
            guard let latitude = members["latitude"]?.numberValue, let longitude = members["longitude"]?.numberValue else {
                throw ParseError(.incorrectType, "This is not a valid GeoPoint")
            }
            guard (-90...90).contains(latitude), (-180...180).contains(longitude) else {
                throw ParseError(.invalidJSON, "GeoPoint latitude and longitude out of bounds: \(latitude), \(longitude).")
            }
            return (.geoPoint, ["__type": "GeoPoint", "latitude": .number(latitude), "longitude": .number(longitude)])
        case "File":
            guard let name = members["name"]?.stringValue, !name.isEmpty else {
                throw ParseError(.incorrectType, "This is not a valid File")
            }
            return (.file, ["__type": "File", "name": .string(name)])
        case "Polygon":
            guard var points = members["coordinates"]?.arrayValue, points.count >= 3,
                points.allSatisfy({ point in
                    guard let pair = point.arrayValue, pair.count == 2, let lat = pair[0].numberValue,
                        let lng = pair[1].numberValue
                    else { return false }
                    return (-90...90).contains(lat) && (-180...180).contains(lng)
                })
            else { throw ParseError(.incorrectType, "This is not a valid Polygon") }
            // As Parse stores it: an open path is closed, and a loop needs three different vertices.
            if points.first != points.last { points.append(points[0]) }
            guard Set(points.map(\.jsonText)).count >= 3 else { throw ParseError(.incorrectType, "This is not a valid Polygon") }
            return (.polygon, ["__type": "Polygon", "coordinates": .array(points)])
        case "Relation":
            throw ParseError(.incorrectType, "Relation fields are written with AddRelation and RemoveRelation")
        default:
            throw ParseError(.incorrectType, "This is not a valid \(type.isEmpty ? "__type" : type)")
        }
    }

    /// `{"__type": "Date", "iso": ...}`.
    public static func encode(_ date: ParseDate) -> JSON { ["__type": "Date", "iso": .string(date.iso)] }

    /// `{"__type": "Pointer", "className": ..., "objectId": ...}`.
    public static func pointer(_ className: String, _ objectId: String) -> JSON {
        ["__type": "Pointer", "className": .string(className), "objectId": .string(objectId)]
    }

    private static func isBase64(_ text: String) -> Bool {
        var count = 0
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "+"), UInt8(ascii: "/"), UInt8(ascii: "="), UInt8(ascii: "-"), UInt8(ascii: "_"):
                count += 1
            case 0x0A, 0x0D: continue
            default: return false
            }
        }
        return true
    }
}
