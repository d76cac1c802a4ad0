import RoostCore

/// `/sessions`: a user sees and deletes only their own sessions (the master key, all of them).
/// Tokens are stored hashed, so only the session of the presented token shows its `sessionToken`.
enum SessionRoutes {
    static func register(in router: inout Router) {
        router.add("GET", "sessions/me") { _, context, _ in
            let caller = try requireUser(context)
            guard let session = try context.read({ db in try SessionStore.find(objectId: caller.sessionId, in: db) }) else {
                throw ParseError(.invalidSessionToken, "Invalid session token")
            }
            return APIResponse(body: session.wireJSON(token: caller.sessionToken))
        }
        router.add("GET", "sessions") { _, context, _ in
            let caller = context.isMaster ? context.user : try requireUser(context)
            let sessions = try context.read { db in
                context.isMaster ? try SessionStore.all(in: db) : try SessionStore.all(userId: caller!.id, in: db)
            }
            let results = sessions.map { $0.wireJSON(token: $0.objectId == caller?.sessionId ? caller?.sessionToken : nil) }
            return APIResponse(body: ["results": .array(results)])
        }
        router.add("GET", "sessions/:objectId") { _, context, parameters in
            let session = try visibleSession(parameters["objectId"], context: context)
            let token = session.objectId == context.user?.sessionId ? context.user?.sessionToken : nil
            return APIResponse(body: session.wireJSON(token: token))
        }
        router.add("DELETE", "sessions/:objectId") { _, context, parameters in
            // Parse's `rest.del` words a missing session this way.
            let session = try visibleSession(parameters["objectId"], context: context,
                                             missing: ParseError(.objectNotFound, "Object not found for delete."))
            try context.write { db in try SessionStore.delete(objectId: session.objectId, in: db) }
            return APIResponse(body: [:])
        }
    }

    private static func requireUser(_ context: RequestContext) throws -> AuthenticatedUser {
        guard let user = context.user else { throw ParseError(.invalidSessionToken, "Session token required.") }
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
