import RoostCore

/// Email verification as Parse's `UserController` runs it with `verifyUserEmails`: a sign-up or an email
/// change sets `emailVerified` to false and mails a link; following it sets `emailVerified` to true.
enum EmailVerification {
    /// Whether this write of a user starts a verification: verification is on and an email is given.
    static func applies(toEmail email: String?, context: RequestContext) -> Bool {
        context.config.mail.verifyUserEmails && email != nil
    }

    /// Parse's log-in refusal with `preventLoginWithUnverifiedEmail`.
    /// - Throws: 205 `User email is not verified.`
    static func checkLogIn(_ user: StoredObject, ignoringVerification: Bool, context: RequestContext) throws {
        let mail = context.config.mail
        guard mail.verifyUserEmails, mail.preventLoginWithUnverifiedEmail, !ignoringVerification else { return }
        if user.fields["emailVerified"] != .bool(true) { throw ParseError(.emailNotFound, "User email is not verified.") }
    }

    /// Whether a sign-up gets no session: verification is on and log-ins wait for it (Parse's `rejectSignup`).
    static func withholdsSession(signingUpWithEmail email: String?, context: RequestContext) -> Bool {
        applies(toEmail: email, context: context) && context.config.mail.preventLoginWithUnverifiedEmail
    }

    /// Follows a verification link. True when the user's email is verified now (also when it already
    /// was, as Parse answers); false for an unknown user, a wrong, used or expired token.
    static func verify(username: String, token: String, context: RequestContext) throws -> Bool {
        guard context.config.mail.verifyUserEmails else { return false }
        return try context.write { db in
            guard let schema = try SchemaStore.load(UserStore.className, in: db),
                var user = try UserStore.find(exactUsername: username, schema: schema, in: db)?.decoded()
            else { return false }
            if user.fields["emailVerified"] == .bool(true) { return true }
            let expiring = context.config.mail.emailVerifyTokenValidityDuration != nil
            guard case .valid(let userId) = try AccountTokens.find(token, .verifyEmail, username: username, expiring: expiring, in: db),
                userId == user.objectId
            else { return false }
            user.fields["emailVerified"] = .bool(true)
            user.updatedAt = max(ParseDate.now(), user.updatedAt)
            try ObjectStore.update(user, in: schema, in: db)
            try AccountTokens.revoke(.verifyEmail, of: userId, in: db)
            return true
        }
    }

    /// A new link for an unverified user (Parse's `resendVerificationEmail`). False when there is no
    /// such user, their email is verified, or verification is off.
    static func resend(username: String, context: RequestContext) throws -> Bool {
        try context.write { db in
            guard let schema = try SchemaStore.load(UserStore.className, in: db),
                let user = try UserStore.find(exactUsername: username, schema: schema, in: db)?.decoded(),
                user.fields["emailVerified"] != .bool(true)
            else { return false }
            if context.config.mail.verifyUserEmails { try AccountMail.queueVerification(for: user, asked: true, context: context, in: db) }
            return true
        }
    }
}
