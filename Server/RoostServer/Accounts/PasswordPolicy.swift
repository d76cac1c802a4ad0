import RoostCore

/// Parse Server's `passwordPolicy` option: what a new password must be, how long it lasts, how reset
/// links behave. Every field unset (the default) is Parse without a policy.
public struct PasswordPolicy: Sendable, Equatable {
    /// A regular expression (PCRE2, which reads JavaScript's patterns alike) a new password must match.
    public var validatorPattern: String?
    /// The message of the 142 a refused password gets (Parse's `validationError`).
    public var validationError: String?
    /// Refuse passwords that contain the username (case-sensitive, as Parse's `indexOf`).
    public var doNotAllowUsername = false
    /// Days a password lasts; a log-in after that is refused until the password is reset.
    public var maxPasswordAge: Double?
    /// A new password must differ from this many of the latest ones (1 to 20), the current one included.
    public var maxPasswordHistory: Int?
    /// Seconds a password reset link stays valid; unset: until used or the password or email changes.
    public var resetTokenValidityDuration: Int?
    /// A reset asked for again while the last link is good mails that link again (Parse's `resetTokenReuseIfValid`;
    /// needs a validity).
    public var resetTokenReuseIfValid = false
    /// Whether `/requestPasswordReset` answers `{}` for an email no user has (Parse's default), so the reply
    /// does not tell who has an account; off: 101 `A user with that email does not exist.`
    public var resetPasswordSuccessOnInvalidEmail = true

    public init() {}

    /// Whether any rule is set (Parse checks nothing without a policy).
    var isSet: Bool { self != PasswordPolicy() }

    static let defaultError = "Password does not meet the Password Policy requirements."
    static let containsUsernameError = "Password cannot contain your username."

    /// Parse's start-up check of the policy (`Config.validatePasswordPolicy`): its message, or nil when valid.
    public func problem() -> String? {
        if let age = maxPasswordAge, !(age >= 0) || !age.isFinite { return "passwordPolicy.maxPasswordAge must be a positive number" }
        if let duration = resetTokenValidityDuration, duration <= 0 {
            return "passwordPolicy.resetTokenValidityDuration must be a positive number"
        }
        if resetTokenReuseIfValid, resetTokenValidityDuration == nil {
            return "You cannot use resetTokenReuseIfValid without resetTokenValidityDuration"
        }
        if let pattern = validatorPattern, !CompiledRegex.accepts(pattern: pattern, options: "") {
            return "passwordPolicy.validatorPattern must be a regex string or RegExp object."
        }
        if let history = maxPasswordHistory, history <= 0 || history > 20 {
            return "passwordPolicy.maxPasswordHistory must be an integer ranging 0 - 20"
        }
        return nil
    }

    /// Parse's `_validatePasswordRequirements`: the pattern first, then the username.
    /// - Throws: 142 with the policy's message.
    func check(_ password: String, username: String?) throws {
        if let pattern = validatorPattern {
            guard let regex = CompiledRegex(pattern: pattern, options: "") else {
                throw ParseError(.validationError, validationError ?? Self.defaultError)
            }
            var bytes = password
            let outcome = bytes.withUTF8 { regex.matches($0) }
            if outcome != .match { throw ParseError(.validationError, validationError ?? Self.defaultError) }
        }
        if doNotAllowUsername, let username, !username.isEmpty, password.contains(username) {
            throw ParseError(.validationError, Self.containsUsernameError)
        }
    }

    /// The 142 of a password used among the last `maxPasswordHistory`.
    var repeatedPasswordError: ParseError {
        ParseError(.validationError, "New password should not be the same as last \(maxPasswordHistory ?? 0) passwords.")
    }
}
