import RoostCore

/// `GET/POST /login`, `POST /logout`, `/verifyPassword` and `POST /loginAs`.
enum LogIn {
    /// Answers the whole user plus a new `sessionToken`. A wrong password and an unknown user get the
    /// same 101 after the same hashing work, so the reply does not tell which it was.
    static func handle(_ request: APIRequest, context: RequestContext) throws -> APIResponse {
        let (user, hash, password) = try authenticate(request, context: context)
        // Parse's `beforeLogin`, once the password is checked and before the session exists; outside the write.
        let triggers = try Triggers(UserStore.className, context: context)
        try triggers.beforeLogin(UserStore.wireJSON(user, viewerId: user.objectId, isMaster: false))
        // Hashed with older parameters (`--password-iterations` changed): store it again with the current ones.
        let upgraded = context.config.passwordHasher.needsRehash(hash) ? try context.hashPassword(password) : nil
        let token = try context.write { db -> String in
            if let upgraded { try UserStore.setPasswordHash(upgraded, of: user.objectId, in: db) }
            try PasswordRecord.checkAge(of: user.objectId, policy: context.config.passwordPolicy, in: db)
            return try UserWriter.startSession(for: user.objectId, action: "login", provider: "password", context: context, in: db)
        }
        triggers.afterLogin(UserStore.wireJSON(user, viewerId: user.objectId, isMaster: false))
        return APIResponse(body: try UserRoutes.withFileURLs(
            UserStore.wireJSON(user, viewerId: user.objectId, isMaster: false, sessionToken: token), context: context))
    }

    /// `GET/POST /verifyPassword`: the credentials are checked as for a log-in, and the user is
    /// answered without starting a session (Parse's `handleVerifyPassword`).
    static func verifyPassword(_ request: APIRequest, context: RequestContext) throws -> APIResponse {
        let (user, _, _) = try authenticate(request, context: context)
        return APIResponse(body: try UserRoutes.withFileURLs(UserStore.wireJSON(user, viewerId: user.objectId, isMaster: false),
                                                             context: context))
    }

    /// `POST /loginAs` (master key): a new session for the user named by `userId` in the body or the
    /// URL, without a password (Parse's `handleLogInAs`).
    static func logInAs(_ request: APIRequest, context: RequestContext) throws -> APIResponse {
        guard context.isMaster, !context.isMaintenance else { throw ParseError(.operationForbidden, "master key is required") }
        var userId = request.query["userId"]
        if case .object(let members)? = request.body, isTruthy(members["userId"]) { userId = members["userId"]?.stringValue }
        guard let userId, !userId.isEmpty else {
            throw ParseError(.invalidValue, "userId must not be empty, null, or undefined")
        }
        let (user, token) = try context.write { db -> (StoredObject, String) in
            guard let user = try UserStore.fetch(userId, in: db) else { throw ParseError(.objectNotFound, "user not found") }
            let token = try UserWriter.startSession(for: userId, action: "login", provider: "masterkey", context: context, in: db)
            return (user, token)
        }
        return APIResponse(body: try UserRoutes.withFileURLs(
            UserStore.wireJSON(user, viewerId: user.objectId, isMaster: true, sessionToken: token), context: context))
    }

    /// The user whose credentials the request carries, with the stored hash and the password given.
    ///
    /// As Parse Server's `UsersRouter`: the fields come from the body, or from the URL when the body
    /// lacks them (URL values are plain strings: a password `12345678` is not a number); both
    /// `username` and `email` given must both match; a `username` also matches an email.
    private static func authenticate(_ request: APIRequest, context: RequestContext) throws -> (StoredObject, String, String) {
        let invalid = ParseError(.objectNotFound, "Invalid username/password.")
        let (password, found) = try lookUp(request, context: context)
        guard let (user, hash) = found else {
            context.passwords.simulateVerification(holdingWriter: context.transaction != nil)
            // With a lockout, a known user's failure costs a write: so does an unknown one's, so the time tells nothing.
            if context.config.accountLockout != nil { try context.write { _ in } }
            throw invalid
        }
        let matches = context.verifyPassword(password, against: hash)
        if let policy = context.config.accountLockout {
            // Counted even when a batch or transaction around this request is undone (its error below undoes a batch item).
            try context.write { db in
                try db.survivingRollback { try AccountLockout.recordAttempt(userId: user.objectId, succeeded: matches, policy: policy, in: $0) }
            }
        }
        guard matches else { throw invalid }
        // An empty ACL (which only the master key can set) locks the user out, as in Parse's `UsersRouter`.
        if !context.isMaster, user.acl == .object([:]) { throw invalid }
        try EmailVerification.checkLogIn(user, ignoringVerification: ignoresVerification(request, context: context), context: context)
        return (user, hash, password)
    }

