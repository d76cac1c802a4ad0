import RoostCore

/// `/sessions`: a user sees, changes and deletes only their own sessions (the master key, all of them).
/// Tokens are stored hashed, so only the session of the presented token shows its `sessionToken`.
enum SessionRoutes {
    static func register(in router: inout Router) {
        // Parse's `handleMe` runs without its session check: it finds the token's session, expired or not,
        // and words an unknown token its own way.
        router.add("GET", "sessions/me") { _, context, _ in
            guard let token = context.uncheckedSessionToken ?? context.user?.sessionToken else {
                throw ParseError(.invalidSessionToken, "Session token required.")
            }
            guard let session = try context.read({ db in try SessionStore.find(digest: SessionToken.digest(token), in: db) }) else {
                throw ParseError(.invalidSessionToken, "Session token not found.")
            }
            return APIResponse(body: session.wireJSON(token: token))
        }
        router.add("POST", "upgradeToRevocableSession") { _, context, _ in try SessionEdit.upgrade(context: context) }
        // Parse also serves sessions as the `_Session` class.
        for base in ["sessions", "classes/_Session"] {
            router.add("GET", base) { request, context, _ in try find(request, context: context) }
            router.add("GET", base + "/:objectId") { _, context, parameters in
                let session = try visibleSession(parameters["objectId"], context: context)
                let token = session.objectId == context.user?.sessionId ? context.user?.sessionToken : nil
                return APIResponse(body: session.wireJSON(token: token))
            }
            router.add("POST", base) { request, context, _ in try SessionEdit.create(try request.bodyObject(), context: context) }
            // `PUT /sessions/me` (in the REST guide) has no route in Parse Server either: it looks for a session "me", 101.
            router.add("PUT", base + "/:objectId") { request, context, parameters in
                try SessionEdit.update(parameters["objectId"], body: try request.bodyObject(), context: context)
            }
            router.add("DELETE", base + "/:objectId") { _, context, parameters in
                // Parse's `rest.del` words a missing session this way.
                let session = try visibleSession(parameters["objectId"], context: context,
                                                 missing: ParseError(.objectNotFound, "Object not found for delete."))
                try context.write { db in try SessionStore.delete(objectId: session.objectId, in: db) }
                return APIResponse(body: [:])
            }
        }
    }

    /// A Parse query over the caller's sessions (all sessions for the master key).
    private static func find(_ request: APIRequest, context: RequestContext) throws -> APIResponse {
        let caller = context.isMaster ? context.user : try requireUser(context)
        var parameters = try request.parameters()
        // Tokens are stored hashed: `where: {sessionToken: <token>}` (how Cloud Code finds a token's session) is a
        // lookup by the token's digest, and the session found shows the token it was found by.
        var wanted: String?
        if case .object(var whereClause)? = parameters["where"], case .string(let token)? = whereClause["sessionToken"] {
            whereClause.removeValue(forKey: "sessionToken")
            parameters["where"] = .object(whereClause)
            wanted = token
        }
        var options = try QueryOptions.parse(parameters)
        var filters: [SQLFragment] = []
        if !context.isMaster, let caller { filters.append(SQLFragment(sql: "userId = ?", arguments: [.text(caller.id)])) }
        if let wanted {
            filters.append(SQLFragment(sql: "objectId IN (SELECT objectId FROM _session WHERE tokenHash = ?)",
                                       arguments: [.text(SessionToken.digest(wanted))]))
        }
        if !filters.isEmpty {
            options.find.rowFilter = SQLFragment(sql: filters.map(\.sql).joined(separator: " AND "), arguments: filters.flatMap(\.arguments))
        }
        options.find.authorizeSubquery = { _, _, _ in throw ParseError(.invalidQuery, "Subqueries are not supported on sessions.") }
        return try context.read { db in
            try ClassRoutes.answer(options, in: sessionSchema, context: context, db: db) { row in
                let session = try options.render(row)
                // Only the tokens presented are known.
                if let wanted { return try session.setting("sessionToken", to: .string(wanted)) }
                guard let caller, row.objectId == caller.sessionId else { return session }
                return try session.setting("sessionToken", to: .string(caller.sessionToken))
            }
        }
    }

    /// `_Session` as a read-only class over the `_session_objects` view.
    static let sessionSchema = ClassSchema(
        id: 0, className: "_Session",
        fields: ["user": .pointer(targetClass: UserStore.className), "createdWith": .object, "expiresAt": .date, "installationId": .string],
        classLevelPermissions: nil, indexes: nil, view: "_session_objects")

    /// 209 without a session. Parse words it by where it refuses: a read or delete goes through its
    /// `RestQuery` ("Invalid session token"), `/sessions/me` and writes check first ("Session token required.").
    private static func requireUser(_ context: RequestContext, refusal: String = "Invalid session token") throws -> AuthenticatedUser {
        guard let user = context.user else { throw ParseError(.invalidSessionToken, refusal) }
        return user
    }

    /// A session of the caller's (any, for the master key); others are answered as missing.
    private static func visibleSession(_ objectId: String, context: RequestContext,
                                       missing: ParseError = ObjectWriter.objectNotFound) throws -> SessionRecord {
        if !context.isMaster { _ = try requireUser(context) }
        guard let session = try context.read({ db in try SessionStore.find(objectId: objectId, in: db) }),
            context.isMaster || session.userId == context.user?.id
        else { throw missing }
        return session
    }
}
