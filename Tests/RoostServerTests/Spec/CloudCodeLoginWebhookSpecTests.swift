import Foundation
import RoostCore
import Testing

/// Parse Server's spec/CloudCode.spec.js `describe('beforeLogin hook')` and `describe('afterLogin hook')`, carried
/// through webhooks (see `CloudCodeWebhookSpecTests`): `beforeLogin` and `afterLogin` on `_User`, `afterLogout` on
/// `_Session`. "does not crash server when throwing in afterLogin/afterLogout hook" are not carried: they expect the
/// JS trigger's own error code (2000), and a webhook's error is 141 in Parse too.
@Suite struct CloudCodeLoginWebhookSpecTests {
    private func makeServer() throws -> TestServer { try TestServer(arguments: fastHashing) }

    private func trigger(_ server: TestServer, _ className: String, _ triggerName: String, _ hook: ScriptedWebhook) async throws {
        try await server.addTrigger(className, triggerName, url: hook.url)
    }

    private func logIn(_ server: TestServer, _ username: String, _ password: String) async throws -> TestResponse {
        try await server.request("POST", "/login", json: ["username": .string(username), "password": .string(password)],
                                 headers: ["X-Parse-Installation-Id": "install-1"])
    }

    /// Waits (up to 30 s, the whole suite can be slow) for `count` posts: `after` hooks are told in the background.
    private func posts(_ hook: ScriptedWebhook, count: Int) async throws -> [JSON] {
        for _ in 0..<300 where hook.requests.count < count { try await Task.sleep(for: .milliseconds(100)) }
        return hook.requests
    }

    // spec: CloudCode.spec.js: should run beforeLogin with correct credentials
    @Test func beforeLoginRunsOnALogIn() async throws {
        let server = try makeServer()
        let hook = try ScriptedWebhook { _ in .success([:]) }
        try await trigger(server, "_User", "beforeLogin", hook)
        _ = try await server.signUpAccount("tupac", password: "shakur")
        let user = try await logIn(server, "tupac", "shakur")
        #expect(user.status == 200 && user.json["username"] == "tupac" && user.json["sessionToken"]?.stringValue != nil, "\(user.text)")
        #expect(hook.requests.count == 1 && hook.requests.first?["object"]?["username"] == "tupac", "\(hook.requests)")
    }

    // spec: CloudCode.spec.js: should be able to block login if an error is thrown
    @Test func beforeLoginMayRefuseALogIn() async throws {
        let server = try makeServer()
        let hook = try ScriptedWebhook { body in body["object"]?["isBanned"] == true ? .error("banned account") : .success([:]) }
        try await trigger(server, "_User", "beforeLogin", hook)
        let account = try await server.signUpAccount("tupac", password: "shakur")
        let banned = try await server.request("PUT", "/users/\(account.id)", json: ["isBanned": true],
                                              headers: ["X-Parse-Session-Token": account.token])
        #expect(banned.status == 200, "\(banned.text)")
        expectParseError(try await logIn(server, "tupac", "shakur"), 141, "banned account")
        #expect(hook.requests.count == 1)
        // No session was started for the refused log-in.
        let sessions = try await server.request("GET", "/classes/_Session", master: true, query: ["count": "1", "limit": "0"])
        #expect(sessions.json["count"] == 1, "\(sessions.text)")
    }

    // spec: CloudCode.spec.js: should be able to block login if an error is thrown even if the user has a attached file
    @Test func beforeLoginMayRefuseAUserWithAFile() async throws {
        let server = try makeServer()
        let hook = try ScriptedWebhook { body in body["object"]?["isBanned"] == true ? .error("banned account") : .success([:]) }
        try await trigger(server, "_User", "beforeLogin", hook)
        let account = try await server.signUpAccount("tupac", password: "shakur")
        let headers = ["X-Parse-Session-Token": account.token]
        let file = try await server.request("POST", "/files/file.txt", body: Data("Hello".utf8), headers: headers.merging(["Content-Type": "text/plain"]) { $1 })
        let name = try #require(file.json["name"]?.stringValue, "\(file.text)")
        let saved = try await server.request("PUT", "/users/\(account.id)", json: [
            "isBanned": true, "file": ["__type": "File", "name": .string(name)],
        ], headers: headers)
        #expect(saved.status == 200, "\(saved.text)")
        expectParseError(try await logIn(server, "tupac", "shakur"), 141, "banned account")
        #expect(hook.requests.count == 1 && hook.requests.first?["object"]?["file"]?["name"] == .string(name), "\(hook.requests)")
    }