    /// The password work of a log-in, done ahead of the write (`PasswordPreparation`): the check, the
    /// time of one for an unknown user, and the new hash when the stored one has older parameters.
    static func preparePasswords(_ request: APIRequest, context: RequestContext) throws {
        let (password, found) = try lookUp(request, context: context)
        guard let (_, hash) = found else { return context.passwords.prepareSimulatedVerification() }
        if context.verifyPassword(password, against: hash), context.config.passwordHasher.needsRehash(hash) {
            try context.passwords.prepareHash(of: password)
        }
    }

    /// The password given and, when known, the user it names with their stored hash.
    private static func lookUp(_ request: APIRequest, context: RequestContext) throws -> (String, (StoredObject, String)?) {
        var fields: [String: JSON] = [:]
        if case .object(let members)? = request.body { fields = members }
        if (!isTruthy(fields["username"]) && request.query["username"] != nil)
            || (!isTruthy(fields["email"]) && request.query["email"] != nil) {
            fields = request.query.mapValues { .string($0) }
        }
        let username = fields["username"], email = fields["email"]
        guard isTruthy(username) || isTruthy(email) else { throw ParseError(.usernameMissing, "username/email is required.") }
        guard isTruthy(fields["password"]) else { throw ParseError(.passwordMissing, "password is required.") }
        let invalid = ParseError(.objectNotFound, "Invalid username/password.")
        // Any of the three present but not a string: 101, as for a wrong password.
        guard let password = fields["password"]?.stringValue,
            !isTruthy(username) || username?.stringValue != nil, !isTruthy(email) || email?.stringValue != nil
        else { throw invalid }
        let name = isTruthy(username) ? username?.stringValue : nil
        let address = isTruthy(email) ? email?.stringValue : nil
        let found = try context.read { db -> (StoredObject, String)? in
            guard let schema = try SchemaStore.load(UserStore.className, in: db),
                let user = try UserStore.find(username: name, email: address, schema: schema, in: db)?.decoded(),
                let hash = try UserStore.passwordHash(of: user.objectId, in: db)
            else { return nil }
            return (user, hash)
        }
        return (password, found)
    }

    /// `ignoreEmailVerification`, which only the master key may send (Parse's `_authenticateUserFromRequest`).
    private static func ignoresVerification(_ request: APIRequest, context: RequestContext) -> Bool {
        guard context.isMaster else { return false }
        if case .object(let members)? = request.body, members["ignoreEmailVerification"] == .bool(true) { return true }
        return request.query["ignoreEmailVerification"] == "true"
    }

    /// JavaScript truthiness, which Parse's checks use: `null`, `false`, `0` and `""` count as missing.
    private static func isTruthy(_ value: JSON?) -> Bool { value?.isJavaScriptTruthy ?? false }

    /// Deletes the caller's session; `{}` also without one.
    static func logOut(context: RequestContext) throws -> APIResponse {
        if let user = context.user {
            let triggers = try Triggers(SessionStore.className, context: context)
            let ended = try context.write { db -> SessionRecord? in
                let session = triggers.has("afterLogout") ? try SessionStore.find(objectId: user.sessionId, in: db) : nil
                try SessionStore.delete(objectId: user.sessionId, in: db)
                return session
            }
            if let ended { triggers.afterLogout(ended.wireJSON(token: nil)) }
        }
        return APIResponse(body: [:])
    }
}
