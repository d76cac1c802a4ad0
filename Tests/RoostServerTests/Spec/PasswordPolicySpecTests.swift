import Foundation
import RoostCore
import RoostTestSupport
import Testing

/// Parse Server's spec/PasswordPolicy.spec.js over REST: the policy as `--password-*`, `--max-password-*` and
/// `--reset-token-validity` flags, against the real server (and a real SMTP server for the reset links).
@Suite struct PasswordPolicySpecTests {
    private func server(_ flags: [String]) throws -> RecordingServer { try RecordingServer(arguments: fastHashing + flags) }

    private func signUp(_ api: RecordingServer, _ username: String, _ password: String) async throws -> TestResponse {
        try await api.send("POST", "/users", json: ["username": .string(username), "password": .string(password),
                                                   "email": .string("\(username)@parse.com")])
    }

    // spec: PasswordPolicy.spec.js: signup should fail if password does not conform to the policy enforced using validatorPattern
    // spec: PasswordPolicy.spec.js: signup should fail if password does not conform to the policy enforced using validatorPattern string
    // spec: PasswordPolicy.spec.js: signup should succeed if password conforms to the policy enforced using validatorPattern
    // spec: PasswordPolicy.spec.js: signup should succeed if password conforms to the policy enforced using validatorPattern string
    @Test func validatorPattern() async throws {
        let api = try server(["--password-validator-pattern", "[0-9]+"])
        expectError(try await signUp(api, "user1", "nodigit"), 142, "Password does not meet the Password Policy requirements.")
        #expect(try await signUp(api, "user1", "1digit").status == 201)
        _ = try await api.logIn("user1", "1digit")
    }

    // spec: PasswordPolicy.spec.js: signup should fail if password is empty
    @Test func emptyPasswordIsRefusedBeforeThePolicy() async throws {
        let api = try server(["--password-validator-pattern", "^(?=.*[a-z]).{8,}"])
        expectError(try await signUp(api, "user1", ""), 201, "password is required")
    }

    /// Parse's `validationError` replaces the message.
    @Test func customValidationError() async throws {
        let api = try server(["--password-validator-pattern", "[A-Z]", "--password-validation-error", "Needs a capital letter."])
        expectError(try await signUp(api, "user1", "lower"), 142, "Needs a capital letter.")
    }

    // spec: PasswordPolicy.spec.js: signup should fail if password contains the username and is not allowed by policy
    // spec: PasswordPolicy.spec.js: signup should succeed if password does not contain the username and is not allowed by policy
    @Test func doNotAllowUsername() async throws {
        let api = try server(["--password-do-not-allow-username", "--password-validator-pattern", "[0-9]+"])
        expectError(try await signUp(api, "user1", "@user11"), 142, "Password cannot contain your username.")
        #expect(try await signUp(api, "user1", "r@nd0m").status == 201)
        // A new password is checked against the stored username too.
        let account = try await api.logIn("user1", "r@nd0m")
        expectError(try await api.send("PUT", "/users/\(account.id)", json: ["password": "xuser1x2"], token: account.token), 142,
                    "Password cannot contain your username.")
    }

    // spec: PasswordPolicy.spec.js: signup should succeed if password contains the username and it is allowed by policy
    @Test func usernameAllowedByDefault() async throws {
        let api = try server(["--password-validator-pattern", "[0-9]+"])
        #expect(try await signUp(api, "user1", "user1").status == 201)
    }

