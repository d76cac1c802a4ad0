import RoostCore

/// What the server knows about one class: its stored fields and their types.
public struct ClassSchema: Sendable, Equatable {
    /// Row id in `_schema`; the class's objects live in table `c<id>`.
    public let id: Int64
    public let className: String
    public var fields: [String: FieldType]
    public var classLevelPermissions: JSON?
    public var indexes: JSON?

    /// The SQL table of this class's objects. Safe to splice: built from an integer.
    var tableName: String { "\"c\(id)\"" }

    /// Fields every class has, as `GET /schemas` shows them.
    static let defaultFields: [String: FieldType] = [
        "objectId": .string, "createdAt": .date, "updatedAt": .date, "ACL": .acl,
    ]

    /// The type of a top-level key, including the built-in ones.
    func type(of key: String) -> FieldType? { fields[key] ?? ClassSchema.defaultFields[key] }

    /// Everyone may do everything, as Parse shows for a class without explicit permissions.
    static let openPermissions: JSON = [
        "find": ["*": true], "count": ["*": true], "get": ["*": true], "create": ["*": true],
        "update": ["*": true], "delete": ["*": true], "addField": ["*": true], "protectedFields": ["*": []],
    ]

    /// The `GET /schemas/<Class>` form.
    var json: JSON {
        var allFields: [String: JSON] = [:]
        for (name, type) in ClassSchema.defaultFields.merging(fields, uniquingKeysWith: { _, custom in custom }) {
            allFields[name] = type.schemaJSON
        }
        var result: [String: JSON] = [
            "className": .string(className),
            "fields": .object(allFields),
            "classLevelPermissions": classLevelPermissions ?? ClassSchema.openPermissions,
        ]
        var allIndexes: [String: JSON] = ["_id_": ["_id": 1]]
        if case .object(let custom)? = indexes { allIndexes.merge(custom) { _, new in new } }
        result["indexes"] = .object(allIndexes)
        return .object(result)
    }
}
