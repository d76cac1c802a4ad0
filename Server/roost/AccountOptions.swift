import ArgumentParser
import RoostServer

/// The flags of mail, email verification, password reset, the password policy and account lockout
/// (Parse Server's `emailAdapter`, `appName`, `publicServerURL`, `verifyUserEmails`, `passwordPolicy`,
/// `accountLockout`), each also a `ROOST_*` variable. A bad combination stops the server with Parse's message.
struct AccountOptions: ParsableArguments {
    @Option(help: "SMTP server for mail: smtp://[user:password@]host[:port] (STARTTLS when offered, required with a password) or smtps://… (env ROOST_SMTP_URL, default none: no mail).")
    var smtpUrl: String?
    @Option(help: "PEM file of the certificate authorities to trust for the SMTP server's TLS certificate (env ROOST_SMTP_CA_FILE, default the system's).")
    var smtpCaFile: String?
    @Option(help: "Sender address of mails (env ROOST_MAIL_FROM, default noreply@ the public server URL's host).") var mailFrom: String?
    @Option(help: "App name in mails and pages (env ROOST_APP_NAME; needed for mail).") var appName: String?
    @Option(help: "URL clients reach the API at, e.g. https://example.com/parse: the base of emailed links (env ROOST_PUBLIC_SERVER_URL; needed for mail).")
    var publicServerUrl: String?
    @Flag(inversion: .prefixedNo, help: "Mail a verification link on sign-up and email change (env ROOST_VERIFY_USER_EMAILS, default off).")
    var verifyUserEmails: Bool?
    @Flag(inversion: .prefixedNo, help: "With --verify-user-emails, mail the verification links; --no-send-user-email-verification keeps emails unverified without mailing (the app verifies them with the master key), as Parse's sendUserEmailVerification: false (env ROOST_SEND_USER_EMAIL_VERIFICATION, default on).")
    var sendUserEmailVerification: Bool?
    @Flag(inversion: .prefixedNo, help: "With --verify-user-emails: no log-in until the email is verified (env ROOST_PREVENT_LOGIN_WITH_UNVERIFIED_EMAIL, default off).")
    var preventLoginWithUnverifiedEmail: Bool?
    @Flag(inversion: .prefixedNo, help: "With both above: answer sign-ups 205 (env ROOST_PREVENT_SIGNUP_WITH_UNVERIFIED_EMAIL, default off).")
    var preventSignupWithUnverifiedEmail: Bool?
    @Option(parsing: .unconditional, help: "Seconds a verification link stays valid (env ROOST_EMAIL_VERIFY_TOKEN_VALIDITY, default until used).")
    var emailVerifyTokenValidity: Int?
    @Flag(inversion: .prefixedNo, help: "A verification link asked for again while the last is valid mails that one again, as Parse's emailVerifyTokenReuseIfValid; needs --email-verify-token-validity (env ROOST_EMAIL_VERIFY_TOKEN_REUSE_IF_VALID, default off).")
    var emailVerifyTokenReuseIfValid: Bool?
    @Option(parsing: .unconditional, help: "Seconds a password reset link stays valid (env ROOST_RESET_TOKEN_VALIDITY, default until used or the password or email changes).")
    var resetTokenValidity: Int?
    @Flag(inversion: .prefixedNo, help: "A reset asked for again while the last link is valid mails that link again, as Parse's resetTokenReuseIfValid; needs --reset-token-validity (env ROOST_RESET_TOKEN_REUSE_IF_VALID, default off).")
    var resetTokenReuseIfValid: Bool?
    @Flag(inversion: .prefixedNo, help: "Answer a reset request for an unknown email as for a known one (env ROOST_RESET_PASSWORD_SUCCESS_ON_INVALID_EMAIL, default on).")
    var resetPasswordSuccessOnInvalidEmail: Bool?
    @Option(help: "Regular expression new passwords must match (env ROOST_PASSWORD_VALIDATOR_PATTERN, default none).")
    var passwordValidatorPattern: String?
    @Option(help: "Message of the 142 for a password the pattern refuses (env ROOST_PASSWORD_VALIDATION_ERROR).")
    var passwordValidationError: String?
    @Flag(inversion: .prefixedNo, help: "Refuse passwords containing the username (env ROOST_PASSWORD_DO_NOT_ALLOW_USERNAME, default off).")
    var passwordDoNotAllowUsername: Bool?
    @Option(help: "Days a password lasts before log-ins are refused until it is reset (env ROOST_MAX_PASSWORD_AGE, default none).")
    var maxPasswordAge: String?
    @Option(parsing: .unconditional, help: "New passwords must differ from this many latest ones, 1 to 20 (env ROOST_MAX_PASSWORD_HISTORY, default none).")
    var maxPasswordHistory: Int?
    @Option(parsing: .unconditional, help: "Wrong passwords in a row that lock an account, 1 to 999 (env ROOST_ACCOUNT_LOCKOUT_THRESHOLD; with a duration).")
    var accountLockoutThreshold: Int?
    @Option(help: "Minutes a locked account stays locked (env ROOST_ACCOUNT_LOCKOUT_DURATION; with a threshold).")
    var accountLockoutDuration: String?
    @Flag(inversion: .prefixedNo, help: "A password reset ends a lockout (env ROOST_ACCOUNT_LOCKOUT_UNLOCK_ON_PASSWORD_RESET, default off).")
    var accountLockoutUnlockOnPasswordReset: Bool?

