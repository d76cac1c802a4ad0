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
