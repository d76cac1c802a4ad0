import Foundation
import RoostTestSupport
import RoostCore
import Testing

/// Parse Server's spec/ValidationAndPasswordsReset.spec.js over REST and the pages, with a real SMTP server
/// (`SMTPSink`) where Parse's spec spies on a mail adapter: what the spec reads from the adapter's
/// arguments is read from the mail received.
@Suite struct ValidationAndPasswordsResetSpecTests {
    private let appId = TestServer.applicationId

    // spec: ValidationAndPasswordsReset.spec.js: sends verification email if email verification is enabled
    // spec: ValidationAndPasswordsReset.spec.js: receives the app name and user in the adapter
    @Test func signUpSendsAVerificationMail() async throws {
        let accounts = try AccountServer(["--verify-user-emails"])
        let account = try await accounts.api.signUp("zxcv", "asdf", ["email": "testIfEnabled@parse.com"])
        let mail = try #require(try await accounts.sink.waitForMails(1).first)
        #expect(mail.recipient == "testIfEnabled@parse.com")
        #expect(mail.subject == "Please verify your e-mail for coolapp")
        #expect(mail.text.contains("confirm the e-mail address testIfEnabled@parse.com with coolapp"))
        #expect(mail.link?.hasPrefix("\(accounts.publicURL)/apps/\(appId)/verify_email?token=") == true)
        #expect(mail.link?.hasSuffix("&username=zxcv") == true)
        let user = try await accounts.api.me(account.token).json
        #expect(user["emailVerified"] == .bool(false))
    }

    // spec: ValidationAndPasswordsReset.spec.js: does not send verification email when verification is enabled and email is not set
    // spec: ValidationAndPasswordsReset.spec.js: does not send verification email if email verification is disabled
    @Test func noMailWithoutEmailOrVerification() async throws {
        let verifying = try AccountServer(["--verify-user-emails"])
        let account = try await verifying.api.signUp("zxcv", "asdf")
        #expect(try await verifying.api.me(account.token).json["emailVerified"] == nil)
        let plain = try AccountServer()
        let other = try await plain.api.signUp("zxcv", "asdf", ["email": "testInvalidConfig@parse.com"])
        #expect(try await plain.api.me(other.token).json["emailVerified"] == nil)
        try await Task.sleep(nanoseconds: 500_000_000)
        #expect(verifying.sink.mails().isEmpty && plain.sink.mails().isEmpty)
    }

