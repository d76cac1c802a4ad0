import Foundation
import RoostCore
import Testing

/// Parse Server's spec/ParseACL.spec.js over REST. Each spec case signs users up on a fresh server; here the
/// cases of one ACL share a server, each acting on an object of its own.
@Suite struct ParseACLSpecTests {
    private func rw(_ read: Bool = true, _ write: Bool = true) -> JSON {
        var entry: [String: JSON] = [:]
        if read { entry["read"] = true }
        if write { entry["write"] = true }
        return .object(entry)
    }

    /// A TestObject with `acl`, created by `token`'s user.
    private func object(_ api: RecordingServer, acl: JSON, token: String) async throws -> String {
        let created = try await api.send("POST", "/classes/TestObject", json: ["ACL": acl], token: token)
        guard created.status == 201, let id = created.json["objectId"]?.stringValue else {
            throw TestServerError.unexpected(created.status, created.text)
        }
        return id
    }

    /// What the caller of `token` (nil: the public) may do with each object of `acl`: get, find, update, delete.
    private func expectAccess(_ api: RecordingServer, acl: JSON, owner: Account, caller token: String?, read: Bool, write: Bool,
                              sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let id = try await object(api, acl: acl, token: owner.token)
        let get = try await api.send("GET", "/classes/TestObject/\(id)", token: token)
        if read {
            #expect(get.status == 200, sourceLocation: sourceLocation)
            #expect(get.json["ACL"] == acl, sourceLocation: sourceLocation)
        } else {
            expectError(get, 101, "Object not found.", sourceLocation: sourceLocation)
        }
        let found = try await api.send("GET", "/classes/TestObject", token: token,
                                       query: ["where": JSON.object(["objectId": .string(id)]).jsonText])
        #expect(found.json["results"]?.arrayValue?.count == (read ? 1 : 0), sourceLocation: sourceLocation)
        let update = try await api.send("PUT", "/classes/TestObject/\(id)", json: ["foo": "bar"], token: token)
        if write { #expect(update.status == 200, sourceLocation: sourceLocation) } else { expectError(update, 101, sourceLocation: sourceLocation) }
        let delete = try await api.send("DELETE", "/classes/TestObject/\(id)", token: token)
        if write { #expect(delete.status == 200, sourceLocation: sourceLocation) } else { expectError(delete, 101, sourceLocation: sourceLocation) }
        let stored = try await api.send("GET", "/classes/TestObject/\(id)", master: true)
        #expect(stored.status == (write ? 404 : 200), sourceLocation: sourceLocation)
    }

    // spec: ParseACL.spec.js: refresh object with acl
    // spec: ParseACL.spec.js: acl an object owned by one user and public get
    // spec: ParseACL.spec.js: acl an object owned by one user and public find
    // spec: ParseACL.spec.js: acl an object owned by one user and public update
    // spec: ParseACL.spec.js: acl an object owned by one user and public delete
    // spec: ParseACL.spec.js: acl an object owned by one user and logged in get
    // spec: ParseACL.spec.js: acl an object owned by one user and logged in find
    // spec: ParseACL.spec.js: acl an object owned by one user and logged in update
    // spec: ParseACL.spec.js: acl an object owned by one user and logged in delete
    // spec: ParseACL.spec.js: acl making an object publicly readable and public get
    // spec: ParseACL.spec.js: acl making an object publicly readable and public find
    // spec: ParseACL.spec.js: acl making an object publicly readable and public update
    // spec: ParseACL.spec.js: acl making an object publicly readable and public delete
    // spec: ParseACL.spec.js: acl making an object publicly writable and public get
    // spec: ParseACL.spec.js: acl making an object publicly writable and public find
    // spec: ParseACL.spec.js: acl making an object publicly writable and public update
    // spec: ParseACL.spec.js: acl making an object publicly writable and public delete
    // spec: ParseACL.spec.js: acl making an object privately writable (#3194)
    @Test func ownerAndPublic() async throws {
        let api = try RecordingServer()
        let alice = try await api.signUp("alice", "wonderland")
        let own: JSON = [alice.id: rw()]
        let refreshed = try await object(api, acl: own, token: alice.token)
        #expect(try await api.send("GET", "/classes/TestObject/\(refreshed)", token: alice.token).json["ACL"] == own)

        try await expectAccess(api, acl: own, owner: alice, caller: nil, read: false, write: false)
        let again = try await api.logIn("alice", "wonderland")
        try await expectAccess(api, acl: own, owner: alice, caller: again.token, read: true, write: true)

        // Made publicly readable (the SDK saves the changed ACL), then publicly writable.
        for (publicEntry, read, write) in [(rw(true, false), true, false), (rw(false, true), false, true)] {
            let id = try await object(api, acl: own, token: alice.token)
            let acl: JSON = [alice.id: rw(), "*": publicEntry]
            #expect(try await api.send("PUT", "/classes/TestObject/\(id)", json: ["ACL": acl], token: alice.token).status == 200)
            #expect(try await api.send("GET", "/classes/TestObject/\(id)", token: alice.token).json["ACL"] == acl)
            try await expectAccess(api, acl: acl, owner: alice, caller: nil, read: read, write: write)
        }

        // Publicly readable, privately writable: another user may not delete it.
        let bob = try await api.signUp("bob", "burger")
        let id = try await object(api, acl: [alice.id: rw(), "*": rw(true, false)], token: alice.token)
        expectError(try await api.send("DELETE", "/classes/TestObject/\(id)", token: bob.token), 101)
    }

    // spec: ParseACL.spec.js: acl sharing with another user and get
    // spec: ParseACL.spec.js: acl sharing with another user and find
    // spec: ParseACL.spec.js: acl sharing with another user and update
    // spec: ParseACL.spec.js: acl sharing with another user and delete
    // spec: ParseACL.spec.js: acl sharing with another user and public get
    // spec: ParseACL.spec.js: acl sharing with another user and public find
    // spec: ParseACL.spec.js: acl sharing with another user and public update
    // spec: ParseACL.spec.js: acl sharing with another user and public delete
    @Test func sharedWithAnotherUser() async throws {
        let api = try RecordingServer()
        let bob = try await api.signUp("bob", "pass")
        let alice = try await api.signUp("alice", "wonderland")
        let shared: JSON = [alice.id: rw(), bob.id: rw()]
        let bobAgain = try await api.logIn("bob", "pass")
        try await expectAccess(api, acl: shared, owner: alice, caller: bobAgain.token, read: true, write: true)
        try await expectAccess(api, acl: shared, owner: alice, caller: nil, read: false, write: false)
    }

    // spec: ParseACL.spec.js: acl saveAll with permissions
    // spec: ParseACL.spec.js: empty acl works
    // spec: ParseACL.spec.js: query for included object with ACL works
    // spec: ParseACL.spec.js: restricted ACL does not have public access
    @Test func batchesEmptyACLsAndIncludes() async throws {
        let api = try RecordingServer()
        let alice = try await api.signUp("alice", "wonderland")
        let own: JSON = [alice.id: rw()]
        let created = try await api.send("POST", "/batch", json: ["requests": [
            ["method": "POST", "path": "/parse/classes/TestObject", "body": ["ACL": own]],
            ["method": "POST", "path": "/parse/classes/TestObject", "body": ["ACL": own]],
        ]], token: alice.token)
        let ids = try #require(created.json.arrayValue?.compactMap { $0["success"]?["objectId"]?.stringValue })
        #expect(ids.count == 2)
        let updated = try await api.send("POST", "/batch", json: ["requests": .array(ids.map { id -> JSON in
            ["method": "PUT", "path": .string("/parse/classes/TestObject/\(id)"), "body": ["foo": "bar"]]
        })], token: alice.token)
        #expect(updated.json.arrayValue?.allSatisfy { $0["success"] != nil } == true)
        let found = try await api.send("GET", "/classes/TestObject", token: alice.token, query: ["where": #"{"foo":"bar"}"#])
        #expect(found.json["results"]?.arrayValue?.count == 2)

        // A user signed up with an empty ACL still logs in (the server adds the user's own entry).
        _ = try await api.signUp("tdurden", "mayhem", ["ACL": [:], "foo": "bar"])
        #expect(try await api.send("POST", "/login", json: ["username": "tdurden", "password": "mayhem"]).json["foo"] == "bar")

        // A pointed-to object shows its ACL only when included.
        let other = try await api.server.create("TestClass2", ["ACL": ["*": ["read": true]]])
        _ = try await api.server.create("TestClass1", ["other": pointer("TestClass2", other)])
        let plain = try await api.server.results("TestClass1")
        #expect(plain.first?["other"]?["ACL"] == nil)
        let included = try await api.server.results("TestClass1", ["include": "other"])
        #expect(included.first?["other"]?["ACL"] == ["*": ["read": true]])

        _ = try await api.server.create("TestClassMasterACL", ["ACL": [:]])
        #expect(try await api.server.results("TestClassMasterACL").isEmpty)
    }
}
