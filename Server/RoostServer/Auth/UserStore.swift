import RoostCore

/// Storage of `_User` objects (an ordinary class table with unique indexes) and their password
/// hashes (the `_password` table, out of reach of every object query).
enum UserStore {
    static let className = "_User"
    static let defaultFields: [String: FieldType] = [
        "username": .string, "email": .string, "emailVerified": .boolean, "authData": .object,
    ]

    /// The `_User` schema, created with its indexes on first use. Usernames and emails are unique
    /// ignoring case, enforced by the database as well as checked first for Parse's error codes.
    static func schema(in db: any SQLConnection) throws -> ClassSchema {
        if let schema = try SchemaStore.load(className, in: db) { return schema }
        let schema = try SchemaStore.create(className, fields: defaultFields, classLevelPermissions: nil, in: db)
        let table = schema.tableName
        let prefix = "c\(schema.id)"
        try db.execute("CREATE UNIQUE INDEX \"\(prefix)_username\" ON \(table) (lower(json_extract(data, '$.username')))", cacheable: false)
        try db.execute("CREATE UNIQUE INDEX \"\(prefix)_email\" ON \(table) (lower(json_extract(data, '$.email')))", cacheable: false)
        try db.execute("CREATE INDEX \"\(prefix)_anonymous\" ON \(table) (json_extract(data, '$.authData.anonymous.id'))", cacheable: false)
        return schema
    }

    /// The user with this objectId, if there is one.
    static func fetch(_ userId: String, in db: some SQLQuerying) throws -> StoredObject? {
        guard let schema = try SchemaStore.load(className, in: db) else { return nil }
        return try ObjectStore.fetch(userId, from: schema, in: db)?.decoded()
    }

    /// Whether another user (not `excluding`) has this username, ignoring case.
    static func isUsernameTaken(_ username: String, excluding userId: String?, schema: ClassSchema, in db: some SQLQuerying) throws -> Bool {
        try !db.fetchRows(
            "SELECT objectId FROM \(schema.tableName) WHERE lower(json_extract(data, '$.username')) = lower(?) AND objectId != ?",
            [.text(username), .text(userId ?? "")], cacheable: true).isEmpty
    }

    /// Whether another user (not `excluding`) has this email, ignoring case.
    static func isEmailTaken(_ email: String, excluding userId: String?, schema: ClassSchema, in db: some SQLQuerying) throws -> Bool {
        try !db.fetchRows(
            "SELECT objectId FROM \(schema.tableName) WHERE lower(json_extract(data, '$.email')) = lower(?) AND objectId != ?",
            [.text(email), .text(userId ?? "")], cacheable: true).isEmpty
    }

    /// The user to log in as: `name` matched exactly against usernames, then against emails (as Parse).
    /// The user logging in: by `username` (which may also be an email), by `email`, or by both (both must match).
    /// Matching is exact; the `lower(...)` term only lets the case-insensitive unique index find the row.
    static func find(username: String?, email: String?, schema: ClassSchema, in db: some SQLQuerying) throws -> StoredRow? {
        func find(_ key: String, _ value: String) throws -> StoredRow? {
            try db.fetchRows(
                "SELECT objectId, createdAt, updatedAt, acl, data FROM \(schema.tableName) WHERE lower(json_extract(data, '$.\(key)')) = lower(?) AND json_extract(data, '$.\(key)') = ?",
                [.text(value), .text(value)], cacheable: true).first.map { StoredRow($0, className: className) }
        }
        switch (username, email) {
        case (let username?, let email?):
            guard let row = try find("username", username), try find("email", email)?.objectId == row.objectId else { return nil }
            return row
        case (let username?, nil): return try find("username", username) ?? find("email", username)
        case (nil, let email?): return try find("email", email)
        case (nil, nil): return nil
        }
    }

    /// The user linked to an anonymous id.
    static func find(anonymousId id: String, schema: ClassSchema, in db: some SQLQuerying) throws -> StoredRow? {
        try db.fetchRows(
            "SELECT objectId, createdAt, updatedAt, acl, data FROM \(schema.tableName) WHERE json_extract(data, '$.authData.anonymous.id') = ?"
                // One locked out by the master key (an empty ACL) comes last: `SignUp` signs up another with its id.
                + " ORDER BY acl IS NOT DISTINCT FROM '{}'",
            [.text(id)], cacheable: true).first.map { StoredRow($0, className: className) }
    }

    static func exists(_ userId: String, in db: some SQLQuerying) throws -> Bool {
        guard let schema = try SchemaStore.load(className, in: db) else { return false }
        return try ObjectStore.fetch(userId, from: schema, in: db) != nil
    }

    static func passwordHash(of userId: String, in db: some SQLQuerying) throws -> String? {
        try db.fetchRows("SELECT hash FROM _password WHERE userId = ?", [.text(userId)], cacheable: true).first?.first?.text
    }

    static func setPasswordHash(_ hash: String, of userId: String, in db: any SQLConnection) throws {
        try db.execute("INSERT INTO _password (userId, hash) VALUES (?, ?) ON CONFLICT (userId) DO UPDATE SET hash = excluded.hash",
                       [.text(userId), .text(hash)])
    }

    static func deletePassword(of userId: String, in db: any SQLConnection) throws {
        try db.execute("DELETE FROM _password WHERE userId = ?", [.text(userId)])
    }

    /// What only the user and the master key see, whatever the class's `protectedFields` say (Parse's
    /// `filterSensitiveData`); `email` is in the `*` entry of `_User`'s protected fields (`ClassPermissions`).
    static let authDataField = "authData"
    /// The fields `wireJSON` shows the user and the master key only.
    static let privateFields: Set<String> = ["email", authDataField]

    /// A user as `viewer` may see it: others never see `email` or `authData`.
    static func wireJSON(_ user: StoredObject, viewerId: String?, isMaster: Bool, sessionToken: String? = nil) -> JSON {
        let isSelf = isMaster || viewerId == user.objectId
        var json = user.wireJSON(excluding: isSelf ? [] : privateFields)
        if let sessionToken, case .object(var members) = json {
            members["sessionToken"] = .string(sessionToken)
            json = .object(members)
        }
        return json
    }
}

extension UserStore {
    /// The user with exactly this username (no fallback to emails, as a log-in has).
    static func find(exactUsername username: String, schema: ClassSchema, in db: some SQLQuerying) throws -> StoredRow? {
        try db.fetchRows(
            "SELECT objectId, createdAt, updatedAt, acl, data FROM \(schema.tableName) WHERE lower(json_extract(data, '$.username')) = lower(?) AND json_extract(data, '$.username') = ?",
            [.text(username), .text(username)], cacheable: true).first.map { StoredRow($0, className: className) }
    }

    /// The user a password reset for `email` is for: the one with this email, else the one with this
    /// username and no email (Parse's `setPasswordResetToken` query).
    static func find(resetEmail email: String, schema: ClassSchema, in db: some SQLQuerying) throws -> StoredRow? {
        if let row = try find(username: nil, email: email, schema: schema, in: db) { return row }
        guard let row = try find(exactUsername: email, schema: schema, in: db) else { return nil }
        let user = try row.decoded()
        return user.fields["email"] == nil || user.fields["email"] == .null ? row : nil
    }
}
