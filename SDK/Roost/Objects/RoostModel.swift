import Foundation
import RoostCore

/// A typed model: a `Codable` struct or class stored as objects of `className`.
///
/// ```swift
/// struct TodoItem: RoostModel {
///     static let className = "Todo"
///     var objectId: String?
///     var createdAt: Date?
///     var updatedAt: Date?
///     var title: String
///     var done = false
/// }
/// var item = TodoItem(title: "Buy milk")
/// try await client.save(&item)
/// let open = try await client.query(TodoItem.self).whereKey("done", equalTo: false).find(as: TodoItem.self)
/// ```
/// Dates travel as Parse Dates and `Data` as Bytes. A save sends every stored property.
public protocol RoostModel: Codable, Sendable {
    static var className: String { get }
    var objectId: String? { get set }
    var createdAt: Date? { get set }
    var updatedAt: Date? { get set }
}

/// Codable ↔ Parse JSON, through Foundation's coders with Parse's Date and Bytes forms.
enum ModelCoding {
    static func encode(_ model: some Encodable) throws -> [String: JSON] {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.container(keyedBy: TypeKeys.self)
            try container.encode("Date", forKey: .type)
            try container.encode(ParseDate(millisecondsSince1970: Int64((date.timeIntervalSince1970 * 1000).rounded())).iso, forKey: .iso)
        }
        encoder.dataEncodingStrategy = .custom { data, encoder in
            var container = encoder.container(keyedBy: TypeKeys.self)
            try container.encode("Bytes", forKey: .type)
            try container.encode(data.base64EncodedString(), forKey: .base64)
        }
        guard case .object(var fields) = try JSONParser.parse(Array(try encoder.encode(model))) else {
            throw RoostError.invalidArgument("a model must encode as a keyed container")
        }
        for key in ["objectId", "createdAt", "updatedAt"] { fields.removeValue(forKey: key) }
        return fields
    }

    static func decode<T: Decodable>(_ type: T.Type, from json: JSON) throws -> T {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            if let container = try? decoder.container(keyedBy: TypeKeys.self), let iso = try? container.decode(String.self, forKey: .iso),
                let date = ParseDate(iso: iso)
            {
                return Date(timeIntervalSince1970: Double(date.millisecondsSince1970) / 1000)
            }
            let text = try decoder.singleValueContainer().decode(String.self)
            guard let date = ParseDate(iso: text) else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a date: \(text)"))
            }
            return Date(timeIntervalSince1970: Double(date.millisecondsSince1970) / 1000)
        }
        decoder.dataDecodingStrategy = .custom { decoder in
            let container = try decoder.container(keyedBy: TypeKeys.self)
            guard let data = Data(base64Encoded: try container.decode(String.self, forKey: .base64)) else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "bad base64"))
            }
            return data
        }
        return try decoder.decode(T.self, from: Data(json.encoded()))
    }

    private enum TypeKeys: String, CodingKey {
        case type = "__type", iso, base64
    }
}

extension RoostClient {
    /// Saves a model: creates it (and fills in `objectId`, `createdAt`) or updates every stored property.
    public func save<T: RoostModel>(_ model: inout T) async throws {
        let object = model.objectId.map { makeObject(className: T.className, objectId: $0) } ?? object(T.className)
        for (key, value) in try ModelCoding.encode(model) { object.set(key, value) }
        try await object.save()
        model.objectId = object.objectId
        model.createdAt = model.createdAt ?? object.createdAt
        model.updatedAt = object.updatedAt
    }

    /// The model with this id. - Throws: `RoostError.server` 101 when missing or not readable.
    public func fetch<T: RoostModel>(_ type: T.Type, objectId: String) async throws -> T {
        let object = try await query(T.className).get(objectId)
        return try object.decode(as: T.self)
    }

    /// Deletes a saved model.
    public func delete<T: RoostModel>(_ model: T) async throws {
        guard let id = model.objectId else { throw RoostError.invalidArgument("Cannot delete a model that has not been saved.") }
        try await makeObject(className: T.className, objectId: id).delete()
    }

    /// A query on a model's class.
    public func query<T: RoostModel>(_ type: T.Type) -> RoostQuery { query(T.className) }
}

extension RoostObject {
    /// This object's fields as a model.
    public func decode<T: RoostModel>(as type: T.Type) throws -> T {
        var fields = allFields
        if let objectId { fields["objectId"] = .string(objectId) }
        if let createdAt { fields["createdAt"] = createdAt.roostJSON }
        if let updatedAt { fields["updatedAt"] = updatedAt.roostJSON }
        return try ModelCoding.decode(T.self, from: .object(fields))
    }
}

extension RoostQuery {
    /// The results as models.
    public func find<T: RoostModel>(as type: T.Type) async throws -> [T] {
        try await find().map { try $0.decode(as: T.self) }
    }

    public func first<T: RoostModel>(as type: T.Type) async throws -> T? {
        try await first().map { try $0.decode(as: T.self) }
    }
}
