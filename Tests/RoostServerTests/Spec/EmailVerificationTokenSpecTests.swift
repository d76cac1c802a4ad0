import Foundation
import RoostCore
import Testing

/// Parse Server's spec/EmailVerificationToken.spec.js over REST and the verify pages, with a real SMTP server.
@Suite struct EmailVerificationTokenSpecTests {
    private let appId = TestServer.applicationId

    // spec: EmailVerificationToken.spec.js: if user clicks on the email verify link before email verification token expiration then show the verify email success page
    // spec: EmailVerificationToken.spec.js: if user clicks on the email verify link before email verification token expiration then emailVerified should be true
    // spec: EmailVerificationToken.spec.js: if user clicks on the email verify link before email verification token expiration then user should be able to login
    @Test func linkBeforeExpiry() async throws {
        let accounts = try AccountServer(["--verify-user-emails", "--prevent-login-with-unverified-email",
                                          "--email-verify-token-validity", "600"])
        _ = try await accounts.api.send("POST", "/users", json: ["username": "testEmailVerifyTokenValidity", "password": "expiringToken",
                                                                "email": "user@parse.com"])
        let link = try #require(try await accounts.sink.waitForMails(1).first?.link)
        #expect(try accounts.page(link).body
                == "Found. Redirecting to \(accounts.publicURL)/apps/verify_email_success.html?username=testEmailVerifyTokenValidity")
        let account = try await accounts.api.logIn("testEmailVerifyTokenValidity", "expiringToken")
        #expect(try await accounts.api.me(account.token).json["emailVerified"] == .bool(true))
    }

    // spec: EmailVerificationToken.spec.js: should send a new verification email when a resend is requested and the user is UNVERIFIED
    @Test func resendForAnUnverifiedUser() async throws {
        // Roost's resend interval off: a link asked for again at once is mailed at once, as in Parse.
        let accounts = try AccountServer(["--verify-user-emails", "--email-verify-token-validity", "600"], environment: noResendInterval)
        _ = try await accounts.api.signUp("resends_verification_token", "expiringToken", ["email": "user@parse.com"])
        let first = try #require(try await accounts.sink.waitForMails(1).first?.link)
        let resend = try await accounts.api.send("POST", "/verificationEmailRequest", json: ["email": "user@parse.com"])
        #expect(resend.status == 200 && resend.text == "{}")
        let mails = try await accounts.sink.waitForMails(2)
        #expect(mails.count == 2)
        let second = try #require(mails.last?.link)
        #expect(token(in: first) != token(in: second))
        // Only the latest link works.
        #expect(try accounts.page(first).location?.contains("invalid_verification_link.html") == true)
        #expect(try accounts.page(second).location?.contains("verify_email_success.html") == true)
    }

    /// `--no-send-user-email-verification` (Parse's `sendUserEmailVerification: false`; its spec cases give a function):
    /// no verification mail on sign-up or when asked, yet the email starts unverified (a log-in waits for it) until the
    /// master key verifies it. Other mails still go.
    @Test func noVerificationMailWhenSendingIsOff() async throws {
        let accounts = try AccountServer(["--verify-user-emails", "--prevent-login-with-unverified-email", "--no-send-user-email-verification"],
                                         environment: noResendInterval)
        let signUp = try await accounts.api.send("POST", "/users", json: ["username": "quiet", "password": "pw", "email": "quiet@example.com"])
        let id = try #require(signUp.json["objectId"]?.stringValue, "\(signUp.text)")
        #expect(try await accounts.api.send("POST", "/verificationEmailRequest", json: ["email": "quiet@example.com"]).status == 200)
        expectError(try await accounts.api.send("POST", "/login", json: ["username": "quiet", "password": "pw"]), 205,
                    "User email is not verified.")
        // Mails go in the order they were queued: a verification mail would come before this reset mail.
        _ = try await accounts.api.send("POST", "/requestPasswordReset", json: ["email": "quiet@example.com"])
        let first = try #require(try await accounts.sink.waitForMails(1).first?.link)
        #expect(first.contains("/request_password_reset?"), "\(first)")
        #expect(try await accounts.api.send("PUT", "/users/\(id)", json: ["emailVerified": true], master: true).status == 200)
        #expect(try await accounts.api.send("POST", "/login", json: ["username": "quiet", "password": "pw"]).status == 200)
    }

    // spec: EmailVerificationToken.spec.js: should match codes with emailVerifyTokenReuseIfValid
    /// A link asked for again while good is mailed again and works; a new email gets a new link (Parse reuses only on a
    /// resend); a server started with another master key cannot make the old link again and mails a new one.
    @Test func aResendMailsTheSameLinkWhileItIsGood() async throws {
        let flags = ["--verify-user-emails", "--email-verify-token-validity", "300", "--email-verify-token-reuse-if-valid"]
        let accounts = try AccountServer(flags, environment: noResendInterval)
        let user = try await accounts.api.signUp("resends_verification_token", "expiringToken", ["email": "user@example.com"])
        let first = try #require(token(in: try await accounts.sink.waitForMails(1).first?.link))
        let resend = try await accounts.api.send("POST", "/verificationEmailRequest", json: ["email": "user@example.com"])
        #expect(resend.status == 200 && resend.text == "{}")
        let again = try #require(try await accounts.sink.waitForMails(2).last?.link)
        #expect(token(in: again) == first)

        let changed = try await accounts.api.send("PUT", "/users/\(user.id)", json: ["email": "other@example.com"],
                                                  headers: ["X-Parse-Session-Token": user.token])
        #expect(changed.status == 200, "\(changed.text)")
        let third = try #require(token(in: try await accounts.sink.waitForMails(3).last?.link))
        #expect(third != first)
        #expect(try accounts.page(again).location?.contains("invalid_verification_link.html") == true)
        accounts.api.server.stop()

        // The last --master-key given wins.
        let restarted = try AccountServer(flags + ["--master-key", "another-master-key"], sink: accounts.sink, port: accounts.port,
                                          dataDirectory: accounts.api.server.dataDirectory, environment: noResendInterval)
        _ = try await restarted.api.send("POST", "/verificationEmailRequest", json: ["email": "other@example.com"])
        let fourth = try #require(try await restarted.sink.waitForMails(4).last?.link)
        #expect(token(in: fourth) != third)
        #expect(try restarted.page(fourth).location?.contains("verify_email_success.html") == true)
    }

    // spec-differs: EmailVerificationToken.spec.js: should throw with invalid emailVerifyTokenReuseIfValid -- a switch: its variable set to a value that is no boolean stops the start naming the variable (not Parse's message); without a validity, Parse's message
    @Test func verifyTokenReuseNeedsABooleanAndAValidity() throws {
        let notBoolean = try StartAttempt(["--email-verify-token-validity", "300"],
                                          environment: ["ROOST_EMAIL_VERIFY_TOKEN_REUSE_IF_VALID": "[]"])
        #expect(!notBoolean.started && notBoolean.log.contains("ROOST_EMAIL_VERIFY_TOKEN_REUSE_IF_VALID"), "\(notBoolean.log)")
        let noValidity = try StartAttempt(["--email-verify-token-reuse-if-valid"])
        #expect(!noValidity.started && noValidity.log.contains(
            "You cannot use emailVerifyTokenReuseIfValid without emailVerifyTokenValidityDuration"), "\(noValidity.log)")
    }

    // spec: EmailVerificationToken.spec.js: should not send a new verification email when a resend is requested and the user is VERIFIED
    // spec: EmailVerificationToken.spec.js: should not send a new verification email if this user does not exist
    // spec: EmailVerificationToken.spec.js: should fail if no email is supplied
    // spec: EmailVerificationToken.spec.js: should fail if email is not a string
    @Test func resendRefusals() async throws {
        let accounts = try AccountServer(["--verify-user-emails"])
        expectError(try await accounts.api.send("POST", "/verificationEmailRequest", json: ["email": "user@parse.com"]), 205,
                    "No user found with email user@parse.com")
        _ = try await accounts.api.signUp("zxcv", "asdf", ["email": "user@parse.com"])
        let link = try #require(try await accounts.sink.waitForMails(1).first?.link)
        #expect(try accounts.page(link).status == 302)
        let verified = try await accounts.api.send("POST", "/verificationEmailRequest", json: ["email": "user@parse.com"])
        expectError(verified, -1, "Email user@parse.com is already verified.")
        expectError(try await accounts.api.send("POST", "/verificationEmailRequest", json: [:]), 204, "you must provide an email")
        expectError(try await accounts.api.send("POST", "/verificationEmailRequest", json: ["email": 3]), 125,
                    "you must provide a valid email string")
        try await Task.sleep(nanoseconds: 500_000_000)
        #expect(accounts.sink.mails().count == 1)
    }

    // spec: EmailVerificationToken.spec.js: client should not see the _email_verify_token_expires_at field
    @Test func tokensAreNotFields() async throws {
        let accounts = try AccountServer(["--verify-user-emails", "--email-verify-token-validity", "600"])
        let account = try await accounts.api.signUp("zxcv", "asdf", ["email": "user@parse.com"])
        let link = try #require(try await accounts.sink.waitForMails(1).first?.link)
        for response in [try await accounts.api.me(account.token), try await accounts.api.send("GET", "/users", master: true),
                         try await accounts.api.send("GET", "/schemas/_User", master: true)] {
            #expect(!response.text.contains("_email_verify_token") && !response.text.contains("_perishable_token"))
        }
        accounts.api.expectNeverShown([try #require(token(in: link))])
    }

    // spec: EmailVerificationToken.spec.js: emailVerified should be set to false after changing from an already verified email
    // spec: EmailVerificationToken.spec.js: setting the email on the user should set a new email verification token and new expiration date for the token when expire email verify token flag is set
    @Test func changingAVerifiedEmail() async throws {
        let accounts = try AccountServer(["--verify-user-emails", "--email-verify-token-validity", "600"])
        let account = try await accounts.api.signUp("testEmailVerifyTokenValidity", "expiringToken", ["email": "user@parse.com"])
        let link = try #require(try await accounts.sink.waitForMails(1).first?.link)
        _ = try accounts.page(link)
        #expect(try await accounts.api.me(account.token).json["emailVerified"] == .bool(true))
        _ = try await accounts.api.send("PUT", "/users/\(account.id)", json: ["email": "newEmail@parse.com"], token: account.token)
        #expect(try await accounts.api.me(account.token).json["emailVerified"] == .bool(false))
        let mails = try await accounts.sink.waitForMails(2)
        #expect(mails.last?.recipient == "newEmail@parse.com")
        #expect(try accounts.page(try #require(mails.last?.link)).location?.contains("verify_email_success.html") == true)
    }
}
