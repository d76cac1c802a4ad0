import Foundation
import RoostCore
import RoostTestSupport
import Testing

/// The cases of Parse Server's spec/PasswordPolicy.spec.js, spec/EmailVerificationToken.spec.js,
/// spec/ValidationAndPasswordsReset.spec.js and spec/AccountLockoutPolicy.spec.js that the suites named after those
/// files did not carry yet: over REST, the account pages and a real SMTP server (`AccountServer`), and the flags and
/// variables a bad policy is refused with at start. Parse's `reconfigureServer` between two steps is a restart on the
/// same data directory.
@Suite struct AccountRESTSpecTests {
    private let appId = TestServer.applicationId

    /// A user "user" (email test@example.com) signed up without verification, then the server restarted on the same
    /// data with verification on and log-ins and sign-ups waiting for it (Parse's functions answering true).
    private static func userMadeBeforeVerification() async throws -> (first: AccountServer, second: AccountServer) {
        let first = try AccountServer()
        _ = try await first.api.signUp("user", "pass", ["email": "test@example.com"])
        first.api.server.stop()
        let second = try AccountServer(["--verify-user-emails", "--prevent-login-with-unverified-email",
                                        "--prevent-signup-with-unverified-email"], sink: first.sink,
                                       dataDirectory: first.api.server.dataDirectory)
        return (first, second)
    }

    // MARK: PasswordPolicy.spec.js

