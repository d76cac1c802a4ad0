import RoostCore

/// `PUT` and `DELETE /users/<id>`: a session whose user may write the user object (its ACL: the user
/// themself, or whoever else it grants write), or the master key.
///
/// A new password deletes every session of the user and, for the user themself, starts a new one
/// whose token is in the reply. This is also anonymous conversion: the anonymous session sends
/// `username`, `password` and `"authData": {"anonymous": null}`; the account keeps its objectId
/// and everything it owns. A taken username or email (202/203) changes nothing.
enum UserUpdate {
    /// - Parameter signingUp: a sign-up that converts an anonymous user (`SignUp`): its new session is created with
    ///   `signup`, as a sign-up's.
    static func handle(_ userId: String, body: [String: JSON], context: RequestContext, signingUp: Bool = false) throws -> APIResponse {
        try checkSession(context, refusal: "Cannot modify user \(userId).")
        let triggers = try Triggers(UserStore.className, context: context)
        var body = body
        var changedByTrigger: [String] = []
        if triggers.has("beforeSave") {
            let stored = try current(userId, .update, triggers, context)
            (body, changedByTrigger) = try UserTriggers.beforeSave(triggers, body: body, current: stored, context: context)
        }
        let credentials = try UserWriter.credentials(from: body, context: context)
        let changes = try ObjectWriter.decode(credentials.rest, isCreate: false)
        if let password = credentials.password { try checkPolicy(password, credentials.username, userId: userId, context: context) }
        let hash = try credentials.password.map { try context.hashPassword($0) }  // Before taking the writer (hashed ahead inside a batch).
        let setsCredentials = credentials.username != nil || credentials.password != nil
        // A new password or email ends the reset links mailed before (Parse's `deleteEmailResetTokenIfNeeded`).
        let endsResetLinks = credentials.password != nil || body["email"] != nil
        let verifiesEmail = EmailVerification.applies(toEmail: credentials.email, context: context)
        // The new session's `createdWith`, as Parse's `createSessionToken`: a log-in with the providers the body's
        // `authData` names (unlinking one too), else a sign-up with a password.
        let providers = signingUp ? "" : (body["authData"]?.objectValue?.keys.sorted().joined(separator: ",") ?? "")
        let (response, saved, original) = try context.write { [body] db in
            let schema = try UserStore.schema(in: db)
            var user = try writableUser(userId, for: .update, from: schema, context: context, in: db)
            let original = user
            if setsCredentials, !context.isMaster, let caller = context.user { try checkStillEntitled(caller, userId, in: db) }
            try UserWriter.checkUnique(credentials, userId: userId, schema: schema, in: db)
            var changes = changes
            _ = try FieldOptions.apply(schema, to: &changes, isCreate: false, skipping: UserWriter.credentialFields)
            let extended = try ObjectWriter.extendSchema(schema, with: changes.types, updating: user, context: context, in: db)
            user.fields = try UserWriter.applying(credentials, changes, to: user.fields)
            if verifiesEmail { user.fields["emailVerified"] = .bool(false) }
            // Only the master key may lock a user out of their own record (Parse's `runDatabaseOperation`).
            if let acl = changes.acl { user.acl = context.isMaster ? acl : UserWriter.ownerACL(acl, userId: userId) }
            user.updatedAt = max(ParseDate.now(), user.updatedAt)
            try ObjectStore.update(user, in: extended, in: db)

            var reply: [String: JSON] = ["updatedAt": .string(user.updatedAt.iso)]
            for (key, operation) in changes.operations where operation.echoesResult { reply[key] = user.fields[key] ?? .null }
            ObjectWriter.echo(changedByTrigger, of: user, into: &reply)
            if endsResetLinks { try AccountTokens.revoke(.resetPassword, of: userId, in: db) }
            if verifiesEmail { try AccountMail.queueVerification(for: user, context: context, in: db) }
            if let hash {
                try PasswordRecord.setPassword(hash, of: userId, policy: context.config.passwordPolicy, in: db)
                if context.config.revokeSessionOnPasswordReset { try SessionStore.deleteAll(userId: userId, in: db) }
                if !context.isMaster, context.user?.id == userId {  // Another writer does not get the user's session.
                    reply["sessionToken"] = .string(
                        try UserWriter.startSession(for: userId, action: providers.isEmpty ? "signup" : "login",
                                                    provider: providers.isEmpty ? "password" : providers, context: context, in: db))
                }
            }
            // Auth data linked with the master key (no session) logs the user in, as Parse's `createSessionTokenIfNeeded`
            // (linking through the user's own session keeps it).
            if context.isMaster, context.user == nil, body["authData"]?.objectValue != nil, reply["sessionToken"] == nil {
                reply["sessionToken"] = .string(try UserWriter.startSession(for: userId, action: "login", provider: providers,
                                                                             context: context, in: db))
            }
            return (APIResponse(body: .object(reply)), user, original)
        }
        triggers.afterSave(saved.wireJSON(), original: original.wireJSON())
        return response
    }

