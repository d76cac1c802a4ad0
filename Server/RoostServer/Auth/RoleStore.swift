import RoostCore

/// `_Role` objects: a unique `name`, a `users` relation and a `roles` relation. A user holds a role
/// directly (in its `users`) or through a child role: if role B is in role A's `roles`, B's users
/// hold A too. Cycles end because the recursive query keeps each role once (`UNION`).
enum RoleStore {
    static let className = "_Role"
    static let defaultFields: [String: FieldType] = [
        "name": .string, "users": .relation(targetClass: UserStore.className), "roles": .relation(targetClass: className),
    ]

    /// The `_Role` schema, created with a unique index on `name` on first use.
    static func schema(in db: any SQLConnection) throws -> ClassSchema {
        if let schema = try SchemaStore.load(className, in: db) { return schema }
        let schema = try SchemaStore.create(className, fields: defaultFields, classLevelPermissions: nil, in: db)
        try db.execute("CREATE UNIQUE INDEX \"c\(schema.id)_name\" ON \(schema.tableName) (json_extract(data, '$.name'))", cacheable: false)
        return schema
    }

    /// The names of every role `userId` holds, directly or inherited.
    static func roleNames(of userId: String, in db: some SQLQuerying) throws -> [String] {
        guard let schema = try SchemaStore.load(className, in: db) else { return [] }
        let rows = try db.fetchRows("""
            WITH RECURSIVE held(id) AS (
                SELECT owningId FROM _join WHERE owningClass = '_Role' AND field = 'users' AND relatedId = ?
                UNION
                SELECT j.owningId FROM _join AS j JOIN held ON j.relatedId = held.id
                WHERE j.owningClass = '_Role' AND j.field = 'roles'
            )
            SELECT json_extract(data, '$.name') FROM \(schema.tableName) WHERE objectId IN (SELECT id FROM held)
            """, [.text(userId)], cacheable: true)
        return rows.compactMap { $0.first?.text }
    }
}

/// The rules `_Role` adds to the generic save path: a name (the database keeps it unique: 137) and an
/// explicit ACL on creation; an update may not delete the name (Parse's `validateRequiredColumns`). The
/// name's characters, and that it never changes, are checked by the SDKs only: Parse Server accepts any
/// non-empty name and a rename, and so does Roost (`ObjectWriter.update` then drops the cached roles).
struct RoleRules: SaveRules {
    func check(_ changes: ObjectWriter.Changes, existing: StoredObject?) throws {
        let name = changes.operations["name"]
        if existing != nil {
            if case .delete? = name { throw ParseError(.incorrectType, "name is required.") }
            return
        }
        guard case .set(.string(let text))? = name, !text.isEmpty else { throw ParseError(.incorrectType, "name is required.") }
        guard changes.acl != nil else { throw ParseError(.incorrectType, "ACL is required.") }
    }
}

/// Extra checks a system class adds to `ObjectWriter`'s save path.
protocol SaveRules {
    /// - Parameter existing: the stored object on update, `nil` on create.
    func check(_ changes: ObjectWriter.Changes, existing: StoredObject?) throws
}
