import Foundation
import RoostCore
import Testing

/// The cases of Parse's password expiry and lockout specs that wait for time to pass: in TIMED_SUITES
/// (Makefile), run alone. Ages and durations are a few seconds, so the waits are bounded.
@Suite struct AccountExpiryTests {
    private func server(_ flags: [String]) throws -> RecordingServer { try RecordingServer(arguments: fastHashing + flags) }

    private func signUp(_ api: RecordingServer, _ username: String, _ password: String) async throws -> TestResponse {
        try await api.send("POST", "/users", json: ["username": .string(username), "password": .string(password),
                                                   "email": .string("\(username)@parse.com")])
    }

    private func logIn(_ api: RecordingServer, _ username: String, _ password: String) async throws -> TestResponse {
        try await api.send("POST", "/login", json: ["username": .string(username), "password": .string(password)])
    }

    private func locked(_ minutes: String) -> String {
        "Your account is locked due to multiple failed login attempts. Please try again after \(minutes) minute(s)"
    }

    // spec: PasswordPolicy.spec.js: should succeed if logged in before password expires
    // spec: PasswordPolicy.spec.js: should fail if logged in after password expires
    @Test func maxPasswordAge() async throws {
        let api = try server(["--max-password-age", String(3.0 / (24 * 60 * 60))])  // 3 s (Parse: 0.5 s)
        #expect(try await signUp(api, "user1", "user1").status == 201)
        _ = try await api.logIn("user1", "user1")
        try await Task.sleep(nanoseconds: 3_500_000_000)
        let expired = try await api.send("POST", "/login", json: ["username": "user1", "password": "user1"])
        expectError(expired, 101, "Your password has expired. Please reset your password.")
    }

    // spec: PasswordPolicy.spec.js: should apply password expiry policy to existing user upon first login after policy is enabled
    @Test func expiryStartsAtTheFirstLogInUnderThePolicy() async throws {
        let before = try RecordingServer()
        _ = try await before.signUp("user1", "user1")
        before.server.stop()
        try await Task.sleep(nanoseconds: 3_500_000_000)  // Older than the policy's age, but set before it existed.
        let api = try RecordingServer(arguments: fastHashing + ["--max-password-age", String(3.0 / (24 * 60 * 60))],
                                      dataDirectory: before.server.dataDirectory)
        _ = try await api.logIn("user1", "user1")  // Starts the clock.
        try await Task.sleep(nanoseconds: 3_500_000_000)
        expectError(try await api.send("POST", "/login", json: ["username": "user1", "password": "user1"]), 101,
                    "Your password has expired. Please reset your password.")
    }

    // spec: AccountLockoutPolicy.spec.js: allow login for locked account after accountPolicy.duration minutes
    @Test func unlocksAfterDuration() async throws {
        let api = try RecordingServer(arguments: fastHashing + ["--account-lockout-threshold", "2", "--account-lockout-duration", "0.05"])
        _ = try await api.signUp("username4", "correct password")
        for _ in 0..<2 { expectError(try await logIn(api, "username4", "wrong password"), 101, "Invalid username/password.") }
        expectError(try await logIn(api, "username4", "correct password"), 101, locked("0.05"))
        try await Task.sleep(nanoseconds: 3_100_000_000)
        _ = try await api.logIn("username4", "correct password")
        // The success cleared the count: one wrong password does not lock again.
        expectError(try await logIn(api, "username4", "wrong password"), 101, "Invalid username/password.")
        _ = try await api.logIn("username4", "correct password")
    }

    // spec: EmailVerificationToken.spec.js: show the invalid verification link page, if the user clicks on the verify email link after the email verify token expires
    // spec: EmailVerificationToken.spec.js: emailVerified should set to false, if the user does not verify their email before the email verify token expires
    @Test func verificationLinkExpires() async throws {
        let accounts = try AccountServer(["--verify-user-emails", "--email-verify-token-validity", "1"])
        let account = try await accounts.api.signUp("testEmailVerifyTokenValidity", "expiringToken", ["email": "user@parse.com"])
        let link = try #require(try await accounts.sink.waitForMails(1).first?.link)
        try await Task.sleep(nanoseconds: 2_000_000_000)
        #expect(try accounts.page(link).body == "Found. Redirecting to \(accounts.publicURL)/apps/invalid_verification_link.html"
                + "?username=testEmailVerifyTokenValidity&appId=\(TestServer.applicationId)")
        #expect(try await accounts.api.me(account.token).json["emailVerified"] == .bool(false))
    }

    // spec: PasswordPolicy.spec.js: should show the invalid link page if the user clicks on the password reset link after the token expires
    @Test func resetLinkExpires() async throws {
        let accounts = try AccountServer(["--reset-token-validity", "1"])
        _ = try await accounts.api.signUp("testResetTokenValidity", "original", ["email": "user@parse.com"])
        _ = try await accounts.api.send("POST", "/requestPasswordReset", json: ["email": "user@parse.com"])
        let link = try #require(try await accounts.sink.waitForMails(1).first?.link)
        try await Task.sleep(nanoseconds: 2_000_000_000)
        #expect(try accounts.page(link).location == "\(accounts.publicURL)/apps/invalid_link.html")
        let resetToken = try #require(token(in: link))
        let late = try accounts.page("/parse/apps/\(TestServer.applicationId)/request_password_reset",
                                     form: [("new_password", "newer"), ("token", resetToken), ("username", "testResetTokenValidity")])
        #expect(late.location?.contains("error=The%20password%20reset%20link%20has%20expired") == true, "\(late.head)")
        _ = try await accounts.api.logIn("testResetTokenValidity", "original")
    }
}