    /// The stored user as a `before` hook is shown it, once the caller may write it (refused as a write would be).
    private static func current(_ userId: String, _ operation: ClassPermissions.Operation, _ triggers: Triggers,
                                _ context: RequestContext) throws -> StoredObject {
        do {
            return try triggers.current(userId, for: operation)
        } catch let error as ParseError where error.code == .objectNotFound {
            throw missingUser(context)
        }
    }

    /// The password policy's checks of a new password (Parse's `_validatePasswordPolicy`): its pattern,
    /// the username (the new one, else the stored one), and the latest passwords, whose checks were made
    /// ahead inside a batch (`PasswordPreparation`).
    /// - Throws: 142 with the policy's message.
    private static func checkPolicy(_ password: String, _ newUsername: String?, userId: String, context: RequestContext) throws {
        let policy = context.config.passwordPolicy
        guard policy.isSet else { return }
        var username = newUsername
        if username == nil, policy.doNotAllowUsername {
            username = try context.read { db in try UserStore.fetch(userId, in: db) }?.fields["username"]?.stringValue
        }
        try policy.check(password, username: username)
        // Only for whom the change is allowed anyway: a stranger's request must not cost up to 20 PBKDF2 checks.
        guard context.isMaster || context.user?.id == userId else { return }
        let recent = try context.read { db in try PasswordRecord.recentHashes(of: userId, policy: policy, in: db) }
        if recent.contains(where: { context.verifyPassword(password, against: $0) }) { throw policy.repeatedPasswordError }
    }

    static func delete(_ userId: String, context: RequestContext) throws -> APIResponse {
        try checkSession(context, refusal: "Insufficient auth to delete user")
        let triggers = try Triggers(UserStore.className, context: context)
        if triggers.has("beforeDelete") { try triggers.beforeDelete(try current(userId, .delete, triggers, context).wireJSON()) }
        let deleted = try context.write { db in
            guard let schema = try SchemaStore.load(UserStore.className, in: db) else { throw missingUser(context) }
            let user = try writableUser(userId, for: .delete, from: schema, context: context, in: db)
            guard try ObjectStore.delete(userId, from: schema, in: db) else { throw missingUser(context) }
            try UserStore.deletePassword(of: userId, in: db)
            try AccountTokens.revokeAll(of: userId, in: db)
            try AccountLockout.clear(userId, in: db)
            try SessionStore.deleteAll(userId: userId, in: db)
            return user
        }
        triggers.afterDelete(deleted.wireJSON())
        return APIResponse(body: [:])
    }

    /// Re-checked inside the write, for a request of the same user that committed first: two parallel
    /// conversions of an anonymous user both succeeded, the later renaming the account and revoking the
    /// earlier one's new session. The caller's session must still exist (a password change revokes the
    /// others: 209, as Parse answers a revoked token), and one from an anonymous log-in may only
    /// convert a user that is still anonymous (202, as for a taken account).
    private static func checkStillEntitled(_ caller: AuthenticatedUser, _ userId: String, in db: any SQLConnection) throws {
        guard let session = try SessionStore.find(objectId: caller.sessionId, in: db) else {
            throw ParseError(.invalidSessionToken, "Invalid session token")
        }
        if session.createdWith["authProvider"] == "anonymous", try !isAnonymous(userId, in: db) {
            throw ParseError(.usernameTaken, "Account already exists for this username.")
        }
    }

    /// Whether the user is still anonymous: linked to an anonymous id, without a password (which a conversion sets).
    private static func isAnonymous(_ userId: String, in db: some SQLQuerying) throws -> Bool {
        guard let link = try UserStore.fetch(userId, in: db)?.fields["authData"]?["anonymous"], link != .null else { return false }
        return try UserStore.passwordHash(of: userId, in: db) == nil
    }

    /// 206 `refusal` without a session or the master key.
    private static func checkSession(_ context: RequestContext, refusal: String) throws {
        if !context.isMaster, context.user == nil { throw ParseError(.sessionMissing, refusal) }
    }

    /// The stored user, when the caller may write it: its ACL and the class-level permission of `operation`.
    private static func writableUser(_ userId: String, for operation: ClassPermissions.Operation, from schema: ClassSchema,
                                     context: RequestContext, in db: any SQLConnection) throws -> StoredObject {
        let grant = try ClassPermissions.check(operation, schema, context: context)
        guard let user = try ObjectStore.fetch(userId, from: schema, in: db)?.decoded(), context.canWrite(user.acl),
            ClassPermissions.allows(grant, user, context: context)
        else { throw missingUser(context) }
        return user
    }

    /// A user that is missing or not writable: 101 for the master key; 206 for a session, as Parse's
    /// `handleSessionMissingError` words it.
    private static func missingUser(_ context: RequestContext) -> ParseError {
        context.isMaster ? ObjectWriter.objectNotFound : ParseError(.sessionMissing, "Insufficient auth.")
    }
}
