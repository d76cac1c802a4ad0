import Foundation
import RoostCore

/// A Swift value that can be stored in a `RoostObject` field, in Parse's wire encoding.
public protocol RoostValueConvertible {
    var roostJSON: JSON { get }
    init?(roostJSON: JSON)
}

extension JSON: RoostValueConvertible {
    public var roostJSON: JSON { self }
    public init?(roostJSON: JSON) { self = roostJSON }
}

extension String: RoostValueConvertible {
    public var roostJSON: JSON { .string(self) }
    public init?(roostJSON: JSON) {
        guard let value = roostJSON.stringValue else { return nil }
        self = value
    }
}

extension Int: RoostValueConvertible {
    public var roostJSON: JSON { .number(Double(self)) }
    public init?(roostJSON: JSON) {
        guard let value = roostJSON.numberValue, value.rounded() == value, abs(value) < 9.2e18 else { return nil }
        self = Int(value)
    }
}

extension Double: RoostValueConvertible {
    public var roostJSON: JSON { .number(self) }
    public init?(roostJSON: JSON) {
        guard let value = roostJSON.numberValue else { return nil }
        self = value
    }
}

extension Bool: RoostValueConvertible {
    public var roostJSON: JSON { .bool(self) }
    public init?(roostJSON: JSON) {
        guard let value = roostJSON.boolValue else { return nil }
        self = value
    }
}

extension Date: RoostValueConvertible {
    /// `{"__type": "Date", "iso": "…"}`, millisecond precision.
    public var roostJSON: JSON {
        WireValue.encode(ParseDate(millisecondsSince1970: Int64((timeIntervalSince1970 * 1000).rounded())))
    }
    /// Reads the Date form or a plain ISO string (as `createdAt` travels).
    public init?(roostJSON: JSON) {
        guard let text = roostJSON["iso"]?.stringValue ?? roostJSON.stringValue, let date = ParseDate(iso: text) else { return nil }
        self = Date(timeIntervalSince1970: Double(date.millisecondsSince1970) / 1000)
    }
}

extension Data: RoostValueConvertible {
    /// `{"__type": "Bytes", "base64": "…"}`.
    public var roostJSON: JSON { ["__type": "Bytes", "base64": .string(base64EncodedString())] }
    public init?(roostJSON: JSON) {
        guard roostJSON["__type"] == "Bytes", let text = roostJSON["base64"]?.stringValue, let data = Data(base64Encoded: text) else {
            return nil
        }
        self = data
    }
}

extension GeoPoint: RoostValueConvertible {
    public var roostJSON: JSON {
        ["__type": "GeoPoint", "latitude": .number(latitude), "longitude": .number(longitude)]
    }
    public init?(roostJSON: JSON) {
        guard roostJSON["__type"] == "GeoPoint", let latitude = roostJSON["latitude"]?.numberValue,
            let longitude = roostJSON["longitude"]?.numberValue
        else { return nil }
        self.init(latitude: latitude, longitude: longitude)
    }
}

extension Array: RoostValueConvertible where Element: RoostValueConvertible {
    public var roostJSON: JSON { .array(map(\.roostJSON)) }
    public init?(roostJSON: JSON) {
        guard let elements = roostJSON.arrayValue else { return nil }
        var result: [Element] = []
        for element in elements {
            guard let value = Element(roostJSON: element) else { return nil }
            result.append(value)
        }
        self = result
    }
}

extension Dictionary: RoostValueConvertible where Key == String, Value: RoostValueConvertible {
    public var roostJSON: JSON { .object(mapValues(\.roostJSON)) }
    public init?(roostJSON: JSON) {
        guard let members = roostJSON.objectValue, members["__type"] == nil else { return nil }
        var result: [String: Value] = [:]
        for (key, member) in members {
            guard let value = Value(roostJSON: member) else { return nil }
            result[key] = value
        }
        self = result
    }
}
