import RoostCore

/// One `_Session`: who holds it and until when. The token itself is never stored, only its SHA-256.
struct SessionRecord {
    let objectId: String
    let userId: String
    let createdAt: ParseDate
    let updatedAt: ParseDate
    let expiresAt: ParseDate
    let installationId: String?
    let createdWith: JSON
    /// The client's own fields (`POST /sessions`, `PUT /sessions/<id>`).
    let fields: [String: JSON]

    init(_ row: [SQLValue]) {
        objectId = row[0].text ?? ""
        userId = row[1].text ?? ""
        createdAt = ParseDate(millisecondsSince1970: row[2].integer ?? 0)
        updatedAt = ParseDate(millisecondsSince1970: row[3].integer ?? 0)
        expiresAt = ParseDate(millisecondsSince1970: row[4].integer ?? 0)
        installationId = row[5].text
        createdWith = row[6].text.flatMap { try? JSONParser.parse($0) } ?? [:]
        fields = row[7].text.flatMap { try? JSONParser.parse($0) }?.objectValue ?? [:]
    }

    /// The `_Session` object as Parse Server answers it (no `ACL`, no legacy `restricted`); `token` only
    /// when the caller presented it (tokens are stored hashed).
    func wireJSON(token: String?) -> JSON {
        var result = fields
        result.merge([
            "objectId": .string(objectId), "createdAt": .string(createdAt.iso), "updatedAt": .string(updatedAt.iso),
            "user": WireValue.pointer("_User", userId), "expiresAt": WireValue.encode(expiresAt),
            "createdWith": createdWith,
        ]) { _, server in server }
        if let installationId { result["installationId"] = .string(installationId) }
        if let token { result["sessionToken"] = .string(token) }
        return .object(result)
    }
}

/// The `_session` table.
enum SessionStore {
    private static let columns = "objectId, userId, createdAt, updatedAt, expiresAt, installationId, createdWith, fields"

    /// Starts a session for `userId`; returns its token (shown to the client once) and record.
    /// - Parameter fields: the client's own fields, already validated.
    static func create(userId: String, installationId: String?, createdWith: JSON, fields: [String: JSON] = [:],
                       lifetimeSeconds: Int, in db: any SQLConnection) throws -> (token: String, session: SessionRecord) {
        let token = try SessionToken.generate()
        let now = ParseDate.now()
        let expires = ParseDate(millisecondsSince1970: now.millisecondsSince1970 + Int64(lifetimeSeconds) * 1000)
        let objectId = try SecureRandom.objectId()
        try db.execute(
            "INSERT INTO _session (objectId, tokenHash, userId, createdAt, updatedAt, expiresAt, installationId, createdWith, fields) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [.text(objectId), .text(SessionToken.digest(token)), .text(userId), .integer(now.millisecondsSince1970),
             .integer(now.millisecondsSince1970), .integer(expires.millisecondsSince1970),
             installationId.map(SQLValue.text) ?? .null, .text(createdWith.jsonText), .text(JSON.object(fields).jsonText)])
        let session = SessionRecord([.text(objectId), .text(userId), .integer(now.millisecondsSince1970),
                                     .integer(now.millisecondsSince1970), .integer(expires.millisecondsSince1970),
                                     installationId.map(SQLValue.text) ?? .null, .text(createdWith.jsonText),
                                     .text(JSON.object(fields).jsonText)])
        return (token, session)
    }

    /// The session whose token has this SHA-256 digest (`SessionToken.digest`).
    static func find(digest: String, in db: some SQLQuerying) throws -> SessionRecord? {
        try db.fetchRows("SELECT \(columns) FROM _session WHERE tokenHash = ?", [.text(digest)], cacheable: true)
            .first.map(SessionRecord.init)
    }

    static func find(objectId: String, in db: some SQLQuerying) throws -> SessionRecord? {
        try db.fetchRows("SELECT \(columns) FROM _session WHERE objectId = ?", [.text(objectId)], cacheable: true)
            .first.map(SessionRecord.init)
    }

    /// Stores a session's changed owner, expiry, `createdWith` and fields; returns the new `updatedAt`.
    static func update(_ session: SessionRecord, userId: String, expiresAt: ParseDate, createdWith: JSON,
                       fields: [String: JSON], in db: any SQLConnection) throws -> ParseDate {
        if userId != session.userId || expiresAt != session.expiresAt { db.changedAuthentication = true }
        let now = max(ParseDate.now(), session.updatedAt)
        try db.execute(
            "UPDATE _session SET userId = ?, expiresAt = ?, createdWith = ?, fields = ?, updatedAt = ? WHERE objectId = ?",
            [.text(userId), .integer(expiresAt.millisecondsSince1970), .text(createdWith.jsonText),
             .text(JSON.object(fields).jsonText), .integer(now.millisecondsSince1970), .text(session.objectId)])
        return now
    }

    static func delete(objectId: String, in db: any SQLConnection) throws {
        db.changedAuthentication = true
        try db.execute("DELETE FROM _session WHERE objectId = ?", [.text(objectId)])
    }

    static func deleteAll(userId: String, in db: any SQLConnection) throws {
        db.changedAuthentication = true
        try db.execute("DELETE FROM _session WHERE userId = ?", [.text(userId)])
    }

    /// Logging in again from the same installation replaces that installation's older sessions, as in Parse.
    static func deleteAll(userId: String, installationId: String, in db: any SQLConnection) throws {
        db.changedAuthentication = true
        try db.execute("DELETE FROM _session WHERE userId = ? AND installationId = ?", [.text(userId), .text(installationId)])
    }
}