    // spec: CloudCode.spec.js: should not run beforeLogin with incorrect credentials
    // spec: CloudCode.spec.js: should not run beforeLogin on sign up
    // spec: CloudCode.spec.js: should not run afterLogin after unsuccessful login
    // spec: CloudCode.spec.js: should not run afterLogin on sign up
    @Test(arguments: ["beforeLogin", "afterLogin"])
    func loginHooksRunOnlyOnALogInThatSucceeds(triggerName: String) async throws {
        let server = try makeServer()
        let hook = try ScriptedWebhook { _ in .success([:]) }
        try await trigger(server, "_User", triggerName, hook)
        _ = try await server.signUpAccount("tupac", password: "shakur")
        expectError(try await logIn(server, "tony", "shakur"), 101, "Invalid username/password.")
        expectError(try await logIn(server, "tupac", "badpassword"), 101, "Invalid username/password.")
        try await Task.sleep(for: .milliseconds(300))  // Room for a wrong `afterLogin` notice to arrive.
        #expect(hook.requests.isEmpty)
    }

    // spec: CloudCode.spec.js: should have expected data in request in beforeLogin
    @Test func beforeLoginIsToldTheRequest() async throws {
        let server = try makeServer()
        let hook = try ScriptedWebhook { _ in .success([:]) }
        try await trigger(server, "_User", "beforeLogin", hook)
        _ = try await server.signUpAccount("tupac", password: "shakur")
        #expect(try await logIn(server, "tupac", "shakur").status == 200)
        let told = try #require(hook.requests.first)
        #expect(told["triggerName"] == "beforeLogin" && told["object"]?["className"] == "_User", "\(told.jsonText)")
        #expect(told["user"] == nil && told["object"]?["password"] == nil && told["object"]?["sessionToken"] == nil, "\(told.jsonText)")
        #expect(told["headers"]?.objectValue != nil && told["ip"]?.stringValue != nil && told["installationId"] == "install-1"
                && told["context"] != nil, "\(told.jsonText)")
    }

    // spec: CloudCode.spec.js: should trigger afterLogout hook on logout
    @Test func afterLogoutIsToldTheSession() async throws {
        let server = try makeServer()
        let hook = try ScriptedWebhook { _ in .success([:]) }
        try await trigger(server, "_Session", "afterLogout", hook)
        let account = try await server.signUpAccount("user", password: "pass")
        let session = try await server.request("GET", "/sessions/me", headers: ["X-Parse-Session-Token": account.token])
        let out = try await server.request("POST", "/logout", headers: ["X-Parse-Session-Token": account.token])
        #expect(out.status == 200 && out.json == [:], "\(out.text)")
        let told = try #require(try await posts(hook, count: 1).first)
        #expect(told["triggerName"] == "afterLogout" && told["object"]?["className"] == "_Session", "\(told.jsonText)")
        #expect(told["object"]?["objectId"] == session.json["objectId"] && told["object"]?["user"]?["objectId"] == .string(account.id),
                "\(told.jsonText)")
        #expect(told["object"]?["sessionToken"] == nil)  // Never posted: tokens are stored hashed.
    }

    // spec: CloudCode.spec.js: should run afterLogin after successful login
    // spec: CloudCode.spec.js: should have expected data in request in afterLogin
    @Test func afterLoginIsToldTheUser() async throws {
        let server = try makeServer()
        let hook = try ScriptedWebhook { _ in .success([:]) }
        try await trigger(server, "_User", "afterLogin", hook)
        let account = try await server.signUpAccount("testuser", password: "p@ssword")
        let user = try await logIn(server, "testuser", "p@ssword")
        #expect(user.status == 200 && user.json["username"] == "testuser" && user.json["sessionToken"]?.stringValue != nil, "\(user.text)")
        let told = try #require(try await posts(hook, count: 1).first)
        #expect(told["triggerName"] == "afterLogin" && told["object"]?["username"] == "testuser", "\(told.jsonText)")
        #expect(told["user"]?["objectId"] == .string(account.id) && told["headers"]?.objectValue != nil && told["ip"]?.stringValue != nil
                && told["installationId"] == "install-1" && told["context"] != nil, "\(told.jsonText)")
        #expect(hook.requests.count == 1)
    }

    /// Which system-class triggers Roost takes: Parse's login and logout ones, on the classes Parse allows them on.
    @Test func loginTriggersGoOnUserAndSessionOnly() async throws {
        let server = try makeServer()
        let refusal: JSON = ["code": 143, "error": "Roost runs afterDelete, afterSave, beforeDelete, beforeFind, beforeSave webhooks on the app's own classes, the save and delete ones on _User and _Role, beforeLogin and afterLogin on _User, afterLogout on _Session."]
        for (className, triggerName) in [("Thing", "beforeLogin"), ("_Session", "afterLogin"), ("_User", "afterLogout"), ("_Installation", "beforeSave")] {
            let response = try await server.request("POST", "/hooks/triggers", json: [
                "className": .string(className), "triggerName": .string(triggerName), "url": "http://127.0.0.1:9/hook",
            ], master: true)
            #expect(response.json == refusal, "\(className).\(triggerName): \(response.text)")
        }
        let listed = try await server.request("POST", "/hooks/triggers", json: [
            "className": "_User", "triggerName": "beforeLogin", "url": "http://127.0.0.1:9/hook",
        ], master: true)
        #expect(listed.json == ["className": "_User", "triggerName": "beforeLogin", "url": "http://127.0.0.1:9/hook"], "\(listed.text)")
    }
}
