import Foundation
import RoostCore
import Testing

/// Parse Server's spec/VerifyUserPassword.spec.js over REST: `GET /verifyPassword` with the credentials in the query
/// string (as the spec's `qs`), `POST` with them in a JSON body.
@Suite struct VerifyUserPasswordSpecTests {
    private static let fixture: [String: JSON] = ["email": "my@user.com"]

    /// `GET /verifyPassword?username=...&password=...` (or `email=`), as the spec's `verifyPassword` helper sends it.
    private func verify(_ api: RecordingServer, _ login: String, _ password: String, isEmail: Bool = false) async throws -> TestResponse {
        try await api.send("GET", "/verifyPassword", query: [isEmail ? "email" : "username": login, "password": password])
    }

    /// The user, without a session or a password: what a verified password answers.
    private func expectUser(_ response: TestResponse, _ id: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.status == 200, "\(response.text)", sourceLocation: sourceLocation)
        #expect(response.json["objectId"]?.stringValue != nil, sourceLocation: sourceLocation)
        if let id { #expect(response.json["objectId"]?.stringValue == id, sourceLocation: sourceLocation) }
        #expect(response.json["sessionToken"] == nil, sourceLocation: sourceLocation)
        #expect(response.json["password"] == nil, sourceLocation: sourceLocation)
    }

    // spec: VerifyUserPassword.spec.js: fails to verify password when masterKey has locked out user
    @Test func aUserLockedByAnEmptyACLIsNotFound() async throws {
        let api = try RecordingServer()
        let user = try await api.signUp("testuser", "mypass", ["ACL": [:]])
        _ = try await api.logIn("testuser", "mypass")
        let locked = try await api.send("PUT", "/users/\(user.id)", json: ["ACL": [:]], master: true)
        #expect(locked.status == 200, "\(locked.text)")
        let response = try await verify(api, "testuser", "mypass")
        expectError(response, 101, "Invalid username/password.")
        #expect(response.text == #"{"code":101,"error":"Invalid username/password."}"#)
    }

    // spec: VerifyUserPassword.spec.js: fails to verify password when username is not provided in query string REST API
    // spec: VerifyUserPassword.spec.js: fails to verify password when email is not provided in query string REST API
    // spec: VerifyUserPassword.spec.js: fails to verify password when username is not provided with json payload REST API
    // spec: VerifyUserPassword.spec.js: fails to verify password when email is not provided with json payload REST API
    // spec: VerifyUserPassword.spec.js: fails to verify password when password is not provided with json payload REST API
    @Test func missingCredentialsAreRefused() async throws {
        let api = try RecordingServer()
        _ = try await api.signUp("testuser", "mypass", Self.fixture)
        for isEmail in [false, true] {
            let response = try await verify(api, "", "mypass", isEmail: isEmail)
            expectError(response, 200, "username/email is required.")
            #expect(response.text == #"{"code":200,"error":"username/email is required."}"#)
            let posted = try await api.send("POST", "/verifyPassword", json: [isEmail ? "email" : "username": "", "password": "mypass"])
            expectError(posted, 200, "username/email is required.")
        }
        let noPassword = try await verify(api, "testuser", "")
        expectError(noPassword, 201, "password is required.")
        #expect(noPassword.text == #"{"code":201,"error":"password is required."}"#)
    }

    // spec: VerifyUserPassword.spec.js: fails to verify password when username matches but password does not match hash with json payload REST API
    // spec: VerifyUserPassword.spec.js: fails to verify password when email matches but password does not match hash with json payload REST API
    // spec: VerifyUserPassword.spec.js: fails to verify password when typeof username does not equal string REST API
    // spec: VerifyUserPassword.spec.js: fails to verify password when typeof email does not equal string REST API
    // spec: VerifyUserPassword.spec.js: fails to verify password when typeof password does not equal string REST API
    // spec: VerifyUserPassword.spec.js: fails to verify password when username cannot be found REST API
    // spec: VerifyUserPassword.spec.js: fails to verify password when email cannot be found REST API
    @Test func wrongOrUnknownCredentialsAreInvalid() async throws {
        let api = try RecordingServer()
        _ = try await api.signUp("testuser", "mypass", Self.fixture)
        // The spec's numbers go in its query string: `123`, a string that matches nothing.
        for (login, password, isEmail) in [("testuser", "wrong password", false), ("my@user.com", "wrong password", true),
                                           ("123", "mypass", false), ("123", "mypass", true), ("my@user.com", "123", true),
                                           ("mytestuser", "mypass", false), ("nobody@user.com", "mypass", true)] {
            let response = try await verify(api, login, password, isEmail: isEmail)
            #expect(response.status == 404, "\(login) \(password)")
            #expect(response.text == #"{"code":101,"error":"Invalid username/password."}"#, "\(login) \(password): \(response.text)")
        }
        // Numbers in a JSON body are not strings: the same answer (Parse's type check in `_authenticateUserFromRequest`).
        for body: JSON in [["username": 123, "password": "mypass"], ["email": 123, "password": "mypass"],
                           ["email": "my@user.com", "password": 123]] {
            expectError(try await api.send("POST", "/verifyPassword", json: body), 101, "Invalid username/password.")
        }
    }