    // spec: PasswordPolicy.spec.js: should fail if the new password is same as the previous one
    // spec: PasswordPolicy.spec.js: should fail if the new password is same as the 5th oldest one and policy does not allow the previous 5
    // spec: PasswordPolicy.spec.js: should succeed if the new password is same as the 6th oldest one and policy does not allow only previous 5
    @Test func maxPasswordHistory() async throws {
        let api = try server(["--max-password-history", "5"])
        var account = try await api.signUp("user1", "user1", ["email": "user1@parse.com"])
        let refusal = "New password should not be the same as last 5 passwords."
        expectError(try await api.send("PUT", "/users/\(account.id)", json: ["password": "user1"], token: account.token), 142, refusal)
        for password in ["user2", "user3", "user4", "user5"] {
            let changed = try await api.send("PUT", "/users/\(account.id)", json: ["password": .string(password)], token: account.token)
            #expect(changed.status == 200, "\(changed.text)")
            account = Account(id: account.id, token: try #require(changed.json["sessionToken"]?.stringValue))
        }
        // user1 is the 5th latest: refused. After one more change it is the 6th: allowed.
        expectError(try await api.send("PUT", "/users/\(account.id)", json: ["password": "user1"], token: account.token), 142, refusal)
        let sixth = try await api.send("PUT", "/users/\(account.id)", json: ["password": "user6"], token: account.token)
        account = Account(id: account.id, token: try #require(sixth.json["sessionToken"]?.stringValue))
        #expect(try await api.send("PUT", "/users/\(account.id)", json: ["password": "user1"], token: account.token).status == 200)
    }

    // spec: PasswordPolicy.spec.js: should not infinitely loop if maxPasswordHistory is 1 (#4918)
    @Test func historyOfOne() async throws {
        let api = try server(["--max-password-history", "1"])
        let account = try await api.signUp("user1", "user1")
        expectError(try await api.send("PUT", "/users/\(account.id)", json: ["password": "user1"], token: account.token), 142,
                    "New password should not be the same as last 1 passwords.")
        let changed = try await api.send("PUT", "/users/\(account.id)", json: ["password": "user2"], token: account.token)
        #expect(changed.status == 200)
        let token = try #require(changed.json["sessionToken"]?.stringValue)
        #expect(try await api.send("PUT", "/users/\(account.id)", json: ["password": "user1"], token: token).status == 200)
    }

    /// Inside a `/batch` the history checks are made before the write, too.
    @Test func historyInsideABatch() async throws {
        let api = try server(["--max-password-history", "2"])
        let account = try await api.signUp("user1", "user1")
        let batch = try await api.send("POST", "/batch", json: ["requests": [
            ["method": "PUT", "path": .string("/parse/users/\(account.id)"), "body": ["password": "user1"]],
        ]], token: account.token)
        #expect(batch.json.arrayValue?.first?["error"]?["code"] == .number(142), "\(batch.text)")
    }

    // spec-differs: PasswordPolicy.spec.js: should fail if passwordPolicy.maxPasswordHistory is greater than 20 -- flags are checked by the command line: the refusal names the flag and its range
    // spec-differs: PasswordPolicy.spec.js: should fail if passwordPolicy.maxPasswordHistory is a negative number -- as above
    // spec: PasswordPolicy.spec.js: should fail if passwordPolicy.maxPasswordAge is a negative number
    // spec: PasswordPolicy.spec.js: should fail if passwordPolicy.resetTokenValidityDuration is zero or a negative number
    // spec: PasswordPolicy.spec.js: should fail if passwordPolicy.validatorPattern setting is invalid type
    @Test func badPoliciesStopTheServerAtStart() throws {
        let binary = try TestServer.binary().path
        let cases: [([String], String)] = [
            (["--max-password-history", "21"], "--max-password-history"),
            (["--max-password-history=-1"], "--max-password-history"),
            (["--max-password-age=-1"], "passwordPolicy.maxPasswordAge must be a positive number"),
            (["--reset-token-validity", "0"], "--reset-token-validity"),
            (["--password-validator-pattern", "(unclosed"], "passwordPolicy.validatorPattern must be a regex string or RegExp object."),
        ]
        for (flags, message) in cases {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("roost-test-\(UUID().uuidString)").path
            let run = try ChildProcess.run(binary, ["serve", "--port", "0", "--data-dir", directory] + flags)
            #expect(run.status != 0 && run.output.contains(message), "\(flags): \(run.output)")
            #expect(!FileManager.default.fileExists(atPath: directory + "/roost.sqlite"))
        }
    }
    /// A user `user1` (password `user1`, email `user1@parse.com`) on a mail-enabled server, and the token of the
    /// reset link mailed to them.
    private func resetLink(_ accounts: AccountServer, password: String = "user1") async throws -> String {
        _ = try await accounts.api.signUp("user1", password, ["email": "user1@parse.com"])
        _ = try await accounts.api.send("POST", "/requestPasswordReset", json: ["email": "user1@parse.com"])
        return try #require(token(in: try await accounts.sink.waitForMails(1).last?.link))
    }

    private func reset(_ accounts: AccountServer, _ token: String, _ password: String,
                       headers: [String: String] = [:]) throws -> PageResponse {
        try accounts.page("/parse/apps/\(TestServer.applicationId)/request_password_reset",
                          form: [("new_password", password), ("token", token), ("username", "user1")], headers: headers)
    }

    // spec: PasswordPolicy.spec.js: should keep reset token with resetTokenReuseIfValid
    /// A reset asked for again while the link is good mails the same link; once used, the next is new (without the
    /// option every request mails a new link: `eachRequestMailsANewLink`).
    @Test func aResetAskedForAgainMailsTheSameLinkWhileItIsGood() async throws {
        let accounts = try AccountServer(["--reset-token-validity", "300", "--reset-token-reuse-if-valid"], environment: noResendInterval)
        let first = try await resetLink(accounts)
        _ = try await accounts.api.send("POST", "/requestPasswordReset", json: ["email": "user1@parse.com"])
        #expect(token(in: try await accounts.sink.waitForMails(2).last?.link) == first)
        #expect(try reset(accounts, first, "changed1").body.contains("password_reset_success.html"))
        _ = try await accounts.api.send("POST", "/requestPasswordReset", json: ["email": "user1@parse.com"])
        let third = try #require(token(in: try await accounts.sink.waitForMails(3).last?.link))
        #expect(third != first && third.count == 32)
        #expect(try accounts.page("/parse/apps/\(TestServer.applicationId)/request_password_reset?token=\(first)&username=user1").location
                == "\(accounts.publicURL)/apps/invalid_link.html")
        _ = try await accounts.api.logIn("user1", "changed1")
    }

    // spec-differs: PasswordPolicy.spec.js: should throw with invalid resetTokenReuseIfValid -- a switch: its variable set to a value that is no boolean stops the start naming the variable (not Parse's message); without a validity, Parse's message
    @Test func resetTokenReuseNeedsABooleanAndAValidity() throws {
        let notBoolean = try StartAttempt(["--reset-token-validity", "300"], environment: ["ROOST_RESET_TOKEN_REUSE_IF_VALID": "[]"])
        #expect(!notBoolean.started && notBoolean.log.contains("ROOST_RESET_TOKEN_REUSE_IF_VALID"), "\(notBoolean.log)")
        let noValidity = try StartAttempt(["--reset-token-reuse-if-valid"])
        #expect(!noValidity.started && noValidity.log.contains("You cannot use resetTokenReuseIfValid without resetTokenValidityDuration"),
                "\(noValidity.log)")
    }

