import Foundation
import RoostCore
import Testing

/// Parse Server's spec/RegexVulnerabilities.spec.js over REST and the account pages: a `{"$regex": ...}` where a
/// session token or an account token goes never matches one (tokens are compared as strings), with a real SMTP server.
/// (Parse's "plain token" cases read the token from `_User` with its maintenance key; here it comes from the mail.)
@Suite struct RegexVulnerabilitiesSpecTests {
    private let appId = TestServer.applicationId
    private static let username = "someemail@somedomain.com"

    private func signedUp(_ extra: [String] = []) async throws -> (AccountServer, Account) {
        let accounts = try AccountServer(["--verify-user-emails"] + extra)
        let account = try await accounts.api.signUp(Self.username, "somepassword", ["email": .string(Self.username)])
        return (accounts, account)
    }

    private func emailVerified(_ accounts: AccountServer, _ id: String) async throws -> JSON? {
        try await accounts.api.send("GET", "/users/\(id)", master: true).json["emailVerified"]
    }

    // spec: RegexVulnerabilities.spec.js: should not work with regex
    // spec: RegexVulnerabilities.spec.js: should work with plain token
    @Test func aSessionTokenGivenAsARegexIsInvalid() async throws {
        let (accounts, account) = try await signedUp()
        // As the JS SDK sends a GET: POST with `_method` and the keys in the body, no key header (with an
        // `X-Parse-Application-Id` header, Parse reads no key from the body: `/users/me` then has no session, 209).
        func me(_ token: JSON) async throws -> TestResponse {
            let body: [String: JSON] = ["_ApplicationId": .string(appId), "_JavaScriptKey": .string("test"),
                                        "_SessionToken": token, "_method": .string("GET")]
            return try await accounts.api.server.request("POST", "/users/me", json: .object(body), appId: false)
        }
        let regex = try await me(["$regex": .string(String(account.token.prefix(3)))])
        expectError(regex, 209, "Invalid session token")
        let plain = try await me(.string(account.token))
        #expect(plain.status == 200, "\(plain.text)")
        #expect(plain.json["objectId"]?.stringValue == account.id)
        #expect(plain.json["sessionToken"]?.stringValue == account.token)
        let withHeader = try await accounts.api.send("POST", "/users/me", json: ["_SessionToken": .string(account.token), "_method": "GET"])
        expectError(withHeader, 209, "Invalid session token")
    }

    // spec: RegexVulnerabilities.spec.js: should not work with regex
    // spec: RegexVulnerabilities.spec.js: should work with plain token
    @Test func aVerificationTokenGivenAsARegexVerifiesNothing() async throws {
        let (accounts, account) = try await signedUp()
        let link = try #require(try await accounts.sink.waitForMails(1).first?.link)
        #expect(try await emailVerified(accounts, account.id) == .bool(false))
        _ = try accounts.page("/parse/apps/\(appId)/verify_email?username=\(Self.username)&token[$regex]=")
        _ = try accounts.page("/parse/apps/\(appId)/verify_email?username=\(Self.username)&token%5B%24regex%5D=")
        #expect(try await emailVerified(accounts, account.id) == .bool(false))
        _ = try accounts.page(link)
        #expect(try await emailVerified(accounts, account.id) == .bool(true))
    }

    // spec: RegexVulnerabilities.spec.js: should not work with regex
    // spec: RegexVulnerabilities.spec.js: should work with plain token
    @Test func aResetTokenGivenAsARegexResetsNothing() async throws {
        let (accounts, account) = try await signedUp()
        _ = try await accounts.api.logIn(Self.username, "somepassword")
        _ = try await accounts.sink.waitForMails(1)  // The verification mail.
        let requested = try await accounts.api.send("POST", "/requestPasswordReset", json: ["email": .string(Self.username)])
        #expect(requested.status == 200, "\(requested.text)")
        let link = try #require(try await accounts.sink.waitForMails(2).last?.link)
        let resetToken = try #require(token(in: link))

        let opened = try accounts.page("/parse/apps/\(appId)/request_password_reset?username=\(Self.username)&token[$regex]=")
        #expect(opened.status == 302)
        #expect(opened.location?.hasSuffix("/invalid_link.html") == true, "\(opened.head)")
        // The form's POST with the token as a JSON object (Parse's `request` sends an object body as JSON).
        let body = JSON.object(["token": ["$regex": ""], "username": .string(Self.username), "new_password": "newpassword"]).jsonText
        _ = try RawConnection(port: accounts.port).exchange(
            "POST /parse/apps/\(appId)/request_password_reset HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)")
        expectError(try await accounts.api.send("POST", "/login", json: ["username": .string(Self.username), "password": "newpassword"]),
                    101, "Invalid username/password.")

        let plain = try accounts.page(link)
        #expect(plain.status == 302)
        #expect(plain.location?.contains("/choose_password?token=\(resetToken)&") == true, "\(plain.head)")
        let reset = try accounts.page("/parse/apps/\(appId)/request_password_reset",
                                      form: [("token", resetToken), ("username", Self.username), ("new_password", "newpassword")])
        #expect(reset.status == 302, "\(reset.head)")
        #expect(try await accounts.api.logIn(Self.username, "newpassword").id == account.id)
    }
}