    // spec: VerifyUserPassword.spec.js: fails to verify password when preventLoginWithUnverifiedEmail is set to true REST API
    @Test func anUnverifiedEmailIsRefusedWhenLogInsNeedOne() async throws {
        let accounts = try AccountServer(["--verify-user-emails", "--prevent-login-with-unverified-email"])
        _ = try await accounts.api.send("POST", "/users", json: ["username": "unverified-user", "password": "mypass",
                                                                "email": "unverified-email@example.com"])
        let response = try await verify(accounts.api, "unverified-email@example.com", "mypass", isEmail: true)
        #expect(response.status == 400)
        #expect(response.json == ["code": 205, "error": "User email is not verified."])
    }

    // spec: VerifyUserPassword.spec.js: verify password lock account if failed verify password attempts are above threshold
    @Test func failedVerificationsLockTheAccount() async throws {
        let api = try RecordingServer(arguments: fastHashing + ["--account-lockout-threshold", "2", "--account-lockout-duration", "1"])
        _ = try await api.signUp("testuser", "mypass", Self.fixture)
        for _ in 0..<3 { _ = try await verify(api, "testuser", "wrong password") }
        let logIn = try await api.send("POST", "/login", json: ["username": "testuser", "password": "wrong password"])
        expectError(logIn, 101,
                    "Your account is locked due to multiple failed login attempts. Please try again after 1 minute(s)")
    }

    // spec: VerifyUserPassword.spec.js: succeed in verifying password when username and email are provided and password matches hash with json payload REST API
    // spec: VerifyUserPassword.spec.js: succeed in verifying password when username and password matches hash with json payload REST API
    // spec: VerifyUserPassword.spec.js: succeed in verifying password when email and password matches hash with json payload REST API
    // spec: VerifyUserPassword.spec.js: succeed to verify password when username and password provided in query string REST API
    // spec: VerifyUserPassword.spec.js: succeed to verify password when email and password provided in query string REST API
    @Test func rightCredentialsAnswerTheUserWithoutASession() async throws {
        let api = try RecordingServer()
        let user = try await api.signUp("testuser", "mypass", Self.fixture)
        expectUser(try await api.send("GET", "/verifyPassword",
                                      query: ["username": "testuser", "email": "my@user.com", "password": "mypass"]), user.id)
        expectUser(try await verify(api, "testuser", "mypass"), user.id)
        expectUser(try await verify(api, "my@user.com", "mypass", isEmail: true), user.id)
        expectUser(try await api.send("POST", "/verifyPassword", json: ["username": "testuser", "password": "mypass"]), user.id)
        expectUser(try await api.send("POST", "/verifyPassword", json: ["email": "my@user.com", "password": "mypass"]), user.id)
        api.expectNeverShown(["mypass"])
    }

    // spec: VerifyUserPassword.spec.js: succeed to verify password with username when user1 has username === user2 email REST API
    @Test func aUsernameThatIsAnotherUsersEmailFindsItsOwner() async throws {
        let api = try RecordingServer()
        let first = try await api.signUp("email@user.com", "mypass1", ["email": "1@user.com"])
        _ = try await api.signUp("user2", "mypass2", ["email": "email@user.com"])
        expectUser(try await verify(api, "email@user.com", "mypass1"), first.id)
    }

    // spec: VerifyUserPassword.spec.js: verify password of user with unverified email with master key and ignoreEmailVerification=true
    // spec: VerifyUserPassword.spec.js: fails to verify password of user with unverified email with master key and ignoreEmailVerification=false
    @Test func theMasterKeyMayIgnoreEmailVerification() async throws {
        let accounts = try AccountServer(["--verify-user-emails", "--prevent-login-with-unverified-email"])
        let signUp = try await accounts.api.send("POST", "/users", json: ["username": "user", "password": "pass", "email": "test@example.com"])
        let id = try #require(signUp.json["objectId"]?.stringValue, "\(signUp.text)")
        let ignored = try await accounts.api.send("POST", "/verifyPassword", json: ["username": "user", "password": "pass",
                                                                                    "ignoreEmailVerification": true], master: true)
        expectUser(ignored, id)
        let checked = try await accounts.api.send("POST", "/verifyPassword", json: ["username": "user", "password": "pass",
                                                                                    "ignoreEmailVerification": false], master: true)
        #expect(checked.status == 400)
        #expect(checked.text.contains("User email is not verified"), "\(checked.text)")
    }
}