    // spec: PasswordPolicy.spec.js: should show the reset password page if the user clicks on the password reset link before the token expires
    @Test func resetLinkBeforeItExpires() async throws {
        // Parse: 5 s, the link followed after 1 s. An hour here: on a loaded machine a mail has taken minutes to arrive.
        let accounts = try AccountServer(["--reset-token-validity", "3600"])
        _ = try await accounts.api.signUp("testResetTokenValidity", "original", ["email": "user@parse.com"])
        #expect(try await accounts.api.send("POST", "/requestPasswordReset", json: ["email": "user@parse.com"]).status == 200)
        let link = try #require(try await accounts.sink.waitForMails(1).first?.link)
        let resetToken = try #require(token(in: link))
        try await Task.sleep(nanoseconds: 1_000_000_000)
        let opened = try accounts.page(link)
        #expect(opened.status == 302)
        #expect(opened.body == "Found. Redirecting to \(accounts.publicURL)/apps/choose_password?token=\(resetToken)&id=\(appId)"
                + "&username=testResetTokenValidity&app=coolapp")
    }

    /// Without `--reset-token-reuse-if-valid` (PasswordPolicy.spec.js's case with it is in `PasswordPolicySpecTests`): a link
    /// asked for again within the resend interval, while the last one is good, is not mailed again and keeps working.
    @Test func resetLinkAskedForAgainAtOnce() async throws {
        // An hour's resend interval (Roost's is 60 s): the point is a request inside it, however slow the machine.
        let accounts = try AccountServer(["--reset-token-validity", "3600"], environment: ["ROOST_TEST_ACCOUNT_MAIL_INTERVAL_S": "3600"])
        _ = try await accounts.api.signUp("testResetTokenValidity", "original", ["email": "user@example.com"])
        for _ in 0..<2 {
            let asked = try await accounts.api.send("POST", "/requestPasswordReset", json: ["email": "user@example.com"])
            #expect(asked.status == 200 && asked.text == "{}")
        }
        let link = try #require(try await accounts.sink.waitForMails(1).first?.link)
        try await Task.sleep(nanoseconds: 1_000_000_000)
        #expect(accounts.sink.mails().count == 1)
        #expect(try accounts.page(link).location?.hasPrefix("\(accounts.publicURL)/apps/choose_password?token=") == true)
    }

    // spec-differs: PasswordPolicy.spec.js: should fail if passwordPolicy.resetTokenValidityDuration is not a number -- flags are checked by the command line: the refusal names the flag
    // spec-differs: PasswordPolicy.spec.js: should fail if passwordPolicy.maxPasswordAge is not a number -- as above: `invalid value for --max-password-age: 'not a number' (expected a number of days)`
    // spec-differs: PasswordPolicy.spec.js: should fail if passwordPolicy.maxPasswordHistory is not a number -- as above
    // spec-differs: PasswordPolicy.spec.js: should fail if passwordPolicy.doNotAllowUsername is not a boolean value -- a switch; as ROOST_PASSWORD_DO_NOT_ALLOW_USERNAME it takes true/false, 1/0 or yes/no (Parse's 'no' is false) and refuses anything else, naming the variable
    @Test func policyValuesOfTheWrongTypeStopTheServerAtStart() throws {
        let cases: [([String], [String: String], String)] = [
            (["--reset-token-validity", "not a number"], [:], "--reset-token-validity"),
            (["--max-password-age", "not a number"], [:], "invalid value for --max-password-age: 'not a number' (expected a number of days)"),
            (["--max-password-history", "not a number"], [:], "--max-password-history"),
            ([], ["ROOST_PASSWORD_DO_NOT_ALLOW_USERNAME": "maybe"], "invalid value for ROOST_PASSWORD_DO_NOT_ALLOW_USERNAME: 'maybe'"),
        ]
        for (flags, environment, message) in cases {
            let attempt = try StartAttempt(flags, environment: environment)
            #expect(!attempt.started && attempt.status != 0 && attempt.log.contains(message), "\(flags) \(environment): \(attempt.log)")
        }
        #expect(try StartAttempt([], environment: ["ROOST_PASSWORD_DO_NOT_ALLOW_USERNAME": "no"]).started)
    }

    // MARK: EmailVerificationToken.spec.js

    // spec: EmailVerificationToken.spec.js: unsets the _email_verify_token_expires_at and _email_verify_token fields in the User class if email verification is successful
    // spec: EmailVerificationToken.spec.js: beforeSave options do not change existing behaviour
    @Test func verifyingLeavesNoTokenOnTheUser() async throws {
        // Parse: 5 s. An hour here: on a loaded machine a mail has taken minutes to arrive.
        let accounts = try AccountServer(["--verify-user-emails", "--email-verify-token-validity", "3600"])
        let account = try await accounts.api.signUp("unsets_email_verify_token_expires_at", "expiringToken", ["email": "user@parse.com"])
        let link = try #require(try await accounts.sink.waitForMails(1).first?.link)
        #expect(try accounts.page(link).status == 302)
        let stored = try await accounts.api.send("GET", "/users/\(account.id)", master: true).json
        #expect(stored["emailVerified"] == .bool(true))
        // Parse reads its database; over REST, with the master key, no token field is left on the user.
        #expect(keySet(stored).filter { $0.hasPrefix("_email_verify_token") }.isEmpty, "\(stored)")
        #expect(try await accounts.api.me(account.token).json["emailVerified"] == .bool(true))
    }

    // spec: EmailVerificationToken.spec.js: clicking on the email verify link by an email VERIFIED user that was setup before enabling the expire email verify token should show email verify email success
    @Test func verifiedUserFollowsTheLinkAfterExpiryIsTurnedOn() async throws {
        let first = try AccountServer(["--verify-user-emails"])
        let account = try await first.api.signUp("testEmailVerifyTokenValidity", "expiringToken", ["email": "user@parse.com"])
        let link = try #require(try await first.sink.waitForMails(1).first?.link)
        #expect(try first.page(link).status == 302)
        #expect(try await first.api.me(account.token).json["emailVerified"] == .bool(true))
        first.api.server.stop()
        // Parse's reconfigureServer with emailVerifyTokenValidityDuration: 5.
        let second = try AccountServer(["--verify-user-emails", "--email-verify-token-validity", "5"], sink: first.sink,
                                       dataDirectory: first.api.server.dataDirectory)
        let again = try second.page(link)  // The path of the link; the second server's own port.
        #expect(again.status == 302)
        #expect(again.body == "Found. Redirecting to \(second.publicURL)/apps/verify_email_success.html?username=testEmailVerifyTokenValidity")
    }

    // spec: EmailVerificationToken.spec.js: clicking on the email verify link by an email UNVERIFIED user that was setup before enabling the expire email verify token should show invalid verficiation link page
    @Test func unverifiedUserFollowsALinkMadeBeforeExpiryWasTurnedOn() async throws {
        let first = try AccountServer(["--verify-user-emails"])
        let account = try await first.api.signUp("testEmailVerifyTokenValidity", "expiringToken", ["email": "user@parse.com"])
        let link = try #require(try await first.sink.waitForMails(1).first?.link)
        #expect(try await first.api.me(account.token).json["emailVerified"] == .bool(false))
        first.api.server.stop()
        let second = try AccountServer(["--verify-user-emails", "--email-verify-token-validity", "5"], sink: first.sink,
                                       dataDirectory: first.api.server.dataDirectory)
        // A token made without an expiry date is no longer good once tokens expire (Parse's lookup asks for
        // `_email_verify_token_expires_at > now`, which a token without one does not have).
        let followed = try second.page(link)
        #expect(followed.status == 302)
        #expect(followed.body == "Found. Redirecting to \(second.publicURL)/apps/invalid_verification_link.html"
                + "?username=testEmailVerifyTokenValidity&appId=\(appId)")
        #expect(try await second.api.me(account.token).json["emailVerified"] == .bool(false))
    }

    /// Without `--email-verify-token-reuse-if-valid` (EmailVerificationToken.spec.js's case with it is in
    /// `EmailVerificationTokenSpecTests`): a link asked for again within the resend interval is not mailed again and keeps working.
    @Test func verificationLinkAskedForAgainSoon() async throws {
        // An hour's resend interval and validity (Roost's interval is 60 s), as for the reset link above.
        let accounts = try AccountServer(["--verify-user-emails", "--email-verify-token-validity", "3600"],
                                         environment: ["ROOST_TEST_ACCOUNT_MAIL_INTERVAL_S": "3600"])
        _ = try await accounts.api.signUp("resends_verification_token", "expiringToken", ["email": "user@example.com"])
        let link = try #require(try await accounts.sink.waitForMails(1).first?.link)
        try await Task.sleep(nanoseconds: 1_000_000_000)
        let resend = try await accounts.api.send("POST", "/verificationEmailRequest", json: ["email": "user@example.com"])
        #expect(resend.status == 200 && resend.text == "{}")
        try await Task.sleep(nanoseconds: 1_000_000_000)
        #expect(accounts.sink.mails().count == 1)
        #expect(try accounts.page(link).body
                == "Found. Redirecting to \(accounts.publicURL)/apps/verify_email_success.html?username=resends_verification_token")
    }

    /// The REST steps of EmailVerificationToken.spec.js's "provides function arguments in verifyUserEmails on
    /// verificationEmailRequest" (not counted: what it checks, the arguments Parse gives its function, is not seen
    /// over REST): a user made before verification was turned on asks for the mail.
    @Test func verificationRequestForAUserMadeBeforeVerification() async throws {
        let (first, second) = try await Self.userMadeBeforeVerification()
        defer { withExtendedLifetime(first) {} }  // Its data directory, removed with it, is the second server's.
        let asked = try await second.api.send("POST", "/verificationEmailRequest", json: ["email": "test@example.com"])
        #expect(asked.status == 200 && asked.text == "{}")
        let mail = try #require(try await second.sink.waitForMails(1).first)
        #expect(mail.recipient == "test@example.com")
        #expect(mail.link?.hasPrefix("\(second.publicURL)/apps/\(appId)/verify_email?token=") == true)
    }

    // MARK: ValidationAndPasswordsReset.spec.js

    // spec: ValidationAndPasswordsReset.spec.js: does send with a simple adapter
    @Test func mailsNameTheApp() async throws {
        // The later --app-name wins over AccountServer's `coolapp`.
        let accounts = try AccountServer(["--verify-user-emails", "--app-name", "My Cool App"])
        let account = try await accounts.api.signUp("zxcv", "asdf", ["email": "testSendSimpleAdapter@parse.com"])
        let verification = try #require(try await accounts.sink.waitForMails(1).first)
        #expect(verification.recipient == "testSendSimpleAdapter@parse.com")
        #expect(verification.subject == "Please verify your e-mail for My Cool App")
        #expect(verification.text.contains("verify_email"))
        // The SDK's fetch and save (nothing changed): no new mail.
        #expect(try await accounts.api.send("GET", "/users/\(account.id)", token: account.token).status == 200)
        #expect(try await accounts.api.send("PUT", "/users/\(account.id)", json: [:], token: account.token).status == 200)
        #expect(try await accounts.api.send("POST", "/requestPasswordReset", json: ["email": "testSendSimpleAdapter@parse.com"]).status == 200)
        let mails = try await accounts.sink.waitForMails(2)
        try await Task.sleep(nanoseconds: 500_000_000)
        #expect(accounts.sink.mails().count == 2)
        let reset = try #require(mails.last)
        #expect(reset.recipient == "testSendSimpleAdapter@parse.com")
        #expect(reset.subject == "Password Reset for My Cool App")
        #expect(reset.text.contains("request_password_reset"))
    }

    // spec: ValidationAndPasswordsReset.spec.js: prevents user from signup and login if email is not verified and preventLoginWithUnverifiedEmail is set to function returning true
    /// Parse's functions answer true whatever they are given: the switches.
    @Test func signUpAndLogInWaitForTheVerifiedEmail() async throws {
        let accounts = try AccountServer(["--verify-user-emails", "--prevent-login-with-unverified-email",
                                          "--prevent-signup-with-unverified-email"])
        let signUp = try await accounts.api.send("POST", "/users", json: ["username": "zxcv", "password": "asdf",
                                                                          "email": "testInvalidConfig@parse.com"])
        expectError(signUp, 205, "User email is not verified.")
        expectError(try await accounts.api.send("POST", "/login", json: ["username": "zxcv", "password": "asdf"]), 205,
                    "User email is not verified.")
    }

    /// The REST steps of ValidationAndPasswordsReset.spec.js's "provides function arguments in verifyUserEmails on
    /// login" (not counted, as above): a user signed up before verification was turned on has no `emailVerified`,
    /// so is not verified.
    @Test func logInOfAUserMadeBeforeVerification() async throws {
        let (first, second) = try await Self.userMadeBeforeVerification()
        defer { withExtendedLifetime(first) {} }  // Its data directory, removed with it, is the second server's.
        expectError(try await second.api.send("POST", "/login", json: ["username": "user", "password": "pass"]), 205,
                    "User email is not verified.")
    }

    // spec-differs: ValidationAndPasswordsReset.spec.js: validate resetPasswordSuccessonInvalidEmail -- a switch; as ROOST_RESET_PASSWORD_SUCCESS_ON_INVALID_EMAIL, [] {} and 'string' are refused naming the variable, but 1 is true (Roost's true/false, 1/0, yes/no)
    @Test func resetPasswordSuccessOnInvalidEmailTakesOnlyBooleans() throws {
        for value in ["[]", "{}", "string"] {
            let attempt = try StartAttempt([], environment: ["ROOST_RESET_PASSWORD_SUCCESS_ON_INVALID_EMAIL": value])
            #expect(!attempt.started && attempt.status != 0
                    && attempt.log.contains("invalid value for ROOST_RESET_PASSWORD_SUCCESS_ON_INVALID_EMAIL: '\(value)'"),
                    "\(value): \(attempt.log)")
        }
        #expect(try StartAttempt([], environment: ["ROOST_RESET_PASSWORD_SUCCESS_ON_INVALID_EMAIL": "1"]).started)
    }

    // MARK: AccountLockoutPolicy.spec.js

    // spec-differs: AccountLockoutPolicy.spec.js: rejects invalid unlockOnPasswordReset option -- a switch; as ROOST_ACCOUNT_LOCKOUT_UNLOCK_ON_PASSWORD_RESET, 'a', {}, [], null and the empty value are refused naming the variable, but 0 is false (Roost's true/false, 1/0, yes/no), where Parse refuses the number 0
    @Test func unlockOnPasswordResetTakesOnlyBooleans() throws {
        let lockout = ["--account-lockout-threshold", "1", "--account-lockout-duration", "1"]
        for value in ["a", "{}", "[]", "null", ""] {
            let attempt = try StartAttempt(lockout, environment: ["ROOST_ACCOUNT_LOCKOUT_UNLOCK_ON_PASSWORD_RESET": value])
            #expect(!attempt.started && attempt.status != 0
                    && attempt.log.contains("invalid value for ROOST_ACCOUNT_LOCKOUT_UNLOCK_ON_PASSWORD_RESET: '\(value)'"),
                    "'\(value)': \(attempt.log)")
        }
        #expect(try StartAttempt(lockout, environment: ["ROOST_ACCOUNT_LOCKOUT_UNLOCK_ON_PASSWORD_RESET": "0"]).started)
    }

    // spec: AccountLockoutPolicy.spec.js: uses default value if unlockOnPasswordReset is not set
    /// Parse's default is false: without the switch, a password reset does not end a lockout.
    @Test func unlockOnPasswordResetIsOffByDefault() async throws {
        let accounts = try AccountServer(["--account-lockout-threshold", "1", "--account-lockout-duration", "10000"])
        let api = accounts.api
        let locked = "Your account is locked due to multiple failed login attempts. Please try again after 10000 minute(s)"
        _ = try await api.signUp("exampleUsername", "examplePassword", ["email": "mail@example.com"])
        expectError(try await api.send("POST", "/login", json: ["username": "exampleUsername", "password": "incorrectPassword"]), 101,
                    "Invalid username/password.")
        expectError(try await api.send("POST", "/login", json: ["username": "exampleUsername", "password": "examplePassword"]), 101, locked)
        #expect(try await api.send("POST", "/requestPasswordReset", json: ["email": "mail@example.com"]).status == 200)
        let resetToken = try #require(token(in: try await accounts.sink.waitForMails(1).first?.link))
        let reset = try accounts.page("/parse/apps/\(appId)/request_password_reset",
                                      form: [("new_password", "newPassword"), ("token", resetToken), ("username", "exampleUsername")])
        #expect(reset.location == "\(accounts.publicURL)/apps/password_reset_success.html?username=exampleUsername", "\(reset.head)")
        expectError(try await api.send("POST", "/login", json: ["username": "exampleUsername", "password": "newPassword"]), 101, locked)
    }

    /// Parse's `revokeSessionOnPasswordReset: false`: a reset through the mailed link keeps the user's sessions.
    @Test func aResetKeepsSessionsWhenToldTo() async throws {
        let accounts = try AccountServer(["--no-revoke-session-on-password-reset"])
        let user = try await accounts.api.signUp("user1", "user1", ["email": "user1@parse.com"])
        #expect(try await accounts.api.send("POST", "/requestPasswordReset", json: ["email": "user1@parse.com"]).status == 200)
        let resetToken = try #require(token(in: try await accounts.sink.waitForMails(1).first?.link))
        let reset = try accounts.page("/parse/apps/\(TestServer.applicationId)/request_password_reset",
                                      form: [("new_password", "user2"), ("token", resetToken), ("username", "user1")])
        #expect(reset.status == 302, "\(reset.head)")
        let me = try await accounts.api.send("GET", "/users/me", token: user.token)
        #expect(me.status == 200 && me.json["objectId"] == .string(user.id), "\(me.text)")
        _ = try await accounts.api.logIn("user1", "user2")
    }

    // MARK: ParseUser.spec.js

    // spec: ParseUser.spec.js: should send email when upgrading from anon
    @Test func upgradingAnAnonymousUserMailsTheVerification() async throws {
        let accounts = try AccountServer(["--verify-user-emails"])
        let anonymous = try await accounts.api.send("POST", "/classes/_User", json: [
            "authData": ["anonymous": ["id": "00000000-0000-0000-0000-000000000001"]],
        ])
        let id = try #require(anonymous.json["objectId"]?.stringValue, "\(anonymous.text)")
        let token = try #require(anonymous.json["sessionToken"]?.stringValue)
        let upgraded = try await accounts.api.send("PUT", "/classes/_User/\(id)", json: [
            "authData": ["anonymous": .null], "username": "user", "email": "user@email.com", "password": "password",
        ], token: token)
        #expect(upgraded.status == 200, "\(upgraded.text)")
        let mail = try #require(try await accounts.sink.waitForMails(1).first)
        #expect(mail.recipient == "user@email.com")
    }

    // spec: ParseUser.spec.js: should not send email when email is not a string
    @Test func aResetAskedForWithAQueryIs125() async throws {
        let accounts = try AccountServer(["--verify-user-emails"])
        let user = try await accounts.api.signUp("asdf@jkl.com", "zxcv", ["email": "asdf@jkl.com"])
        let asked = try await accounts.api.send("POST", "/requestPasswordReset", json: ["email": ["$regex": "^asd"]], token: user.token)
        #expect(asked.status == 400 && asked.json == ["code": 125, "error": "you must provide a valid email string"], "\(asked.text)")
        // The sign-up's verification mail is the only one (Parse's spec sees it called too).
        _ = try await accounts.sink.waitForMails(1)
        try await Task.sleep(nanoseconds: 500_000_000)
        #expect(accounts.sink.mails().count == 1)
    }
}

