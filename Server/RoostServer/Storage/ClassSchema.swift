import RoostCore

/// What the server knows about one class: its stored fields and their types.
public struct ClassSchema: Sendable, Equatable {
    /// Row id in `_schema`; the class's objects live in table `c<id>`.
    public let id: Int64
    public let className: String
    public var fields: [String: FieldType]
    public var classLevelPermissions: JSON?
    public var indexes: JSON?
    /// A view to read instead of `c<id>` (`_Session`, whose rows live in `_session`); always a constant of ours.
    var view: String? = nil
    /// PostgreSQL: the fields with a generated column of their typed value (`PostgresTypedColumns`). Empty on SQLite.
    var typedColumns: Set<String> = []
    /// Parse's field options, by field: `{"required": true}`, `{"defaultValue": …}` (`FieldOptions`).
    var fieldOptions: [String: JSON] = [:]

    /// The SQL table of this class's objects. Safe to splice: built from an integer (or one of our view names).
    var tableName: String { view ?? "\"c\(id)\"" }

    /// Fields every class has, as `GET /schemas` shows them.
    static let defaultFields: [String: FieldType] = [
        "objectId": .string, "createdAt": .date, "updatedAt": .date, "ACL": .acl,
    ]

    /// The type of a top-level key, including the built-in ones.
    func type(of key: String) -> FieldType? { fields[key] ?? ClassSchema.defaultFields[key] }

    /// Parse allows one GeoPoint field per class.
    /// - Throws: `ParseError` 111 when `fields` has more.
    static func checkSingleGeoPoint(_ fields: [String: FieldType]) throws {
        let geoPoints = fields.filter { $0.value == .geoPoint }.keys.sorted()
        if geoPoints.count > 1 {
            throw ParseError(.incorrectType, "currently, only one GeoPoint field may exist in an object. Adding \(geoPoints[1]) when \(geoPoints[0]) already exists.")
        }
    }

    /// Everyone may do everything, as Parse shows for a class without explicit permissions.
    static let openPermissions: JSON = [
        "find": ["*": true], "count": ["*": true], "get": ["*": true], "create": ["*": true],
        "update": ["*": true], "delete": ["*": true], "addField": ["*": true], "protectedFields": ["*": []],
    ]

    /// Permissions as set (`POST`/`PUT /schemas`), with every operation they leave out locked to the master
    /// key, as Parse's storage adapters read them back (`{...emptyCLPS, ...stored}`): setting only
    /// `readUserFields` makes finds go through that field, and creates master-only.
    static func completed(_ permissions: JSON) -> JSON {
        guard case .object(var entries) = permissions else { return permissions }
        for operation in ["find", "count", "get", "create", "update", "delete", "addField", "protectedFields"]
        where entries[operation] == nil {
            entries[operation] = [:]
        }
        return .object(entries)
    }

    /// The `GET /schemas/<Class>` form.
    var json: JSON {
        var allFields: [String: JSON] = [:]
        for (name, type) in ClassSchema.defaultFields.merging(fields, uniquingKeysWith: { _, custom in custom }) {
            allFields[name] = FieldOptions.declaration(type, options: fieldOptions[name])
        }
        // Parse lists `password` among `_User`'s fields; its hash lives elsewhere and is never returned.
        if className == "_User" { allFields["password"] = FieldType.string.schemaJSON }
        var result: [String: JSON] = [
            "className": .string(className),
            "fields": .object(allFields),
            "classLevelPermissions": classLevelPermissions ?? ClassSchema.openPermissions,
        ]
        // Parse leaves `indexes` out when the class has none of its own.
        if case .object(let custom)? = indexes, !custom.isEmpty { result["indexes"] = .object(custom) }
        return .object(result)
    }
}
