import RoostCore

/// `POST /users`: sign up with a username and password, or sign up / log in with anonymous auth data.
/// From an anonymous user's session, a username and password convert that user instead.
enum SignUp {
    static func handle(_ body: [String: JSON], context: RequestContext) throws -> APIResponse {
        // Parse's `ClassesRouter.handleCreate`, before anything else: a user named like a role would be one in ACLs.
        if case .string(let id)? = body["objectId"], id.hasPrefix("role:") { throw ParseError(.operationForbidden, "Invalid object ID.") }
        // Parse checks these first (`RestWrite.validateAuthData`), before the email's format and the rest.
        if body["authData"] == nil || body["authData"] == .null {
            guard case .string(let username)? = body["username"], !username.isEmpty else {
                throw ParseError(.usernameMissing, "bad or missing username")
            }
            guard case .string(let password)? = body["password"], !password.isEmpty else {
                throw ParseError(.passwordMissing, "password is required")
            }
        }
        var credentials = try UserWriter.credentials(from: body, context: context)
        if case .some(.some(let anonymousId)) = credentials.anonymousId, credentials.password == nil {
            return try anonymous(anonymousId, credentials, body: body, context: context)
        }
        guard credentials.username != nil else { throw ParseError(.usernameMissing, "bad or missing username") }
        guard let password = credentials.password else { throw ParseError(.passwordMissing, "password is required") }
        if let caller = context.user, let anonymous = try anonymousUser(caller.id, context: context) {
            // Sign-up from an anonymous session converts that user, answered as a sign-up.
            var conversion = body
            conversion["authData"] = ["anonymous": nil]
            let update = try UserUpdate.handle(caller.id, body: conversion, context: context, signingUp: true)
            let reply: JSON = ["objectId": .string(caller.id), "createdAt": .string(anonymous.createdAt.iso),
                               "sessionToken": update.body["sessionToken"] ?? .null]
            return APIResponse(status: 201, body: reply, headers: [location(caller.id, context)])
        }
        let triggers = try Triggers(UserStore.className, context: context)
        var changedByTrigger: [String] = []
        if triggers.has("beforeSave") {
            (credentials, changedByTrigger) = try beforeSave(triggers, body, context: context)
            guard credentials.username != nil else { throw ParseError(.usernameMissing, "bad or missing username") }
        }
        try context.config.passwordPolicy.check(password, username: credentials.username)
        let hash = try context.hashPassword(password)  // Before taking the writer (hashed ahead inside a batch).
        let changes = try ObjectWriter.decode(credentials.rest, isCreate: true)
        let withholdsSession = EmailVerification.withholdsSession(signingUpWithEmail: credentials.email, context: context)
        let (response, saved) = try context.write { [credentials] db in
            let schema = try UserStore.schema(in: db)
            try UserWriter.checkUnique(credentials, userId: nil, schema: schema, in: db)
            let (user, defaulted) = try insert(credentials, changes, schema: schema, context: context, in: db)
            try PasswordRecord.setPassword(hash, of: user.objectId, policy: context.config.passwordPolicy, in: db)
            if EmailVerification.applies(toEmail: credentials.email, context: context) {
                try AccountMail.queueVerification(for: user, context: context, in: db)
            }
            var body: [String: JSON] = ["objectId": .string(user.objectId), "createdAt": .string(user.createdAt.iso)]
            for field in defaulted { body[field] = user.fields[field] }
            ObjectWriter.echo(changedByTrigger, of: user, into: &body)
            // With log-ins waiting for a verified email, a sign-up starts no session either (Parse's `rejectSignup`).
            if !withholdsSession {
                body["sessionToken"] = .string(
                    try UserWriter.startSession(for: user.objectId, action: "signup", provider: "password", context: context, in: db))
            }
            return (APIResponse(status: 201, body: .object(body), headers: [location(user.objectId, context)]), user)
        }
        triggers.afterSave(saved.wireJSON(), original: nil)
        guard withholdsSession, context.config.mail.preventSignupWithUnverifiedEmail else { return response }
        // After the commit: the user and its mail exist, as in Parse. In a shared write, thrown now it would undo them.
        let unverified = ParseError(.emailNotFound, "User email is not verified.")
        guard context.transaction != nil else { throw unverified }
        var failing = response
        failing.failsAfterCommit = unverified
        return failing
    }

    /// New anonymous id: 201 with a generated username. Known id: a log-in, 200 with the whole user. With a session
    /// (Parse's `RestWrite.handleAuthData`): another user's id is refused (208), and no new session is started, so the
    /// answers hold no `sessionToken` (`createSessionTokenIfNeeded` returns early when a user sends auth data).
    private static func anonymous(_ anonymousId: String, _ credentials: UserWriter.Credentials, body: [String: JSON],
                                  context: RequestContext) throws -> APIResponse {
        var credentials = credentials
        var changedByTrigger: [String] = []
        let triggers = try Triggers(UserStore.className, context: context)
        // A new anonymous user is a save (Parse runs `beforeSave`); a known id's log-in is not.
        if triggers.has("beforeSave"), try !anonymousIdExists(anonymousId, context: context) {
            (credentials, changedByTrigger) = try beforeSave(triggers, body, context: context)
            credentials.anonymousId = .some(anonymousId)
        }
        let changes = try ObjectWriter.decode(credentials.rest, isCreate: true)
        let (written, created) = try anonymousWrite(anonymousId, credentials, changes, changedByTrigger: changedByTrigger, context: context)
        if let created { triggers.afterSave(created.wireJSON(), original: nil) }
        var response = written
        // A log-in answers the whole user, its files with their URLs (Parse's `expandFilesForExistingObjects`).
        if response.status == 200 { response.body = try UserRoutes.withFileURLs(response.body, context: context) }
        return response
    }