/// The case of these specs that waits for a password to age: in TIMED_SUITES (Makefile), run alone, as
/// AccountExpiryTests.
@Suite struct AccountRESTTimedSpecTests {
    // spec: PasswordPolicy.spec.js: should reset password timestamp when password is reset
    @Test func resetRestartsThePasswordAge() async throws {
        let accounts = try AccountServer(["--max-password-age", String(8.0 / (24 * 60 * 60))])  // 8 s (Parse: 0.5 s): the reset and log-in after must fit in it
        _ = try await accounts.api.signUp("user1", "user1", ["email": "user1@parse.com"])
        try await Task.sleep(nanoseconds: 8_500_000_000)
        expectError(try await accounts.api.send("POST", "/login", json: ["username": "user1", "password": "user1"]), 101,
                    "Your password has expired. Please reset your password.")
        #expect(try await accounts.api.send("POST", "/requestPasswordReset", json: ["email": "user1@parse.com"]).status == 200)
        let link = try #require(try await accounts.sink.waitForMails(1).first?.link)
        let resetToken = try #require(token(in: link))
        let opened = try accounts.page(link)
        #expect(opened.status == 302)
        #expect(opened.body == "Found. Redirecting to \(accounts.publicURL)/apps/choose_password?token=\(resetToken)"
                + "&id=\(TestServer.applicationId)&username=user1&app=coolapp")
        let reset = try accounts.page("/parse/apps/\(TestServer.applicationId)/request_password_reset",
                                      form: [("new_password", "uuser11"), ("token", resetToken), ("username", "user1")])
        #expect(reset.status == 302)
        #expect(reset.body == "Found. Redirecting to \(accounts.publicURL)/apps/password_reset_success.html?username=user1")
        // The reset set the password's date: the new one is not expired.
        _ = try await accounts.api.logIn("user1", "uuser11")
    }
}
