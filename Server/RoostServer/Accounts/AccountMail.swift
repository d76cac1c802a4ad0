import RoostCore

/// Queues the mails of the account flows, in the transaction that issues their token: the link is
/// built as Parse builds it (`<publicServerURL>/apps/<appId>/verify_email?token=…&username=…`).
enum AccountMail {
    /// Issues a verification token and queues the mail to the user's email (Parse's `sendVerificationEmail`).
    /// - Parameter asked: a link asked for again (not a sign-up's or a new email's): none within the resend interval.
    static func queueVerification(for user: StoredObject, asked: Bool = false, context: RequestContext, in db: any SQLConnection) throws {
        let mail = context.config.mail
        guard mail.sendUserEmailVerification, let email = user.fields["email"]?.stringValue, MailMessage.isDeliverable(email),
            mail.isComplete,
            try mayQueue(.verifyEmail, for: user.objectId, asked: asked, context: context, in: db)
        else { return }
        // A sign-up's or new email's link is new; one asked for again may be the same (Parse's `regenerateEmailVerifyToken`).
        let token = try linkToken(.verifyEmail, for: user.objectId, reusable: mail.emailVerifyTokenReuseIfValid, reuse: asked,
                                  lifetimeSeconds: mail.emailVerifyTokenValidityDuration, context: context, in: db)
        try queue(.verifyEmail, to: email, user: user, link: link("verify_email", token: token, user: user, context: context),
                  context: context, in: db)
    }

    /// Issues a password reset token and queues the mail to the user's email, or to the username when the
    /// user has no email (as Parse's `defaultResetPasswordEmail`).
    static func queueReset(for user: StoredObject, context: RequestContext, in db: any SQLConnection) throws {
        let mail = context.config.mail
        guard let recipient = user.fields["email"]?.stringValue ?? user.fields["username"]?.stringValue,
            MailMessage.isDeliverable(recipient), mail.isComplete,
            try mayQueue(.resetPassword, for: user.objectId, asked: true, context: context, in: db)
        else { return }
        let policy = context.config.passwordPolicy
        let token = try linkToken(.resetPassword, for: user.objectId, reusable: policy.resetTokenReuseIfValid, reuse: true,
                                  lifetimeSeconds: policy.resetTokenValidityDuration, context: context, in: db)
        try queue(.passwordReset, to: recipient, user: user,
                  link: link("request_password_reset", token: token, user: user, context: context), context: context, in: db)
    }

    /// The token of a link to mail. `reusable` (Parse's `emailVerifyTokenReuseIfValid`, `resetTokenReuseIfValid`): a token
    /// that can be made again, and with `reuse` the user's good one made again if there is one. Otherwise a random one.
    private static func linkToken(_ purpose: AccountTokens.Purpose, for userId: String, reusable: Bool, reuse: Bool,
                                  lifetimeSeconds: Int?, context: RequestContext, in db: any SQLConnection) throws -> String {
        // An empty key would make derived tokens guessable (roost serve always has a master key; a bare config may not).
        guard reusable, !context.config.masterKey.isEmpty else {
            return try AccountTokens.issue(purpose, for: userId, lifetimeSeconds: lifetimeSeconds, in: db)
        }
        let key = AccountTokens.derivationKey(masterKey: context.config.masterKey)
        if reuse, let token = try AccountTokens.reusable(purpose, of: userId, key: key, in: db) { return token }
        return try AccountTokens.issue(purpose, for: userId, lifetimeSeconds: lifetimeSeconds, derivingWith: key, in: db)
    }

    /// Whether to issue a link and queue its mail: not when the same link was asked for within the resend interval
    /// and is still good (a request per second mails once a minute, and that link stays valid), nor with the outbox full.
    private static func mayQueue(_ purpose: AccountTokens.Purpose, for userId: String, asked: Bool, context: RequestContext,
                                 in db: any SQLConnection) throws -> Bool {
        let mail = context.config.mail
        if asked, mail.resendIntervalSeconds > 0, try AccountTokens.issuedRecently(purpose, of: userId, withinSeconds: mail.resendIntervalSeconds, in: db) { return false }
        guard try MailOutbox.count(in: db) < mail.outboxCapacity else {
            context.logger.warning("mail outbox full (\(mail.outboxCapacity) mails wait for the SMTP server): a \(purpose.rawValue) mail is not queued")
            return false
        }
        return true
    }

    private static func queue(_ kind: MailTemplates.Kind, to recipient: String, user: StoredObject, link: String,
                              context: RequestContext, in db: any SQLConnection) throws {
        let mail = context.config.mail
        let (subject, text, html) = mail.templates.render(kind, values: [
            "username": user.fields["username"]?.stringValue ?? "", "email": user.fields["email"]?.stringValue ?? "",
            "appname": mail.appName ?? "", "link": link,
        ])
        try MailOutbox.enqueue(MailMessage(from: mail.sender, fromName: mail.appName, to: recipient, subject: subject, text: text, html: html),
                               in: db)
    }

    /// `<publicServerURL>/apps/<appId>/<page>?token=<token>&username=<username>`, each part encoded as
    /// JavaScript's `encodeURIComponent`.
    static func link(_ page: String, token: String, user: StoredObject, context: RequestContext) -> String {
        let username = user.fields["username"]?.stringValue ?? ""
        return context.config.mail.appPageURL(page, applicationId: context.config.applicationId)
            + "?token=\(URIComponent.encode(token))&username=\(URIComponent.encode(username))"
    }
}

/// JavaScript's `encodeURIComponent`: all but `A–Z a–z 0–9 - _ . ! ~ * ' ( )` percent-encoded as UTF-8.
enum URIComponent {
    private static let unreserved = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.!~*'()".utf8)
    private static let hex = Array("0123456789ABCDEF".utf8)

    static func encode(_ text: String) -> String {
        var bytes: [UInt8] = []
        for byte in text.utf8 {
            if unreserved.contains(byte) { bytes.append(byte) } else { bytes += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 15)]] }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