    func apply(to config: inout ServerConfig, _ settings: Settings) throws {
        var mail = MailSettings()
        mail.smtpURL = settings.string(smtpUrl, "smtp-url").flatMap { $0.isEmpty ? nil : $0 }
        mail.certificateAuthorities = settings.string(smtpCaFile, "smtp-ca-file")
        mail.from = settings.string(mailFrom, "mail-from")
        mail.appName = settings.string(appName, "app-name")
        mail.publicServerURL = settings.string(publicServerUrl, "public-server-url").map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
        if let url = mail.publicServerURL, !url.isEmpty, !url.hasPrefix("http://"), !url.hasPrefix("https://") {  // Parse's check.
            let source = Settings.source(publicServerUrl, "public-server-url")
            throw ValidationError("invalid value for \(source): \(url) (publicServerURL should be a valid HTTPS URL starting with https://)")
        }
        mail.verifyUserEmails = try settings.boolean(verifyUserEmails, "verify-user-emails") ?? false
        mail.sendUserEmailVerification = try settings.boolean(sendUserEmailVerification, "send-user-email-verification") ?? true
        mail.preventLoginWithUnverifiedEmail = try settings.boolean(preventLoginWithUnverifiedEmail, "prevent-login-with-unverified-email") ?? false
        mail.preventSignupWithUnverifiedEmail = try settings.boolean(preventSignupWithUnverifiedEmail, "prevent-signup-with-unverified-email") ?? false
        mail.emailVerifyTokenValidityDuration = try settings.integer(emailVerifyTokenValidity, "email-verify-token-validity", in: 1...3_153_600_000)
        mail.emailVerifyTokenReuseIfValid = try settings.boolean(emailVerifyTokenReuseIfValid, "email-verify-token-reuse-if-valid") ?? false
        if let problem = mail.problem() { throw ValidationError(problem) }
        config.mail = mail

        var policy = PasswordPolicy()
        policy.resetTokenValidityDuration = try settings.integer(resetTokenValidity, "reset-token-validity", in: 1...3_153_600_000)
        policy.resetTokenReuseIfValid = try settings.boolean(resetTokenReuseIfValid, "reset-token-reuse-if-valid") ?? false
        policy.resetPasswordSuccessOnInvalidEmail = try settings.boolean(resetPasswordSuccessOnInvalidEmail, "reset-password-success-on-invalid-email") ?? true
        policy.validatorPattern = settings.string(passwordValidatorPattern, "password-validator-pattern")
        policy.validationError = settings.string(passwordValidationError, "password-validation-error")
        policy.doNotAllowUsername = try settings.boolean(passwordDoNotAllowUsername, "password-do-not-allow-username") ?? false
        policy.maxPasswordAge = try settings.converted(maxPasswordAge, "max-password-age", expected: "a number of days") { Double($0) }
        policy.maxPasswordHistory = try settings.integer(maxPasswordHistory, "max-password-history", in: 1...20)
        if let problem = policy.problem() { throw ValidationError(problem) }
        config.passwordPolicy = policy

        let threshold = try settings.integer(accountLockoutThreshold, "account-lockout-threshold", in: 1...999)
        let duration = try settings.converted(accountLockoutDuration, "account-lockout-duration", expected: "a number of minutes") { Double($0) }
        if threshold != nil || duration != nil {
            let lockout = AccountLockoutPolicy(
                threshold: threshold ?? 0, duration: duration ?? 0,
                unlockOnPasswordReset: try settings.boolean(accountLockoutUnlockOnPasswordReset, "account-lockout-unlock-on-password-reset") ?? false)
            if let problem = lockout.problem() { throw ValidationError(problem) }
            config.accountLockout = lockout
        }
    }
}