    /// A new user's `beforeSave`, once the class permissions let the caller create: the credentials to save instead,
    /// and the fields the hook changed.
    private static func beforeSave(_ triggers: Triggers, _ body: [String: JSON],
                                   context: RequestContext) throws -> (UserWriter.Credentials, [String]) {
        try triggers.checkCreate()
        let (saved, changed) = try UserTriggers.beforeSave(triggers, body: body, current: nil, context: context)
        return (try UserWriter.credentials(from: saved, context: context), changed)
    }

    private static func anonymousIdExists(_ anonymousId: String, context: RequestContext) throws -> Bool {
        try context.read { db in
            guard let schema = try SchemaStore.load(UserStore.className, in: db) else { return false }
            return try UserStore.find(anonymousId: anonymousId, schema: schema, in: db) != nil
        }
    }

    /// The answer, and the user when one was created.
    private static func anonymousWrite(_ anonymousId: String, _ credentials: UserWriter.Credentials, _ changes: ObjectWriter.Changes,
                                       changedByTrigger: [String], context: RequestContext) throws -> (APIResponse, StoredObject?) {
        try context.write { db in
            let schema = try UserStore.schema(in: db)
            let existing = try UserStore.find(anonymousId: anonymousId, schema: schema, in: db)?.decoded()
            // A user the master key locked out (an empty ACL) is passed over, as Parse's `filteredObjectsByACL`
            // does: the id signs up a new user.
            let lockedOut = existing.map { !context.isMaster && $0.acl == .object([:]) } ?? false
            if let existing, !lockedOut {
                if let caller = context.user, caller.id != existing.objectId {
                    throw ParseError(.accountAlreadyLinked, "this auth is already used")
                }
                let token = context.user != nil ? nil
                    : try UserWriter.startSession(for: existing.objectId, action: "login", provider: "anonymous", context: context, in: db)
                let body = UserStore.wireJSON(existing, viewerId: existing.objectId, isMaster: false, sessionToken: token)
                return (APIResponse(status: 200, body: body, headers: [location(existing.objectId, context)]), nil)
            }
            var generated = credentials
            if generated.username == nil { generated.username = try SecureRandom.alphanumeric(25) }
            var checked = generated
            if lockedOut { checked.anonymousId = nil }  // Its id is taken by the locked-out user only.
            try UserWriter.checkUnique(checked, userId: nil, schema: schema, in: db)
            let (user, defaulted) = try insert(generated, changes, schema: schema, context: context, in: db)
            var body: [String: JSON] = ["objectId": .string(user.objectId), "createdAt": .string(user.createdAt.iso),
                                        "username": .string(generated.username!)]
            for field in defaulted { body[field] = user.fields[field] }
            ObjectWriter.echo(changedByTrigger, of: user, into: &body)
            if context.user == nil {
                body["sessionToken"] = .string(
                    try UserWriter.startSession(for: user.objectId, action: "login", provider: "anonymous", context: context, in: db))
            }
            return (APIResponse(status: 201, body: .object(body), headers: [location(user.objectId, context)]), user)
        }
    }

    /// The new user, and the fields it got from their `defaultValue` (`FieldOptions`), answered back as Parse does.
    private static func insert(_ credentials: UserWriter.Credentials, _ changes: ObjectWriter.Changes, schema: ClassSchema,
                               context: RequestContext, in db: any SQLConnection) throws -> (StoredObject, [String]) {
        _ = try ClassPermissions.check(.create, schema, context: context)
        var changes = changes
        let defaulted = try FieldOptions.apply(schema, to: &changes, isCreate: true, skipping: UserWriter.credentialFields)
        let schema = try ObjectWriter.extendSchema(schema, with: changes.types, context: context, in: db)
        let now = ParseDate.now()
        let objectId = try SecureRandom.objectId(length: context.config.objectIdSize)
        var fields = try UserWriter.applying(credentials, changes, to: nil)
        if EmailVerification.applies(toEmail: credentials.email, context: context) { fields["emailVerified"] = .bool(false) }
        let user = StoredObject(objectId: objectId, createdAt: now, updatedAt: now,
                                acl: UserWriter.ownerACL(changes.acl, userId: objectId, publicRead: !context.config.enforcePrivateUsers),
                                fields: fields)
        try ObjectStore.insert(user, into: schema, in: db)
        return (user, defaulted)
    }

    /// The user, if it is still linked to an anonymous id.
    static func anonymousUser(_ userId: String, context: RequestContext) throws -> StoredObject? {
        let user = try context.read { db in try UserStore.fetch(userId, in: db) }
        guard let link = user?.fields["authData"]?["anonymous"], link != .null else { return nil }
        return user
    }

    static func location(_ userId: String, _ context: RequestContext) -> (String, String) {
        ("Location", "\(context.publicURL)/users/\(userId)")
    }
}
