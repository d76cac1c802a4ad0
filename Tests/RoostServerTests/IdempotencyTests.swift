import Foundation
import RoostCore
import RoostServer
import Testing

/// `X-Parse-Request-Id`: a reply is bound to the request that made it (method, path, body, caller); a
/// different request under a used id gets Parse's 159 and changes nothing; no secret rests in the records.
@Suite struct IdempotencyTests {
    func count(_ server: TestServer, _ className: String) async throws -> Int {
        let response = try await server.request("GET", "/classes/\(className)", master: true, query: ["count": "1", "limit": "0"])
        return Int(response.json["count"]?.numberValue ?? -1)
    }

    func id(_ requestId: String) -> [String: String] { ["X-Parse-Request-Id": requestId] }

    @Test func anIdenticalRepeatOfTheSameUserGetsTheOriginalReply() async throws {
        let s = try RecordingServer()
        let name = uniqueName("owner")
        let owner = try await s.signUp(name, "pw-1")
        let first = try await s.send("POST", "/classes/Note", json: ["text": "hi", "n": 1], token: owner.token, headers: id("same-1"))
        #expect(first.status == 201)
        // The retry comes from a restarted client: its body re-encoded in another key order, a new session of the same user.
        let later = try await s.logIn(name, "pw-1")
        var headers = id("same-1")
        headers["X-Parse-Session-Token"] = later.token
        let again = try await s.server.request("POST", "/classes/Note", body: Data(#"{"n":1,"text":"hi"}"#.utf8), headers: headers)
        #expect(again.status == 201 && again.json == first.json, "\(again.text)")
        #expect(again.headers["location"] == first.headers["location"])
        #expect(try await count(s.server, "Note") == 1)
    }

    @Test func anotherBodyPathMethodOrCallerUnderAUsedIdIs159AndWritesNothing() async throws {
        let s = try RecordingServer()
        let ann = try await s.signUp(uniqueName("ann"), "pw-1")
        let bob = try await s.signUp(uniqueName("bob"), "pw-2")
        let first = try await s.send("POST", "/classes/Note", json: ["text": "ann's"], token: ann.token, headers: id("used-1"))
        #expect(first.status == 201)
        let objectId = try #require(first.json["objectId"]?.stringValue)
        let attempts: [TestResponse] = [
            try await s.send("POST", "/classes/Note", json: ["text": "other"], token: ann.token, headers: id("used-1")),
            try await s.send("POST", "/classes/Other", json: ["text": "ann's"], token: ann.token, headers: id("used-1")),
            try await s.send("PUT", "/classes/Note/\(objectId)", json: ["text": "ann's"], token: ann.token, headers: id("used-1")),
            // Another caller replaying the id learns nothing of ann's reply.
            try await s.send("POST", "/classes/Note", json: ["text": "ann's"], token: bob.token, headers: id("used-1")),
            try await s.send("POST", "/classes/Note", json: ["text": "ann's"], headers: id("used-1")),
            try await s.send("POST", "/classes/Note", json: ["text": "ann's"], master: true, headers: id("used-1")),
        ]
        for attempt in attempts {
            expectError(attempt, 159, "Duplicate request")
            #expect(!attempt.text.contains(objectId))
        }
        #expect(try await count(s.server, "Note") == 1)
        #expect(try await count(s.server, "Other") == 0)
        #expect(try await s.server.fetch("Note", objectId)["text"] == "ann's")
    }

    /// The SDK's queue may send a command inside a `/batch` (its `requestId` per item) and retry it alone
    /// (`X-Parse-Request-Id`): the same request either way.
    @Test func aBatchItemAndALoneRetryAreTheSameRequest() async throws {
        let s = try RecordingServer()
        let ann = try await s.signUp(uniqueName("ann"), "pw-1")
        let batch = try await s.send("POST", "/batch", json: ["requests": [
            ["method": "POST", "path": "/parse/classes/Note", "body": ["text": "queued"], "requestId": "item-1"],
            ["method": "POST", "path": "/parse/classes/Note", "body": ["text": "second"], "requestId": "item-2"],
        ]], token: ann.token)
        let created = try #require(batch.json.arrayValue?.first?["success"])
        let alone = try await s.send("POST", "/classes/Note", json: ["text": "queued"], token: ann.token, headers: id("item-1"))
        #expect(alone.json == created, "\(alone.text)")
        // And a batch item repeating a lone request with another body is refused in the batch's reply.
        let mixed = try await s.send("POST", "/batch", json: ["requests": [
            ["method": "POST", "path": "/parse/classes/Note", "body": ["text": "changed"], "requestId": "item-2"],
        ]], token: ann.token)
        #expect(mixed.json.arrayValue?.first?["error"] == ["code": 159, "error": "Duplicate request"], "\(mixed.text)")
        #expect(try await count(s.server, "Note") == 2)
    }

    /// A sign-up's reply starts a session: it is not kept, so a repeat gets 159 (as every repeat does from Parse)
    /// and no second account; nor is a request carrying a password replayed.
    @Test func repliesWithSecretsAreNotReplayed() async throws {
        let s = try RecordingServer()
        let name = uniqueName("carol")
        let body: JSON = ["username": .string(name), "password": "pw-1"]
        let signUp = try await s.send("POST", "/users", json: body, headers: id("signup-1"))
        #expect(signUp.status == 201)
        let carol = Account(id: try #require(signUp.json["objectId"]?.stringValue), token: try #require(signUp.json["sessionToken"]?.stringValue))
        expectError(try await s.send("POST", "/users", json: body, headers: id("signup-1")), 159, "Duplicate request")
        expectError(try await s.send("POST", "/users", json: ["username": .string(name), "password": "guess"], headers: id("signup-1")),
                    159, "Duplicate request")
        let anonymous: JSON = ["authData": ["anonymous": ["id": .string(newAnonymousId())]]]
        #expect(try await s.send("POST", "/users", json: anonymous, headers: id("anon-1")).status == 201)
        expectError(try await s.send("POST", "/users", json: anonymous, headers: id("anon-1")), 159, "Duplicate request")
        // A password change by the master key answers no token, but its body carries the password.
        let change: JSON = ["password": "pw-2"]
        #expect(try await s.send("PUT", "/users/\(carol.id)", json: change, master: true, headers: id("pw-1")).status == 200)
        expectError(try await s.send("PUT", "/users/\(carol.id)", json: change, master: true, headers: id("pw-1")), 159, "Duplicate request")
        let users = try await s.server.request("GET", "/users", master: true, query: ["count": "1", "limit": "0"])
        #expect(users.json["count"] == 2)
    }

    /// The README's promise: only a SHA-256 of each session token is stored, in every table and in the WAL.
    @Test(.enabled(if: !TestServer.onPostgres, "reads the SQLite file in the data directory"))
    func noSessionTokenRestsInTheDataDirectory() async throws {
        let s = try RecordingServer()
        var tokens: [String] = []
        for index in 0..<4 {
            let name = uniqueName("user\(index)")
            let response = try await s.send("POST", "/users", json: ["username": .string(name), "password": "pw"],
                                            headers: id("signup-\(index)"))
            tokens.append(try #require(response.json["sessionToken"]?.stringValue))
            tokens.append(try await s.logIn(name, "pw", headers: id("login-\(index)")).token)
            let anonymous = try await s.send("POST", "/users", json: ["authData": ["anonymous": ["id": .string(newAnonymousId())]]],
                                             headers: id("anon-\(index)"))
            tokens.append(try #require(anonymous.json["sessionToken"]?.stringValue))
            let batch = try await s.send("POST", "/batch", json: ["requests": [
                ["method": "POST", "path": "/parse/users", "body": ["username": .string(name + "b"), "password": "pw"], "requestId": .string("b-\(index)")],
            ]], headers: id("batch-\(index)"))
            tokens.append(try #require(batch.json.arrayValue?.first?["success"]?["sessionToken"]?.stringValue))
        }
        let stored = try s.storedBytes()
        for token in tokens {
            #expect(stored.range(of: Data(token.utf8)) == nil, "\(token) is stored in plain text")
            #expect(stored.range(of: Data(SessionToken.digest(token).utf8)) != nil, "the digest of \(token) is not stored")
        }
    }
}
