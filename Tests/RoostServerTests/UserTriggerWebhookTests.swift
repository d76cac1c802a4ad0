import Foundation
import RoostCore
import Testing

/// Save and delete trigger webhooks on `_User` (`UserTriggers`): run on sign-ups, anonymous sign-ups, updates,
/// conversions and deletions, as Parse runs them on any class, without ever showing the hook a password.
@Suite struct UserTriggerWebhookTests {
    /// Waits (up to 30 s: the whole suite can be slow) for `count` posts to an `after` hook, told in the background.
    private func posts(_ hook: ScriptedWebhook, count: Int) async throws -> [JSON] {
        for _ in 0..<300 where hook.requests.count < count { try await Task.sleep(for: .milliseconds(100)) }
        return hook.requests
    }

    /// A `beforeSave` that adds `nickname` (answered back and stored) and tries to set a password (ignored), and
    /// refuses the username `refused`; the sign-up keeps the client's password and starts a session.
    @Test func aSignUpRunsTheSaveHooksWithoutShowingThePassword() async throws {
        let server = try TestServer(arguments: fastHashing)
        let before = try ScriptedWebhook { posted in
            posted["object"]?["username"] == "refused" ? .error("no such name")
                : .echo(posted, ["nickname": "nick", "password": "set-by-hook"])
        }
        let after = try ScriptedWebhook { _ in .success(true) }
        try await server.addTrigger("_User", "beforeSave", url: before.url)
        try await server.addTrigger("_User", "afterSave", url: after.url)

        let signUp = try await server.request("POST", "/users", json: ["username": "alice", "password": "client-secret", "email": "a@example.com"])
        #expect(signUp.status == 201 && signUp.json["nickname"] == "nick" && signUp.json["sessionToken"]?.stringValue != nil, "\(signUp.text)")
        let id = try #require(signUp.json["objectId"]?.stringValue)
        let shown = try #require(before.requests.first)
        #expect(shown["triggerName"] == "beforeSave" && shown["object"]?["className"] == "_User" && shown["original"] == nil, "\(shown.jsonText)")
        #expect(shown["object"]?["username"] == "alice" && shown["object"]?["email"] == "a@example.com")
        #expect(!shown.jsonText.contains("client-secret") && shown["object"]?["password"] == nil, "\(shown.jsonText)")
        #expect(try await server.request("POST", "/login", json: ["username": "alice", "password": "client-secret"]).status == 200)
        #expect(try await server.request("POST", "/login", json: ["username": "alice", "password": "set-by-hook"]).code == 101)
        #expect(try await server.request("GET", "/users/\(id)", master: true).json["nickname"] == "nick")
        let told = try #require(try await posts(after, count: 1).first)
        #expect(told["object"]?["objectId"] == .string(id) && told["object"]?["nickname"] == "nick" && !told.jsonText.contains("client-secret"))

        expectParseError(try await server.request("POST", "/users", json: ["username": "refused", "password": "pw"]), 141, "no such name")
        let users = try await server.request("GET", "/users", master: true, query: ["where": #"{"username":"refused"}"#])
        #expect(users.json["results"]?.arrayValue?.isEmpty == true, "\(users.text)")
    }

    /// An update shows the hook the user as it would be and as it was; a conversion of an anonymous user is an update;
    /// a new anonymous user is a save, its log-in again is not.
    @Test func updatesConversionsAndAnonymousSignUpsRunTheHook() async throws {
        let server = try TestServer(arguments: fastHashing)
        let before = try ScriptedWebhook { posted in .echo(posted, ["seen": .bool(posted["original"] != nil)]) }
        try await server.addTrigger("_User", "beforeSave", url: before.url)

        let anonymous = try await server.request("POST", "/users", json: ["authData": ["anonymous": ["id": "anon-1"]]])
        #expect(anonymous.status == 201 && anonymous.json["seen"] == false, "\(anonymous.text)")
        let token = try #require(anonymous.json["sessionToken"]?.stringValue)
        let id = try #require(anonymous.json["objectId"]?.stringValue)
        #expect(try await server.request("POST", "/users", json: ["authData": ["anonymous": ["id": "anon-1"]]]).status == 200)
        #expect(before.requests.count == 1)  // The log-in ran no hook.

        let session = ["X-Parse-Session-Token": token]
        let updated = try await server.request("PUT", "/users/\(id)", json: ["score": 3], headers: session)
        #expect(updated.status == 200 && updated.json["seen"] == true, "\(updated.text)")
        #expect(before.requests.last?["original"]?["objectId"] == .string(id) && before.requests.last?["object"]?["score"] == 3)

        let converted = try await server.request("POST", "/users", json: ["username": "bob", "password": "pw-bob"], headers: session)
        #expect(converted.status == 201 && converted.json["objectId"] == .string(id), "\(converted.text)")
        let conversion = try #require(before.requests.last)
        #expect(conversion["original"] != nil && conversion["object"]?["username"] == "bob" && !conversion.jsonText.contains("pw-bob"),
                "\(conversion.jsonText)")
        #expect(try await server.request("POST", "/login", json: ["username": "bob", "password": "pw-bob"]).status == 200)
        #expect(try await server.request("GET", "/users/\(id)", master: true).json["seen"] == true)
    }

    // spec: ParseUser.spec.js: should aftersave with full object
    /// `afterSave` is told of the whole user, on the sign-up and on an update that names one other field.
    @Test func afterSaveIsToldOfTheWholeUser() async throws {
        let server = try TestServer(arguments: fastHashing)
        let after = try ScriptedWebhook { _ in .success(true) }
        try await server.addTrigger("_User", "afterSave", url: after.url)
        let user = try await server.signUpAccount("User")
        #expect(try await server.request("PUT", "/users/\(user.id)", json: ["hello": "world"],
                                         headers: ["X-Parse-Session-Token": user.token]).status == 200)
        let told = try await posts(after, count: 2)
        #expect(told.count == 2 && told.allSatisfy { $0["object"]?["username"] == "User" }, "\(told.map(\.jsonText))")
        #expect(told.last?["object"]?["hello"] == "world" && told.last?["original"]?["hello"] == nil)
    }

    /// `beforeDelete` refuses a user's deletion (nothing is deleted); `afterDelete` is told of one.
    @Test func theDeleteHooksRunOnAUsersDeletion() async throws {
        let server = try TestServer(arguments: fastHashing)
        let before = try ScriptedWebhook { posted in posted["object"]?["username"] == "kept" ? .error("keep this one") : .success(true) }
        let after = try ScriptedWebhook { _ in .success(true) }
        try await server.addTrigger("_User", "beforeDelete", url: before.url)
        try await server.addTrigger("_User", "afterDelete", url: after.url)
        let kept = try await server.signUpAccount("kept"), gone = try await server.signUpAccount("gone")

        expectParseError(try await server.request("DELETE", "/users/\(kept.id)", headers: ["X-Parse-Session-Token": kept.token]),
                         141, "keep this one")
        #expect(try await server.request("GET", "/users/\(kept.id)", master: true).status == 200)
        #expect(try await server.request("DELETE", "/users/\(gone.id)", headers: ["X-Parse-Session-Token": gone.token]).status == 200)
        let told = try #require(try await posts(after, count: 1).first)
        #expect(told["triggerName"] == "afterDelete" && told["object"]?["objectId"] == .string(gone.id), "\(told.jsonText)")
        // Another user's deletion is refused before the hook is asked, as a write would be.
        let stranger = try await server.signUpAccount("stranger")
        let refused = try await server.request("DELETE", "/users/\(kept.id)", headers: ["X-Parse-Session-Token": stranger.token])
        #expect(refused.code == 206, "\(refused.text)")
        #expect(before.requests.count == 2)
    }
}