    // spec: PasswordPolicy.spec.js: should reset password if new password conforms to password policy
    // spec: PasswordPolicy.spec.js: should fail to reset password if the new password does not conform to password policy
    @Test func resetFollowsThePattern() async throws {
        let accounts = try AccountServer(["--password-validator-pattern", "[0-9]+",
                                          "--password-validation-error", "Password should contain at least one digit."])
        let token = try await resetLink(accounts, password: "user1")
        let refused = try reset(accounts, token, "hasnodigit")
        #expect(refused.body == "Found. Redirecting to \(accounts.publicURL)/apps/choose_password?username=user1&token=\(token)"
                + "&id=\(TestServer.applicationId)&error=Password%20should%20contain%20at%20least%20one%20digit.&app=coolapp")
        let accepted = try reset(accounts, token, "has2init")
        #expect(accepted.body == "Found. Redirecting to \(accounts.publicURL)/apps/password_reset_success.html?username=user1")
        _ = try await accounts.api.logIn("user1", "has2init")
    }

    // spec: PasswordPolicy.spec.js: should fail to reset password if the new password contains username and not allowed by password policy
    // spec: PasswordPolicy.spec.js: Should return error when password violates Password Policy and reset through ajax
    // spec: PasswordPolicy.spec.js: should reset password even if the new password contains user name while the policy allows
    @Test func resetAndTheUsername() async throws {
        let strict = try AccountServer(["--password-do-not-allow-username"])
        let token = try await resetLink(strict, password: "r@nd0m")
        let refused = try reset(strict, token, "xuser12")
        #expect(refused.location?.contains("&error=Password%20cannot%20contain%20your%20username.&") == true, "\(refused.head)")
        let ajax = try reset(strict, token, "xuser12", headers: ["X-Requested-With": "XMLHttpRequest"])
        #expect(ajax.status == 400 && ajax.body == #"{"code":-1,"error":"Password cannot contain your username."}"#)
        let lenient = try AccountServer(["--password-validator-pattern", "[0-9]+"])
        let other = try await resetLink(lenient, password: "r@nd0m")
        #expect(try reset(lenient, other, "uuser11").location?.hasSuffix("password_reset_success.html?username=user1") == true)
        _ = try await lenient.api.logIn("user1", "uuser11")
    }

    // spec: PasswordPolicy.spec.js: should fail to reset if the new password is same as the last password
    @Test func resetAndTheHistory() async throws {
        let accounts = try AccountServer(["--max-password-history", "1"])
        let token = try await resetLink(accounts)
        #expect(try reset(accounts, token, "user1").body
                == "Found. Redirecting to \(accounts.publicURL)/apps/choose_password?username=user1&token=\(token)"
                + "&id=\(TestServer.applicationId)&error=New%20password%20should%20not%20be%20the%20same%20as%20last%201%20passwords.&app=coolapp")
        _ = try await accounts.api.logIn("user1", "user1")
    }

    // spec: PasswordPolicy.spec.js: should not keep reset token by default
    @Test func eachRequestMailsANewLink() async throws {
        let accounts = try AccountServer(environment: noResendInterval)  // Roost's resend interval off, as Parse.
        let first = try await resetLink(accounts)
        _ = try await accounts.api.send("POST", "/requestPasswordReset", json: ["email": "user1@parse.com"])
        let second = try #require(token(in: try await accounts.sink.waitForMails(2).last?.link))
        #expect(first != second)
        #expect(try accounts.page("/parse/apps/\(TestServer.applicationId)/request_password_reset?token=\(first)&username=user1").location
                == "\(accounts.publicURL)/apps/invalid_link.html")  // Only the latest link works.
    }
}