    // spec: ValidationAndPasswordsReset.spec.js: does send a validation email when updating the email
    // spec: ValidationAndPasswordsReset.spec.js: does send a validation email with valid verification link when updating the email
    @Test func changingTheEmailSendsANewLink() async throws {
        let accounts = try AccountServer(["--verify-user-emails"])
        let account = try await accounts.api.signUp("zxcv", "asdf")
        let changed = try await accounts.api.send("PUT", "/users/\(account.id)", json: ["email": "testWhenUpdating@parse.com"],
                                                  token: account.token)
        #expect(changed.status == 200)
        let mail = try #require(try await accounts.sink.waitForMails(1).first)
        #expect(mail.recipient == "testWhenUpdating@parse.com")
        #expect(try await accounts.api.me(account.token).json["emailVerified"] == .bool(false))
        let followed = try accounts.page(try #require(mail.link))
        #expect(followed.body == "Found. Redirecting to \(accounts.publicURL)/apps/verify_email_success.html?username=zxcv")
        #expect(try await accounts.api.me(account.token).json["emailVerified"] == .bool(true))
    }

    // spec: ValidationAndPasswordsReset.spec.js: prevents user from login if email is not verified but preventLoginWithUnverifiedEmail is set to true
    // spec: ValidationAndPasswordsReset.spec.js: allows user to login only after user clicks on the link to confirm email address if preventLoginWithUnverifiedEmail is set to true
    @Test func logInWaitsForTheVerifiedEmail() async throws {
        let accounts = try AccountServer(["--verify-user-emails", "--prevent-login-with-unverified-email"])
        let signUp = try await accounts.api.send("POST", "/users", json: ["username": "testInvalidConfig", "password": "testInvalidConfig",
                                                                          "email": "testInvalidConfig@parse.com"])
        #expect(signUp.status == 201)
        #expect(signUp.json["sessionToken"] == nil)  // No session until verified (Parse's `rejectSignup`).
        let refused = try await accounts.api.send("POST", "/login", json: ["username": "testInvalidConfig", "password": "testInvalidConfig"])
        expectError(refused, 205, "User email is not verified.")
        // The master key may pass `ignoreEmailVerification`.
        let master = try await accounts.api.send("POST", "/login", json: [
            "username": "testInvalidConfig", "password": "testInvalidConfig", "ignoreEmailVerification": true,
        ], master: true)
        #expect(master.status == 200)
        let mail = try #require(try await accounts.sink.waitForMails(1).first)
        #expect(try accounts.page(try #require(mail.link)).status == 302)
        let account = try await accounts.api.logIn("testInvalidConfig", "testInvalidConfig")
        #expect(try await accounts.api.me(account.token).json["emailVerified"] == .bool(true))
    }

    // spec: ValidationAndPasswordsReset.spec.js: allows user to login if email is not verified but preventLoginWithUnverifiedEmail is set to false
    @Test func logInWithoutVerifiedEmailWhenAllowed() async throws {
        let accounts = try AccountServer(["--verify-user-emails"])
        _ = try await accounts.api.signUp("testInvalidConfig", "testInvalidConfig", ["email": "testInvalidConfig@parse.com"])
        let account = try await accounts.api.logIn("testInvalidConfig", "testInvalidConfig")
        #expect(try await accounts.api.me(account.token).json["emailVerified"] == .bool(false))
    }

    // spec: ValidationAndPasswordsReset.spec.js: does not allow signup with preventSignupWithUnverified
    @Test func preventSignup() async throws {
        let accounts = try AccountServer(["--verify-user-emails", "--prevent-login-with-unverified-email",
                                          "--prevent-signup-with-unverified-email"])
        let signUp = try await accounts.api.send("POST", "/users", json: ["username": "zxcv", "password": "asdf", "email": "test@example.com"])
        expectError(signUp, 205, "User email is not verified.")
        let users = try await accounts.api.send("GET", "/users", master: true).json["results"]?.arrayValue
        #expect(users?.count == 1)
        #expect(try await accounts.sink.waitForMails(1).count == 1)
    }

    /// The 205 comes after the user and its mail are committed also when the sign-up shares a write: with
    /// `X-Parse-Request-Id` (one transaction with its record), or as a `/batch` item (as Parse: that item's
    /// `{error}`, the user stored). A `"transaction": true` batch is undone by it, as Parse aborts its transaction.
    @Test func preventSignupInSharedWrites() async throws {
        let accounts = try AccountServer(["--verify-user-emails", "--prevent-login-with-unverified-email",
                                          "--prevent-signup-with-unverified-email"])
        let api = accounts.api
        let idempotent = try await api.send("POST", "/users", json: ["username": "one", "password": "asdf", "email": "one@example.com"],
                                            headers: ["X-Parse-Request-Id": "signup-1"])
        expectError(idempotent, 205, "User email is not verified.")
        let batch = try await api.send("POST", "/batch", json: ["requests": [
            ["method": "POST", "path": "/parse/users", "body": ["username": "two", "password": "asdf", "email": "two@example.com"]],
            ["method": "POST", "path": "/parse/classes/Note", "body": ["text": "kept"]],
        ]])
        let items = try #require(batch.json.arrayValue)
        #expect(items.first?["error"] == ["code": 205, "error": "User email is not verified."])
        #expect(items.last?["success"]?["objectId"] != nil)
        let transacted = try await api.send("POST", "/batch", json: ["transaction": true, "requests": [
            ["method": "POST", "path": "/parse/users", "body": ["username": "three", "password": "asdf", "email": "three@example.com"]],
        ]])
        #expect(transacted.status == 400)

        let users = try await api.send("GET", "/users", master: true, query: ["order": "username"]).json["results"]?.arrayValue
        #expect(users?.compactMap { $0["username"]?.stringValue } == ["one", "two"])
        let mails = try await accounts.sink.waitForMails(2)
        #expect(Set(mails.map(\.recipient)) == ["one@example.com", "two@example.com"])
        // Each mailed link verifies its user: the token was committed with the mail.
        for mail in mails {
            let page = try accounts.page(try #require(mail.link))
            #expect(page.location?.contains("verify_email_success") == true, "\(page)")
        }
    }

    // spec: ValidationAndPasswordsReset.spec.js: fails if you set a publicServerURL, have an appName, but no emailAdapter and send a password reset email
    // spec: ValidationAndPasswordsReset.spec.js: fails if you include an emailAdapter, set a publicServerURL, but have no appName and send a password reset email
    // spec: ValidationAndPasswordsReset.spec.js: fails if you include an emailAdapter, have an appName, but have no publicServerURL and send a password reset email
    @Test func resetNeedsMailerAppNameAndPublicURL() async throws {
        let sink = try SMTPSink()
        for flags in [["--app-name", "coolapp", "--public-server-url", "http://127.0.0.1:1/parse"],
                      ["--smtp-url", sink.url, "--public-server-url", "http://127.0.0.1:1/parse"],
                      ["--smtp-url", sink.url, "--app-name", "coolapp"]] {
            let api = try RecordingServer(arguments: fastHashing + flags)
            _ = try await api.signUp("testInvalidConfig", "testInvalidConfig", ["email": "testInvalidConfig@parse.com"])
            let response = try await api.send("POST", "/requestPasswordReset", json: ["email": "testInvalidConfig@parse.com"])
            #expect(response.status == 500)
            #expect(response.json["error"]?.stringValue == AccountRoutesText.noMailer, "\(flags)")
        }
    }

    // spec: ValidationAndPasswordsReset.spec.js: succeeds sending a password reset email if appName, publicServerURL, and email adapter are provided
    // spec: ValidationAndPasswordsReset.spec.js: should send a password reset link
    @Test func resetMail() async throws {
        let accounts = try AccountServer()
        _ = try await accounts.api.signUp("zxcv+zxcv", "asdf", ["email": "user@parse.com"])
        #expect(try await accounts.api.send("POST", "/requestPasswordReset", json: ["email": "user@parse.com"]).text == "{}")
        let mail = try #require(try await accounts.sink.waitForMails(1).first)
        #expect(mail.subject == "Password Reset for coolapp")
        #expect(mail.text.contains("You requested to reset your password for coolapp (your username is 'zxcv+zxcv')."))
        let link = try #require(mail.link)
        #expect(link.hasPrefix("\(accounts.publicURL)/apps/\(appId)/request_password_reset?token="))
        let opened = try accounts.page(link)
        #expect(opened.status == 302)
        let pattern = #"^Found\. Redirecting to http://127\.0\.0\.1:\d+/parse/apps/choose_password\?token=[a-zA-Z0-9]+&id=test-app&username=zxcv%2Bzxcv&app=coolapp$"#
        #expect(opened.body.range(of: pattern, options: .regularExpression) != nil, "\(opened.body)")
    }

    // spec: ValidationAndPasswordsReset.spec.js: succeeds sending a password reset username if appName, publicServerURL, and email adapter are provided
    @Test func resetMailToAUsernameThatIsAnEmail() async throws {
        let accounts = try AccountServer()
        _ = try await accounts.api.signUp("testValidConfig@parse.com", "asdf")
        #expect(try await accounts.api.send("POST", "/requestPasswordReset", json: ["email": "testValidConfig@parse.com"]).status == 200)
        let mail = try #require(try await accounts.sink.waitForMails(1).first)
        #expect(mail.recipient == "testValidConfig@parse.com")
    }

    // spec: ValidationAndPasswordsReset.spec.js: when you click the link in the email it sets emailVerified to true and redirects you
    // spec: ValidationAndPasswordsReset.spec.js: does not update email verified if you use an invalid token
    @Test func verifyLink() async throws {
        let accounts = try AccountServer(["--verify-user-emails"])
        let account = try await accounts.api.signUp("user", "other-password", ["email": "user@parse.com"])
        let mail = try #require(try await accounts.sink.waitForMails(1).first)
        let invalid = try accounts.page("/parse/apps/\(appId)/verify_email?token=invalid&username=user")
        #expect(invalid.body == "Found. Redirecting to \(accounts.publicURL)/apps/invalid_verification_link.html?username=user&appId=\(appId)")
        #expect(try await accounts.api.me(account.token).json["emailVerified"] == .bool(false))
        let followed = try accounts.page(try #require(mail.link))
        #expect(followed.status == 302)
        #expect(followed.body == "Found. Redirecting to \(accounts.publicURL)/apps/verify_email_success.html?username=user")
        #expect(try await accounts.api.me(account.token).json["emailVerified"] == .bool(true))
        // The success page says so.
        let page = try accounts.page(try #require(followed.location))
        #expect(page.status == 200 && page.body.contains("Successfully verified your email!"))
    }

    // spec: ValidationAndPasswordsReset.spec.js: redirects you to invalid link if you try to verify email incorrectly
    // spec: ValidationAndPasswordsReset.spec.js: redirects you to invalid verification link page if you try to validate a nonexistant users email
    // spec: ValidationAndPasswordsReset.spec.js: redirects you to link send fail page if you try to resend a link for a nonexistant user
    // spec: ValidationAndPasswordsReset.spec.js: redirects you to invalid link if you try to request password for a nonexistant users email
    @Test func invalidLinks() async throws {
        let accounts = try AccountServer(["--verify-user-emails"])
        let base = accounts.publicURL
        #expect(try accounts.page("/parse/apps/\(appId)/verify_email").body == "Found. Redirecting to \(base)/apps/invalid_link.html")
        #expect(try accounts.page("/parse/apps/\(appId)/verify_email?token=asdfasdf&username=sadfasga").body
                == "Found. Redirecting to \(base)/apps/invalid_verification_link.html?username=sadfasga&appId=\(appId)")
        #expect(try accounts.page("/parse/apps/\(appId)/resend_verification_email", form: [("username", "sadfasga")]).body
                == "Found. Redirecting to \(base)/apps/link_send_fail.html")
        #expect(try accounts.page("/parse/apps/\(appId)/request_password_reset?token=asdfasdf&username=sadfasga").body
                == "Found. Redirecting to \(base)/apps/invalid_link.html")
        // Another app id: Parse's 403; no public URL: 404 `Not found.`
        #expect(try accounts.page("/parse/apps/other/verify_email?token=a&username=b").status == 403)
        let noURL = try RecordingServer()
        let (head, body) = try RawConnection(port: noURL.server.port).exchange(
            "GET /parse/apps/\(appId)/verify_email?token=a&username=b HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(head.hasPrefix("HTTP/1.1 404") && body == "Not found.")
    }

    // spec: ValidationAndPasswordsReset.spec.js: should programmatically reset password
    // spec: ValidationAndPasswordsReset.spec.js: should redirect with username encoded on success page
    @Test func resetThroughTheForm() async throws {
        let accounts = try AccountServer()
        let old = try await accounts.api.signUp("zxcv+1", "asdf", ["email": "user@parse.com"])
        _ = try await accounts.api.send("POST", "/requestPasswordReset", json: ["email": "user@parse.com"])
        let resetToken = try #require(token(in: try await accounts.sink.waitForMails(1).first?.link))
        let reset = try accounts.page("/parse/apps/\(appId)/request_password_reset",
                                      form: [("new_password", "hello"), ("token", resetToken), ("username", "zxcv+1")])
        #expect(reset.status == 302)
        #expect(reset.body == "Found. Redirecting to \(accounts.publicURL)/apps/password_reset_success.html?username=zxcv%2B1")
        expectError(try await accounts.api.send("POST", "/login", json: ["username": "zxcv+1", "password": "asdf"]), 101)
        _ = try await accounts.api.logIn("zxcv+1", "hello")
        expectError(try await accounts.api.me(old.token), 209)  // Every session ended with the reset.
        // The token was used up.
        let again = try accounts.page("/parse/apps/\(appId)/request_password_reset?token=\(resetToken)&username=zxcv%2B1")
        #expect(again.location == "\(accounts.publicURL)/apps/invalid_link.html")
    }

    // spec: ValidationAndPasswordsReset.spec.js: should programmatically reset password on ajax request
    // spec: ValidationAndPasswordsReset.spec.js: should return ajax failure error on ajax request with wrong data provided
    @Test func resetThroughXHR() async throws {
        let accounts = try AccountServer()
        _ = try await accounts.api.signUp("zxcv", "asdf", ["email": "user@parse.com"])
        _ = try await accounts.api.send("POST", "/requestPasswordReset", json: ["email": "user@parse.com"])
        let resetToken = try #require(token(in: try await accounts.sink.waitForMails(1).first?.link))
        let xhr = ["X-Requested-With": "XMLHttpRequest"]
        let wrong = try accounts.page("/parse/apps/\(appId)/request_password_reset",
                                      form: [("new_password", "user1"), ("token", "12345"), ("username", "Johnny")], headers: xhr)
        #expect(wrong.status == 400)
        #expect(wrong.body == #"{"code":-1,"error":"Failed to reset password: username / email / token is invalid"}"#)
        let reset = try accounts.page("/parse/apps/\(appId)/request_password_reset",
                                      form: [("new_password", "hello"), ("token", resetToken), ("username", "zxcv")], headers: xhr)
        #expect(reset.status == 200 && reset.body == #""Password successfully reset""#)
        _ = try await accounts.api.logIn("zxcv", "hello")
        let missing = try accounts.page("/parse/apps/\(appId)/request_password_reset", form: [("token", "x"), ("new_password", "y")],
                                        headers: xhr)
        #expect(missing.body == #"{"code":200,"error":"Missing username"}"#)
    }

    // spec: ValidationAndPasswordsReset.spec.js: deletes password reset token on email address change
    @Test func emailChangeEndsResetLinks() async throws {
        let accounts = try AccountServer()
        let account = try await accounts.api.signUp("zxcv", "asdf", ["email": "test@parse.com"])
        _ = try await accounts.api.send("POST", "/requestPasswordReset", json: ["email": "test@parse.com"])
        let link = try #require(try await accounts.sink.waitForMails(1).first?.link)
        #expect(try await accounts.api.send("PUT", "/users/\(account.id)", json: ["email": "test2@parse.com"], token: account.token).status == 200)
        #expect(try accounts.page(link).location == "\(accounts.publicURL)/apps/invalid_link.html")
    }

    // spec: ValidationAndPasswordsReset.spec.js: should throw on an invalid reset password
    @Test func unknownEmail() async throws {
        let quiet = try AccountServer()
        #expect(try await quiet.api.send("POST", "/requestPasswordReset", json: ["email": "test@example.com"]).text == "{}")
        let telling = try AccountServer(["--no-reset-password-success-on-invalid-email"])
        expectError(try await telling.api.send("POST", "/requestPasswordReset", json: ["email": "test@example.com"]), 101,
                    "A user with that email does not exist.")
        for (body, code, message) in [(JSON.object([:]), 204, "you must provide an email"),
                                      (["email": 3], 125, "you must provide a valid email string")] {
            expectError(try await quiet.api.send("POST", "/requestPasswordReset", json: body), code, message)
        }
    }
}

/// Parse's message, as the server has it.
enum AccountRoutesText {
    static let noMailer = "An appName, publicServerURL, and emailAdapter are required for password reset and email verification functionality."
}
