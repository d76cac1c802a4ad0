import Foundation
import Roost
import RoostCore
import Testing

@Suite struct SDKUserTests {
    @Test func signUpLogInLogOutAndTheCurrentUserOnDisk() async throws {
        let server = try ServerProcess()
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("roost-device-\(UUID().uuidString)")
        let client = try server.makeClient(storage: storage)
        #expect(client.currentUser == nil)
        let user = try await client.signUp(username: "ann", password: "secret-1", email: "ann@example.com")
        #expect(user.objectId != nil)
        #expect(user.sessionToken?.hasPrefix("r:") == true)
        #expect(client.currentUser === user)
        #expect(!user.isAnonymous)

        // The file is private and holds no password.
        let file = storage.appendingPathComponent("currentUser.json")
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect(!(try String(contentsOf: file, encoding: .utf8)).contains("secret-1"))

        // A new client on the same storage directory is logged in as the same user.
        let relaunched = try server.makeClient(storage: storage)
        let restored = try #require(relaunched.currentUser)
        #expect(restored.objectId == user.objectId)
        #expect(restored.username == "ann")
        #expect(restored.sessionToken == user.sessionToken)
        let note = relaunched.object("Note")
        note.acl = RoostACL(owner: restored)
        try await note.save()  // The restored session works.

        try await relaunched.logOut()
        #expect(relaunched.currentUser == nil)
        #expect(!FileManager.default.fileExists(atPath: file.path))
        let loggedIn = try await relaunched.logIn(username: "ann", password: "secret-1")
        #expect(loggedIn.objectId == user.objectId)
        #expect(try await relaunched.query("Note").count() == 1)
        await #expect(throws: RoostError.server(code: .objectNotFound, message: "Invalid username/password.")) {
            try await relaunched.logIn(username: "ann", password: "wrong")
        }
    }

    @Test func becomeAndAnInvalidSessionClearsTheCachedUser() async throws {
        let server = try ServerProcess()
        let device = try server.makeClient()
        let user = try await device.signUp(username: "bob", password: "pw")
        let other = try server.makeClient()
        let same = try await other.become(sessionToken: try #require(user.sessionToken))
        #expect(same.objectId == user.objectId)

        try await other.logOut()  // Ends the session on the server: `device` now holds a dead token.
        do {
            _ = try await device.query("Anything").find()
            Issue.record("expected 209")
        } catch let error as RoostError {
            #expect(error.code == .invalidSessionToken)
        }
        #expect(device.currentUser == nil)
    }

    @Test func anonymousLogInReturnsToTheSameAccount() async throws {
        let server = try ServerProcess()
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("roost-device-\(UUID().uuidString)")
        let client = try server.makeClient(storage: storage)
        let first = try await client.logInAnonymously()
        #expect(first.isAnonymous)
        try await client.logOut()
        let again = try await client.logInAnonymously()
        #expect(again.objectId == first.objectId)
    }

    @Test func automaticUserWorksOfflineThenIsCreatedByTheFirstSave() async throws {
        let server = try ServerProcess(start: false)  // The server is down.
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("roost-device-\(UUID().uuidString)")
        let client = try server.makeClient(storage: storage)
        client.enableAutomaticUser()
        let user = try #require(client.currentUser)
        #expect(user.isLazy && user.isAnonymous && user.isAuthenticated)
        #expect(user.objectId == nil)

        // After a restart of the app, still the same local user.
        let relaunched = try server.makeClient(storage: storage)
        relaunched.enableAutomaticUser()
        let sameUser = try #require(relaunched.currentUser)
        #expect(sameUser.isLazy)

        try server.start()
        let todo = relaunched.object("Todo")
        todo["title"] = "offline first"
        todo.set("owner", pointerTo: sameUser)
        todo.acl = RoostACL(owner: sameUser)
        try await todo.save()  // Creates the user first, then rewrites the pointer and the ACL.

        let userId = try #require(sameUser.objectId)
        #expect(!sameUser.isLazy)
        #expect(sameUser.sessionToken != nil)
        #expect(todo.pointer(forKey: "owner")?.objectId == userId)
        #expect(todo.acl?.readAccess(forUserId: userId) == true)
        let visible = try await relaunched.query("Todo").find()
        #expect(visible.count == 1)
        let stranger = try server.makeClient()
        #expect(try await stranger.query("Todo").find().isEmpty)  // Owner-only ACL holds.
    }

    @Test func signUpConvertsTheAnonymousUserAndKeepsItsData() async throws {
        let server = try ServerProcess()
        let phone = try server.makeClient()
        phone.enableAutomaticUser()
        let anonymous = try #require(phone.currentUser)
        for title in ["milk", "eggs"] {
            let todo = phone.object("Todo")
            todo["title"] = title
            todo.set("owner", pointerTo: anonymous)
            todo.acl = RoostACL(owner: anonymous)
            try await todo.save()
        }
        let id = try #require(anonymous.objectId)
        let anonymousToken = anonymous.sessionToken

        let converted = try await phone.signUp(username: "carol", password: "pw-carol")
        #expect(converted === anonymous)
        #expect(converted.objectId == id)
        #expect(!converted.isAnonymous)
        #expect(converted.sessionToken != anonymousToken)
        #expect(try await phone.query("Todo").count() == 2)

        let laptop = try server.makeClient()
        let same = try await laptop.logIn(username: "carol", password: "pw-carol")
        #expect(same.objectId == id)
        let todos = try await laptop.query("Todo").whereKey("owner", equalTo: same).find()
        #expect(Set(todos.compactMap { $0["title"] as String? }) == ["milk", "eggs"])
    }

    @Test func aTakenUsernameLeavesTheAnonymousUserExactlyAsItWas() async throws {
        let server = try ServerProcess()
        let other = try server.makeClient()
        try await other.signUp(username: "taken", password: "pw")

        let client = try server.makeClient()
        let anonymous = try await client.logInAnonymously()
        let token = anonymous.sessionToken
        do {
            try await client.signUp(username: "taken", password: "pw2")
            Issue.record("expected 202")
        } catch let error as RoostError {
            #expect(error.code == .usernameTaken)
        }
        let current = try #require(client.currentUser)
        #expect(current === anonymous)
        #expect(current.isAnonymous)
        #expect(current.sessionToken == token)
        #expect(current.username != "taken")
        let probe = client.object("Probe")
        try await probe.save()  // Still logged in with the old session.
    }
}
