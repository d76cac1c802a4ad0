import RoostCore

/// The rules of `_User` writes, kept apart from ordinary objects: sign-up, anonymous sign-up and
/// log-in, updates by the user themself (with password changes and anonymous conversion), deletion.
/// Password hashing happens before the write transaction, never while holding the writer.
enum UserWriter {
    /// The parts of a user body with their own rules; everything else is an ordinary field.
    struct Credentials {
        var username: String?
        var email: String?
        var password: String?
        /// `anonymous: .some(id)` links, `.some(nil)` unlinks (conversion), `nil` leaves it.
        var anonymousId: String??
        var rest: [String: JSON]
    }

    /// The fields a user body carries as `Credentials` rather than as changes.
    static let credentialFields: Set<String> = ["username", "email", "password", "authData"]

    /// Splits and checks a user body.
    /// - Throws: 200/201 for bad username or password types, 125 for a malformed email, 252 for an unsupported provider,
    ///   119 for `emailVerified` without the master key.
    static func credentials(from body: [String: JSON], context: RequestContext) throws -> Credentials {
        var rest = body
        var result = Credentials(rest: [:])
        if let value = rest.removeValue(forKey: "username") {
            guard let username = value.stringValue, !username.isEmpty else { throw ParseError(.usernameMissing, "bad or missing username") }
            result.username = context.config.convertUsernameToLowercase ? username.lowercased() : username
        }
        if let value = rest.removeValue(forKey: "password") {
            guard let password = value.stringValue, !password.isEmpty else { throw ParseError(.passwordMissing, "password is required") }
            result.password = password
        }
        if rest["email"] == .null { rest.removeValue(forKey: "email") }
        // Only a string is an email to check; anything else is an ordinary change of the field, as Parse's
        // `_validateEmail` leaves it: a `Delete` unsets the email, another type is the schema's 111.
        if let email = rest["email"]?.stringValue {
            guard isPlausibleEmail(email) else { throw ParseError(.invalidEmailAddress, "Email address format is invalid.") }
            rest.removeValue(forKey: "email")
            result.email = context.config.convertEmailToLowercase ? email.lowercased() : email
        }
        if let value = rest.removeValue(forKey: "authData") {
            guard case .object(let providers) = value else { throw ParseError(.unsupportedService, "This authentication method is unsupported.") }
            for (provider, data) in providers {
                guard provider == "anonymous", context.config.enableAnonymousUsers else {
                    if data == .null { continue }  // Unlinking a provider we never linked changes nothing.
                    throw ParseError(.unsupportedService, "This authentication method is unsupported.")
                }
                if data == .null {
                    result.anonymousId = .some(nil)
                } else {
                    guard let id = data["id"]?.stringValue, !id.isEmpty else {
                        throw ParseError(.unsupportedService, "This authentication method is unsupported.")
                    }
                    result.anonymousId = .some(id)
                }
            }
        }
        if rest["emailVerified"] != nil, !context.isMaster {
            throw ParseError(.operationForbidden, "Clients aren't allowed to manually update email verification.")
        }
        rest.removeValue(forKey: "sessionToken")
        result.rest = rest
        return result
    }

    /// `^.+@.+$`, as Parse checks it.
    static func isPlausibleEmail(_ email: String) -> Bool {
        guard let at = email.firstIndex(of: "@") else { return false }
        return at > email.startIndex && email.index(after: at) < email.endIndex
    }

    /// 202/203 unless the username and email are free (ignoring case) for `userId`; 208 when the
    /// anonymous id to link already belongs to another user (Parse's `handleAuthData`).
    static func checkUnique(_ credentials: Credentials, userId: String?, schema: ClassSchema, in db: any SQLConnection) throws {
        if case .some(.some(let anonymousId)) = credentials.anonymousId,
            let owner = try UserStore.find(anonymousId: anonymousId, schema: schema, in: db), owner.objectId != userId {
            throw ParseError(.accountAlreadyLinked, "this auth is already used")
        }
        if let username = credentials.username, try UserStore.isUsernameTaken(username, excluding: userId, schema: schema, in: db) {
            throw ParseError(.usernameTaken, "Account already exists for this username.")
        }
        if let email = credentials.email, try UserStore.isEmailTaken(email, excluding: userId, schema: schema, in: db) {
            throw ParseError(.emailTaken, "Account already exists for this email address.")
        }
    }

    /// The ACL a user object gets: the client's, always with the owner's read and write. Without one: the owner only,
    /// or with `publicRead` (a new user under `--no-enforce-private-users`) everyone's read too, as Parse's default then.
    static func ownerACL(_ requested: JSON?, userId: String, publicRead: Bool = false) -> JSON {
        var entries = requested?.objectValue ?? (publicRead ? ["*": ["read": true, "write": false]] : [:])
        entries[userId] = ["read": true, "write": true]
        return .object(entries)
    }

    /// The fields of a user after applying `credentials` and the ordinary `changes` (`fields` is `nil` for a new user).
    static func applying(_ credentials: Credentials, _ changes: ObjectWriter.Changes, to fields: [String: JSON]?) throws -> [String: JSON] {
        var result = try ObjectWriter.apply(changes.operations, to: fields)
        if let username = credentials.username { result["username"] = .string(username) }
        if let email = credentials.email { result["email"] = .string(email) }
        switch credentials.anonymousId {
        case .some(.some(let id)): result["authData"] = ["anonymous": ["id": .string(id)]]
        case .some(.none):
            var providers = result["authData"]?.objectValue ?? [:]
            providers.removeValue(forKey: "anonymous")
            result["authData"] = providers.isEmpty ? nil : .object(providers)
        case .none: break
        }
        return result
    }

    /// Starts a session for `userId` and returns its token.
    static func startSession(for userId: String, action: String, provider: String, context: RequestContext,
                             in db: any SQLConnection) throws -> String {
        if let installationId = context.installationId {
            try SessionStore.deleteAll(userId: userId, installationId: installationId, in: db)
        }
        return try SessionStore.create(
            userId: userId, installationId: context.installationId,
            createdWith: ["action": .string(action), "authProvider": .string(provider)],
            lifetimeSeconds: context.config.sessionLifetimeSeconds, in: db).token
    }
}
