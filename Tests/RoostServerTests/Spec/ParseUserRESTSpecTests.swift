import Foundation
import RoostCore
import Testing

/// Parse Server's spec/ParseUser.spec.js: cases carried after `ParseUserSpecTests`, checked by hand over REST first.
/// The provider cases run with anonymous auth data, the one provider Roost has (the spec's use a mocked Facebook
/// login): what they assert of the REST answers does not depend on the provider.
@Suite struct ParseUserRESTSpecTests {
    private static let anonymousId = "44444444-0000-0000-0000-000000000001"

    // spec: ParseUser.spec.js: log in with provider with files
    /// A log-in by auth data answers the whole user, its files with their URLs, as a password log-in does.
    @Test func aLogInByAuthDataAnswersFileURLs() async throws {
        let server = try TestServer(arguments: fastHashing)
        let upload = try await server.request("POST", "/files/yolo.txt", body: Data("abc".utf8),
                                              headers: ["Content-Type": "text/plain"], master: true)
        let name = try #require(upload.json["name"]?.stringValue, "\(upload.text)")
        let authData: JSON = ["anonymous": ["id": .string(Self.anonymousId)]]
        let signedUp = try await server.request("POST", "/users", json: ["file": ["__type": "File", "name": .string(name)], "authData": authData])
        #expect(signedUp.status == 201, "\(signedUp.text)")
        let loggedIn = try await server.request("POST", "/users", json: ["authData": authData])
        #expect(loggedIn.status == 200, "\(loggedIn.text)")
        let url = loggedIn.json["file"]?["url"]?.stringValue ?? ""
        #expect(url == "\(server.baseURL)/files/\(TestServer.applicationId)/\(name)" && url.hasSuffix("yolo.txt"), "\(loggedIn.text)")
    }

    // spec: ParseUser.spec.js: link with provider should return sessionToken
    // spec: ParseUser.spec.js: link with provider via sessionToken should not create new sessionToken (Regression #5799)
    /// Auth data linked with the master key logs the user in (a new session, `createdWith` a log-in by the provider);
    /// linked through the user's own session, no new session is made.
    @Test func linkingWithTheMasterKeyStartsASession() async throws {
        let server = try TestServer(arguments: fastHashing)
        let user = try await server.request("POST", "/users", json: ["username": "linker", "password": "mypass"])
        let id = try #require(user.json["objectId"]?.stringValue)
        let token = try #require(user.json["sessionToken"]?.stringValue)
        let linked = try await server.request("PUT", "/users/\(id)", json: ["authData": ["anonymous": ["id": .string(Self.anonymousId)]]],
                                              master: true)
        let newToken = try #require(linked.json["sessionToken"]?.stringValue, "\(linked.text)")
        #expect(newToken != token && linked.json["updatedAt"] != nil)
        let me = try await server.request("GET", "/sessions/me", headers: ["X-Parse-Session-Token": newToken])
        #expect(me.json["createdWith"] == ["action": "login", "authProvider": "anonymous"], "\(me.text)")

        let other = try await server.request("PUT", "/users/\(id)", json: ["authData": ["anonymous": ["id": "55555555-0000-0000-0000-000000000001"]]],
                                             headers: ["X-Parse-Session-Token": token])
        #expect(other.status == 200 && other.json["sessionToken"] == nil, "\(other.text)")
        let sessions = try await server.request("GET", "/classes/_Session", master: true, query: ["where": "{\"user\":{\"__type\":\"Pointer\",\"className\":\"_User\",\"objectId\":\"\(id)\"}}"])
        #expect(sessions.json["results"]?.arrayValue?.count == 2, "\(sessions.text)")
    }

    // spec: ParseUser.spec.js: should not retrieve hidden fields on GET users/me (#3432)
    // spec: ParseUser.spec.js: should not retrieve hidden fields on GET users/id (#3432)
    // spec: ParseUser.spec.js: should not retrieve hidden fields on login (#3432)
    /// With email verification on, a user reads `emailVerified: false` and never the verification token.
    @Test func hiddenFieldsStayHidden() async throws {
        let accounts = try AccountServer(["--verify-user-emails"])
        let user = try await accounts.api.signUp("hello", "world", ["email": "test@email.com"])
        let me = try await accounts.api.me(user.token)
        let byId = try await accounts.api.send("GET", "/users/\(user.id)", token: user.token)
        let login = try await accounts.api.send("GET", "/login", query: ["username": "hello", "password": "world"])
        for (name, response) in [("me", me), ("by id", byId), ("login", login)] {
            #expect(response.json["emailVerified"] == false, "\(name): \(response.text)")
            #expect(!response.text.contains("_email_verify_token") && !response.text.contains("verify"), "\(name): \(response.text)")
        }
    }

    // spec: ParseUser.spec.js: should not revoke session tokens if the server is configures to not revoke session tokens
    @Test(arguments: [true, false])
    func aPasswordChangeRevokesSessionsAsConfigured(revokes: Bool) async throws {
        let server = try TestServer(arguments: fastHashing + (revokes ? [] : ["--no-revoke-session-on-password-reset"]))
        let anonymous = try await server.request("POST", "/classes/_User", json: ["authData": ["anonymous": ["id": .string(Self.anonymousId)]]])
        let id = try #require(anonymous.json["objectId"]?.stringValue, "\(anonymous.text)")
        let token = try #require(anonymous.json["sessionToken"]?.stringValue)
        let session = ["X-Parse-Session-Token": token]
        let object = try await server.request("POST", "/classes/TestObject", json: ["ACL": .object([id: ["read": true, "write": true]])],
                                              headers: session)
        let objectId = try #require(object.json["objectId"]?.stringValue, "\(object.text)")
        let changed = try await server.request("PUT", "/classes/_User/\(id)", json: ["username": "no longer anonymous", "password": "password"],
                                               headers: session)
        #expect(changed.status == 200 && changed.json["sessionToken"]?.stringValue != nil, "\(changed.text)")
        let fetched = try await server.request("GET", "/classes/TestObject/\(objectId)", headers: session)
        if revokes {
            expectError(fetched, 209, "Invalid session token")
        } else {
            #expect(fetched.status == 200 && fetched.json["objectId"] == .string(objectId), "\(fetched.text)")
        }
    }
}
