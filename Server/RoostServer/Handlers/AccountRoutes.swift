import RoostCore

/// `POST /requestPasswordReset` and `POST /verificationEmailRequest`, as Parse's `UsersRouter` answers them.
enum AccountRoutes {
    /// Parse's message when the mailer, the app name or the public URL is missing (`_throwOnBadEmailConfig`).
    static let noMailer = "An appName, publicServerURL, and emailAdapter are required for password reset and email verification functionality."

    static func register(in router: inout Router) {
        router.add("POST", "requestPasswordReset") { request, context, _ in try requestPasswordReset(request, context: context) }
        router.add("POST", "verificationEmailRequest") { request, context, _ in try verificationEmailRequest(request, context: context) }
    }

    static func requestPasswordReset(_ request: APIRequest, context: RequestContext) throws -> APIResponse {
        if let refusal = mailerMissing(context) { return refusal }
        let email = try requestedEmail(request)
        if context.config.passwordPolicy.resetPasswordSuccessOnInvalidEmail, context.transaction == nil {
            // The answer is `{}` for any email; the lookup and the mail come after it, so its time does not tell either.
            // Under a flood (`Storage.maxDeferredWrites` waiting), they are done before answering, as below.
            let deferred = DeferredContext(context: context)
            let queued = context.storage.deferWrite {
                do {
                    _ = try PasswordReset.request(email: email, context: deferred.context)
                } catch {
                    deferred.context.logger.error("password reset request failed: \(error)")
                }
            }
            if queued { return APIResponse(body: [:]) }
        }
        let found = try PasswordReset.request(email: email, context: context)
        if !found, !context.config.passwordPolicy.resetPasswordSuccessOnInvalidEmail {
            throw ParseError(.objectNotFound, "A user with that email does not exist.")
        }
        return APIResponse(body: [:])
    }

    /// A new verification mail for the user with this email (Parse's `handleVerificationEmailRequest`,
    /// which tells whether the email is known: 205, as Parse does).
    static func verificationEmailRequest(_ request: APIRequest, context: RequestContext) throws -> APIResponse {
        if let refusal = mailerMissing(context) { return refusal }
        let email = try requestedEmail(request)
        let outcome = try context.write { db -> ParseError? in
            let schema = try UserStore.schema(in: db)
            guard let user = try UserStore.find(username: nil, email: email, schema: schema, in: db)?.decoded() else {
                return ParseError(.emailNotFound, "No user found with email \(email)")
            }
            if user.fields["emailVerified"] == .bool(true) { return ParseError(.otherCause, "Email \(email) is already verified.") }
            if context.config.mail.verifyUserEmails { try AccountMail.queueVerification(for: user, asked: true, context: context, in: db) }
            return nil
        }
        if let outcome { throw outcome }
        return APIResponse(body: [:])
    }

    /// Parse's 500 before anything else when mail cannot be sent. Answered, not thrown: a thrown code 1
    /// is logged as a server fault, and any client could fill the log.
    private static func mailerMissing(_ context: RequestContext) -> APIResponse? {
        context.config.mail.isComplete ? nil : APIResponse(status: 500, body: ParseError(.internalServerError, noMailer).json)
    }

    /// The body's `email`: 204 when missing (or empty), 125 when not a string.
    private static func requestedEmail(_ request: APIRequest) throws -> String {
        var email: JSON?
        if case .object(let members)? = request.body { email = members["email"] }
        switch email {
        case nil, .null?, .bool(false)?, .number(0)?, .string("")?: throw ParseError(.emailMissing, "you must provide an email")
        case .string(let text)?: return text
        default: throw ParseError(.invalidEmailAddress, "you must provide a valid email string")
        }
    }
}

/// A request's context used after its answer, on the deferred-write queue: only outside a transaction (it has
/// none then), so nothing in it is shared with another thread meanwhile.
private struct DeferredContext: @unchecked Sendable {
    let context: RequestContext
}
