/// How Roost sends mail and what its accounts' mails do (Parse's `emailAdapter`, `appName`,
/// `publicServerURL`, `verifyUserEmails` and related options).
public struct MailSettings: Sendable {
    /// `smtp://[user:password@]host[:port]` (STARTTLS when offered; required with a password) or `smtps://` (TLS from
    /// the start). Without it there is no mailer, and the mail endpoints answer as Parse without an email adapter.
    public var smtpURL: String?
    /// A PEM file of the certificate authorities the SMTP server's certificate must chain to; nil: the system's.
    public var certificateAuthorities: String?
    /// The sender (`From` and the SMTP envelope); by default `noreply@` the public server URL's host.
    public var from: String?
    /// The app's name in mails and pages (Parse's `appName`).
    public var appName: String?
    /// The URL clients reach the API at, e.g. `https://example.com/parse`: the base of emailed links.
    public var publicServerURL: String?
    /// Send a verification mail on sign-up and email change; `emailVerified` is then managed by the server.
    public var verifyUserEmails = false
    /// With `verifyUserEmails`: whether the verification links are mailed; off, emails stay unverified until the app
    /// sets `emailVerified` with the master key (Parse's `sendUserEmailVerification: false`).
    public var sendUserEmailVerification = true
    /// With `verifyUserEmails`: no log-in (205) until the email is verified, and sign-ups get no session.
    public var preventLoginWithUnverifiedEmail = false
    /// With both above: a sign-up is answered 205 (the user is created and the mail sent).
    public var preventSignupWithUnverifiedEmail = false
    /// Seconds a verification link stays valid; nil: until used or replaced.
    public var emailVerifyTokenValidityDuration: Int?
    /// A verification link asked for again while the last is good mails that one again, not a new one (Parse's
    /// `emailVerifyTokenReuseIfValid`; needs a validity).
    public var emailVerifyTokenReuseIfValid = false
    /// The mails' texts (`MailTemplates.load` reads the data directory's overrides at start-up).
    public var templates = MailTemplates()
    /// Test-only: the longest wait between two tries of a mail (5 minutes by default).
    public var retryCapMilliseconds: Int64 = 300_000
    /// A link asked for again (`/requestPasswordReset`, `/verificationEmailRequest`, the resend page) within this
    /// many seconds of the last, which is still good, queues no mail: one mail per user and kind per interval.
    /// Test-only override: `ROOST_TEST_ACCOUNT_MAIL_INTERVAL_S` (0: a new link on every request, as Parse).
    public var resendIntervalSeconds = 60
    /// At most this many mails wait in `_mail_outbox` (the SMTP server down): past it, new ones are not queued
    /// (a log line says so) and those waiting are kept. Test-only override: `ROOST_TEST_MAIL_OUTBOX_CAPACITY`.
    public var outboxCapacity = 10_000

    public init() {}

    /// Whether password reset and email verification can work: a mailer, an app name and a public URL
    /// (Parse's `validateEmailConfiguration`).
    var isComplete: Bool { smtpURL != nil && appName != nil && publicServerURL != nil }

    /// `<publicServerURL>/apps/<appId>/<page>`, the app id encoded as JavaScript's `encodeURIComponent`: where
    /// mailed links and the pages' forms point.
    func appPageURL(_ page: String, applicationId: String) -> String {
        "\(publicServerURL ?? "")/apps/\(URIComponent.encode(applicationId))/\(page)"
    }

    /// The sender address.
    var sender: String {
        if let from { return from }
        let host = publicServerURL.flatMap { URLHost.of($0) } ?? "localhost"
        return "noreply@\(host)"
    }

    /// Parse's start-up refusals: verification needs a mailer, an app name and a public URL.
    public func problem() -> String? {
        if verifyUserEmails {
            if smtpURL == nil { return "An emailAdapter is required for e-mail verification and password resets." }
            if appName == nil { return "An app name is required for e-mail verification and password resets." }
            if publicServerURL == nil { return "A public server url is required for e-mail verification and password resets." }
        }
        if let smtpURL, !(smtpURL.hasPrefix("smtp://") || smtpURL.hasPrefix("smtps://")) {
            return "the SMTP URL must start with smtp:// or smtps://"
        }
        if let duration = emailVerifyTokenValidityDuration, duration <= 0 {
            return "Email verify token validity duration must be a value greater than 0."
        }
        if emailVerifyTokenReuseIfValid, emailVerifyTokenValidityDuration == nil {
            return "You cannot use emailVerifyTokenReuseIfValid without emailVerifyTokenValidityDuration"
        }
        return nil
    }
}

/// The host part of a URL, without Foundation's URL (which this file need not import).
enum URLHost {
    static func of(_ url: String) -> String? {
        guard let schemeEnd = url.range(of: "://") else { return nil }
        let rest = url[schemeEnd.upperBound...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let host = authority.split(separator: "@").last.map { $0.prefix { $0 != ":" } } ?? ""
        return host.isEmpty ? nil : String(host)
    }
}
