import RoostCore

/// One `_Session`: who holds it and until when. The token itself is never stored, only its SHA-256.
struct SessionRecord {
    let objectId: String
    let userId: String
    let createdAt: ParseDate
    let updatedAt: ParseDate
    /// As stored: `neverExpires` for a session started with `--no-expire-inactive-sessions`.
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

    /// The expiry stored for a session that never expires: the last millisecond of year 9999 (a date every reader of
    /// the column can still format), shown as no `expiresAt` at all, as Parse's.
    static let neverExpires = ParseDate(millisecondsSince1970: 253_402_300_799_999)

    /// The `_Session` object as Parse Server answers it (no `ACL`, no legacy `restricted`); `token` only
    /// when the caller presented it (tokens are stored hashed).
    func wireJSON(token: String?) -> JSON {
        var result = fields
        result.merge([
            "objectId": .string(objectId), "createdAt": .string(createdAt.iso), "updatedAt": .string(updatedAt.iso),
            "user": WireValue.pointer("_User", userId), "createdWith": createdWith,
        ]) { _, server in server }
        if expiresAt < Self.neverExpires { result["expiresAt"] = WireValue.encode(expiresAt) }
        if let installationId { result["installationId"] = .string(installationId) }
        if let token { result["sessionToken"] = .string(token) }
        return .object(result)
    }
}

/// The `_session` table. Its writes are LiveQuery changes of `_Session`, numbered and logged in the write's own
/// transaction like object writes (`ChangeRecorder`), so they are published after the commit, in commit order, and
/// replayed by `seq`. Each version is recorded as the `_session_objects` view shows it, which has no token: tokens
/// are stored hashed, and an event must never carry one anyway (it would hand the session to whoever receives it).
enum SessionStore {
    /// The class sessions are served and published as.
    static let className = "_Session"
    private static let columns = "objectId, userId, createdAt, updatedAt, expiresAt, installationId, createdWith, fields"

    /// Starts a session for `userId`; returns its token (shown to the client once) and record.
    /// - Parameters:
    ///   - fields: the client's own fields, already validated.
    ///   - lifetimeSeconds: `nil` for a session that never expires (`SessionRecord.neverExpires`).
    static func create(userId: String, installationId: String?, createdWith: JSON, fields: [String: JSON] = [:],
                       lifetimeSeconds: Int?, in db: any SQLConnection) throws -> (token: String, session: SessionRecord) {
        let token = try SessionToken.generate()
        let now = ParseDate.now()
        let expires = lifetimeSeconds.map { ParseDate(millisecondsSince1970: now.millisecondsSince1970 + Int64($0) * 1000) }
            ?? SessionRecord.neverExpires
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
        if let recorder = db.recorder(for: className) {
            for created in try versions(where: "objectId = ?", [.text(objectId)], in: db) {
                try recorder.record(className, before: nil, after: created, in: db)
            }
        }
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
        let recorder = db.recorder(for: className)
        let before = recorder != nil ? try versions(where: "objectId = ?", [.text(session.objectId)], in: db).first : nil
        try db.execute(
            "UPDATE _session SET userId = ?, expiresAt = ?, createdWith = ?, fields = ?, updatedAt = ? WHERE objectId = ?",
            [.text(userId), .integer(expiresAt.millisecondsSince1970), .text(createdWith.jsonText),
             .text(JSON.object(fields).jsonText), .integer(now.millisecondsSince1970), .text(session.objectId)])
        if let recorder, let before, let after = try versions(where: "objectId = ?", [.text(session.objectId)], in: db).first {
            try recorder.record(className, before: before, after: after, in: db)
        }
        return now
    }

    static func delete(objectId: String, in db: any SQLConnection) throws {
        try delete(where: "objectId = ?", [.text(objectId)], in: db)
    }

    /// A user's sessions: at log-out everywhere, a password change or reset, and the user's deletion.
    static func deleteAll(userId: String, in db: any SQLConnection) throws {
        try delete(where: "userId = ?", [.text(userId)], in: db)
    }

    /// Logging in again from the same installation replaces that installation's older sessions, as in Parse.
    static func deleteAll(userId: String, installationId: String, in db: any SQLConnection) throws {
        try delete(where: "userId = ? AND installationId = ?", [.text(userId), .text(installationId)], in: db)
    }

    /// Deletes the sessions `condition` (one of this file's constants) selects, each recorded as a LiveQuery delete.
    private static func delete(where condition: String, _ arguments: [SQLValue], in db: any SQLConnection) throws {
        db.changedAuthentication = true
        let recorder = db.recorder(for: className)
        let deleted = recorder != nil ? try versions(where: condition, arguments, in: db) : []
        try db.execute("DELETE FROM _session WHERE \(condition)", arguments)
        for version in deleted { try recorder?.record(className, before: version, after: nil, in: db) }
    }

    /// The sessions `condition` selects as `_Session` objects (the view's columns, no token), oldest first.
    private static func versions(where condition: String, _ arguments: [SQLValue], in db: any SQLConnection) throws -> [StoredRow] {
        try db.fetchRows("SELECT objectId, createdAt, updatedAt, acl, data FROM _session_objects "
                            + "WHERE objectId IN (SELECT objectId FROM _session WHERE \(condition)) ORDER BY createdAt, objectId",
                         arguments, cacheable: true).map { StoredRow($0, className: className) }
    }
}
