import RoostCore

/// `POST /sessions`, `PUT /sessions/<id>` and `POST /upgradeToRevocableSession`, by Parse Server's
/// rules (`RestWrite.handleSession`, `RestWrite.createSession`, `SessionsRouter`).
///
/// One deliberate difference: Parse copies every body field onto a new session, `sessionToken`
/// included, so a client could choose its own token; here the server's fields cannot be set by a
/// body (105), as Parse already refuses on update.
enum SessionEdit {
    /// `POST /sessions`: another session for the caller (for the body's `user`, with the master key),
    /// carrying the body's own fields. 201 with the session and its token; Parse's reply has no
    /// `createdAt` and neither has this one.
    static func create(_ body: [String: JSON], context: RequestContext) throws -> APIResponse {
        let userId: String
        if let user = context.user {
            userId = user.id
        } else if context.isMaster, let id = userPointer(body["user"]) {
            userId = id
        } else {
            throw ParseError(.invalidSessionToken, "Session token required.")
        }
        var body = body
        body["objectId"] = nil  // Parse skips both when copying the body onto the session.
        body["user"] = nil
        let installationId = try string(body.removeValue(forKey: "installationId"), field: "installationId")
        let fields = try ObjectWriter.apply(try customOperations(body, isCreate: true), to: nil)
        let created = try context.write { db -> (token: String, session: SessionRecord) in
            guard try UserStore.exists(userId, in: db) else { throw ParseError(.objectNotFound, "Object not found.") }
            return try SessionStore.create(userId: userId, installationId: installationId, createdWith: ["action": "create"],
                                           fields: fields, lifetimeSeconds: context.config.sessionLifetimeSeconds, in: db)
        }
        return APIResponse(
            status: 201, body: reply(created.session, token: created.token, includingId: true),
            headers: [("Location", "\(context.publicURL)/classes/_Session/\(created.session.objectId)")])
    }

    /// `PUT /sessions/<id>`: the caller's own session (any, with the master key, which alone may change
    /// `expiresAt`, `createdWith` and the owner); `{updatedAt}`.
    static func update(_ objectId: String, body: [String: JSON], context: RequestContext) throws -> APIResponse {
        guard context.isMaster || context.user != nil else { throw ParseError(.invalidSessionToken, "Session token required.") }
        // Parse's `handleSession` refuses these without a message: `{"code":105}`.
        for key in ["installationId", "sessionToken"] where body[key] != nil { throw ParseError(.invalidKeyName, "") }
        // A client could otherwise keep its own session alive forever; recent Parse refuses both too.
        for key in ["expiresAt", "createdWith"] where body[key] != nil && !context.isMaster {
            throw ParseError(.invalidKeyName, "\(key) of a session is set by the server.")
        }
        var body = body
        body["objectId"] = nil
        let newUserId = try body.removeValue(forKey: "user").map { value -> String in
            guard let id = userPointer(value) else { throw mismatch("user", expected: .pointer(targetClass: "_User"), value) }
            guard context.isMaster || id == context.user?.id else { throw ParseError(.invalidKeyName, "") }  // As above.
            return id
        }
        let newExpiry = try body.removeValue(forKey: "expiresAt").map { value -> ParseDate in
            guard case .object(let members) = value, members["__type"] == "Date",
                let date = members["iso"]?.stringValue.flatMap(ParseDate.init(iso:))
            else { throw mismatch("expiresAt", expected: .date, value) }
            return date
        }
        let newCreatedWith = try body.removeValue(forKey: "createdWith").map { value -> JSON in
            guard case .object = value else { throw mismatch("createdWith", expected: .object, value) }
            return value
        }
        let operations = try customOperations(body, isCreate: false)
        let (updatedAt, fields) = try context.write { db -> (ParseDate, [String: JSON]) in
            guard let session = try SessionStore.find(objectId: objectId, in: db),
                context.isMaster || session.userId == context.user?.id
            else { throw ObjectWriter.objectNotFound }
            let fields = try ObjectWriter.apply(operations, to: session.fields)
            if let newUserId, newUserId != session.userId, !(try UserStore.exists(newUserId, in: db)) {
                throw ParseError(.objectNotFound, "Object not found.")
            }
            let updatedAt = try SessionStore.update(
                session, userId: newUserId ?? session.userId, expiresAt: newExpiry ?? session.expiresAt,
                createdWith: newCreatedWith ?? session.createdWith, fields: fields, in: db)
            return (updatedAt, fields)
        }
        var response: [String: JSON] = ["updatedAt": .string(updatedAt.iso)]
        for (key, operation) in operations where operation.echoesResult { response[key] = fields[key] ?? .null }
        return APIResponse(body: .object(response))
    }

    /// `POST /upgradeToRevocableSession`: exchanges a legacy token for a revocable one. Roost only
    /// issues revocable (`r:`) tokens, so this starts one more session for the caller, as Parse does
    /// when called with a revocable token. The reply is the session without `objectId`, as Parse's.
    static func upgrade(context: RequestContext) throws -> APIResponse {
        guard let user = context.user else { throw ParseError(.objectNotFound, "invalid session") }
        let created = try context.write { db in
            try SessionStore.create(userId: user.id, installationId: context.installationId, createdWith: ["action": "upgrade"],
                                    lifetimeSeconds: context.config.sessionLifetimeSeconds, in: db)
        }
        return APIResponse(body: reply(created.session, token: created.token, includingId: false))
    }

    /// The session as `RestWrite.createSession` describes it: token, user, createdWith, expiresAt,
    /// installationId and the client's fields (no dates of creation or update).
    private static func reply(_ session: SessionRecord, token: String, includingId: Bool) -> JSON {
        guard case .object(var members) = session.wireJSON(token: token) else { return [:] }
        members["createdAt"] = nil
        members["updatedAt"] = nil
        if !includingId { members["objectId"] = nil }
        return .object(members)
    }

    /// The body's own fields as operations: ordinary field names and values (operations allowed);
    /// the ACL and the server's fields are refused.
    private static func customOperations(_ body: [String: JSON], isCreate: Bool) throws -> [String: FieldOperation] {
        if body["ACL"] != nil { throw ParseError(.invalidKeyName, "Cannot set ACL on a Session.") }
        for key in ["sessionToken", "createdWith", "expiresAt"] where body[key] != nil {
            throw ParseError(.invalidKeyName, "\(key) of a session is set by the server.")
        }
        let changes = try ObjectWriter.decode(body, isCreate: isCreate)
        if changes.operations.values.contains(where: { if case .relation = $0 { true } else { false } }) {
            throw ParseError(.incorrectType, "Sessions cannot hold relations.")
        }
        return changes.operations
    }

    private static func userPointer(_ value: JSON?) -> String? {
        guard case .object(let members)? = value, members["__type"] == "Pointer", members["className"] == "_User" else { return nil }
        return members["objectId"]?.stringValue
    }

    private static func string(_ value: JSON?, field: String) throws -> String? {
        guard let value, value != .null else { return nil }
        guard let text = value.stringValue else { throw mismatch(field, expected: .string, value) }
        return text
    }

    /// Parse's schema-mismatch error (111) for a server field given a value of another type.
    private static func mismatch(_ field: String, expected: FieldType, _ value: JSON) -> ParseError {
        let given = (try? WireValue.validate(value).0)??.displayName ?? "invalid"
        return ParseError(.incorrectType, "schema mismatch for _Session.\(field); expected \(expected.displayName) but got \(given)")
    }
}
