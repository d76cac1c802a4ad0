import RoostCore

/// `GET/POST /login` and `POST /logout`.
enum LogIn {
    /// Answers the whole user plus a new `sessionToken`. A wrong password and an unknown user get the
    /// same 101 after the same hashing work, so the reply does not tell which it was.
    static func handle(_ parameters: [String: JSON], context: RequestContext) throws -> APIResponse {
        let name = parameters["username"]?.stringValue ?? parameters["email"]?.stringValue
        guard let name, !name.isEmpty else { throw ParseError(.usernameMissing, "username/email is required.") }
        guard let password = parameters["password"] else { throw ParseError(.passwordMissing, "password is required.") }
        let invalid = ParseError(.objectNotFound, "Invalid username/password.")
        let hasher = context.config.passwordHasher

        let found = try context.read { db -> (StoredObject, String)? in
            guard let schema = try SchemaStore.load(UserStore.className, in: db),
                let user = try UserStore.find(loginName: name, schema: schema, in: db)?.decoded(),
                let hash = try UserStore.passwordHash(of: user.objectId, in: db)
            else { return nil }
            return (user, hash)
        }
        guard let (user, hash) = found, let text = password.stringValue else {
            hasher.simulateVerification()
            throw invalid
        }
        guard hasher.verify(text, against: hash) else { throw invalid }
        let token = try context.write { db in
            try UserWriter.startSession(for: user.objectId, action: "login", provider: "password", context: context, in: db)
        }
        return APIResponse(body: UserStore.wireJSON(user, viewerId: user.objectId, isMaster: false, sessionToken: token))
    }

    /// Deletes the caller's session; `{}` also without one.
    static func logOut(context: RequestContext) throws -> APIResponse {
        if let user = context.user {
            try context.write { db in try SessionStore.delete(objectId: user.sessionId, in: db) }
        }
        return APIResponse(body: [:])
    }
}
