import Foundation
import RoostCore
import RoostServer
import Testing

/// `POST /sessions`, `PUT /sessions/<id>` and `POST /upgradeToRevocableSession`, as the REST guide's
/// examples call them and Parse Server's `RestWrite.handleSession` answers.
@Suite struct SessionEditTests {
    @Test func creatingASessionGivesANewWorkingToken() async throws {
        let api = try RecordingServer()
        let alice = try await api.signUp("alice", "pw-alice-screate")
        let created = try await api.send("POST", "/sessions", json: ["customField": "value", "installationId": "inst-1"],
                                         token: alice.token)
        #expect(created.status == 201, "\(created.text)")
        let objectId = try #require(created.json["objectId"]?.stringValue)
        let token = try #require(created.json["sessionToken"]?.stringValue)
        #expect(token.hasPrefix("r:") && token != alice.token)
        #expect(created.json["createdWith"] == ["action": "create"])
        #expect(created.json["user"] == pointer("_User", alice.id))
        #expect(created.json["customField"] == "value")
        #expect(created.json["installationId"] == "inst-1")
        #expect(created.json["expiresAt"]?["__type"] == "Date")
        #expect(created.json["createdAt"] == nil)  // Parse's reply (RestWrite.createSession) has none.
        #expect(created.headers["location"] == "http://127.0.0.1:\(api.server.port)/parse/classes/_Session/\(objectId)")

        // The new token is a session of alice's like any other.
        let me = try await api.me(token)
        #expect(me.json["objectId"]?.stringValue == alice.id)
        let session = try await api.send("GET", "/sessions/me", token: token)
        #expect(session.json["objectId"]?.stringValue == objectId)
        #expect(session.json["customField"] == "value")
        // Its custom field can be queried.
        let found = try await api.send("GET", "/sessions", token: alice.token, query: ["where": #"{"customField":"value"}"#])
        #expect(found.json["results"]?.arrayValue?.map { $0["objectId"] } == [.string(objectId)])
        api.expectNeverShown(["pw-alice-screate"])
    }

    @Test func creatingASessionNeedsOneAndKeepsServerFieldsToTheServer() async throws {
        let api = try RecordingServer()
        let alice = try await api.signUp("alice", "pw-alice-srules")
        expectError(try await api.send("POST", "/sessions", json: ["customField": "value"]), 209, "Session token required.")
        expectError(try await api.send("POST", "/sessions", json: ["ACL": ["*": ["read": true]]], token: alice.token),
                    105, "Cannot set ACL on a Session.")
        // Parse would copy a body's sessionToken onto the session; a client must not choose its token.
        expectError(try await api.send("POST", "/sessions", json: ["sessionToken": "r:mine"], token: alice.token), 105)
        expectError(try await api.send("POST", "/sessions", json: ["bad-name": 1], token: alice.token), 105)
        expectError(try await api.send("POST", "/sessions", json: ["installationId": 5], token: alice.token), 111)
        // Naming another user is ignored without the master key: the session is the caller's.
        let bob = try await api.signUp("bob", "pw-bob-srules")
        let other = try await api.send("POST", "/sessions", json: ["user": pointer("_User", bob.id)], token: alice.token)
        #expect(other.status == 201)
        #expect(other.json["user"] == pointer("_User", alice.id))
        // The master key may start a session for any existing user.
        let forBob = try await api.send("POST", "/sessions", json: ["user": pointer("_User", bob.id)], master: true)
        #expect(forBob.status == 201, "\(forBob.text)")
        let bobToken = try #require(forBob.json["sessionToken"]?.stringValue)
        #expect(try await api.me(bobToken).json["username"] == "bob")
        expectError(try await api.send("POST", "/sessions", json: ["user": pointer("_User", "nobodyHere")], master: true), 101)
        api.expectNeverShown(["pw-alice-srules", "pw-bob-srules"])
    }

    @Test func updatingASessionChangesOnlyTheCallersOwn() async throws {
        let api = try RecordingServer()
        let alice = try await api.signUp("alice", "pw-alice-supdate")
        let bob = try await api.signUp("bob", "pw-bob-supdate")
        let aliceSession = try #require(try await api.send("GET", "/sessions/me", token: alice.token).json["objectId"]?.stringValue)
        let bobSession = try #require(try await api.send("GET", "/sessions/me", token: bob.token).json["objectId"]?.stringValue)

        let updated = try await api.send("PUT", "/sessions/\(aliceSession)",
                                         json: ["customField": "value", "visits": ["__op": "Increment", "amount": 2]], token: alice.token)
        #expect(updated.status == 200, "\(updated.text)")
        #expect(isParseISODate(updated.json["updatedAt"]?.stringValue))
        #expect(updated.json["visits"] == 2)
        #expect(keySet(updated.json) == ["updatedAt", "visits"])
        let stored = try await api.send("GET", "/sessions/me", token: alice.token)
        #expect(stored.json["customField"] == "value")
        #expect(stored.json["visits"] == 2)
        #expect(stored.json["updatedAt"] == updated.json["updatedAt"])
        // Deleting a custom field.
        _ = try await api.send("PUT", "/sessions/\(aliceSession)", json: ["customField": ["__op": "Delete"]], token: alice.token)
        #expect(try await api.send("GET", "/sessions/me", token: alice.token).json["customField"] == nil)

        // Someone else's session looks missing; the server's own fields are refused.
        expectError(try await api.send("PUT", "/sessions/\(bobSession)", json: ["customField": "x"], token: alice.token), 101, "Object not found.")
        for field: (String, JSON) in [("sessionToken", "r:x"), ("installationId", "other"), ("ACL", [:]),
                                     ("user", pointer("_User", bob.id)), ("expiresAt", date("2099-01-01T00:00:00.000Z")),
                                     ("createdWith", ["action": "login"])] {
            expectError(try await api.send("PUT", "/sessions/\(aliceSession)", json: [field.0: field.1], token: alice.token), 105)
        }
        // The REST guide's `PUT /sessions/me` has no route in Parse Server: it looks for a session named "me".
        expectError(try await api.send("PUT", "/sessions/me", json: ["customField": "x"], token: alice.token), 101)
        expectError(try await api.send("PUT", "/sessions/\(aliceSession)", json: ["customField": "x"]), 209)
        #expect(try await api.me(alice.token).status == 200)
        #expect(try await api.me(bob.token).status == 200)

        // With the master key: any session, and a past expiry logs that device out.
        let expired = try await api.send("PUT", "/sessions/\(bobSession)",
                                         json: ["expiresAt": date("2020-01-01T00:00:00.000Z")], master: true)
        #expect(expired.status == 200, "\(expired.text)")
        expectError(try await api.me(bob.token), 209)
        api.expectNeverShown(["pw-alice-supdate", "pw-bob-supdate"])
    }

    @Test func upgradingASessionAnswersANewOne() async throws {
        let api = try RecordingServer()
        let alice = try await api.signUp("alice", "pw-alice-upgrade")
        let upgraded = try await api.send("POST", "/upgradeToRevocableSession", token: alice.token)
        #expect(upgraded.status == 200, "\(upgraded.text)")
        let token = try #require(upgraded.json["sessionToken"]?.stringValue)
        #expect(token.hasPrefix("r:") && token != alice.token)
        #expect(upgraded.json["createdWith"] == ["action": "upgrade"])
        #expect(upgraded.json["user"] == pointer("_User", alice.id))
        #expect(upgraded.json["objectId"] == nil)  // As Parse's reply.
        #expect(try await api.me(token).json["username"] == "alice")
        expectError(try await api.send("POST", "/upgradeToRevocableSession"), 101, "invalid session")
        // spec: RevocableSessionsUpgrade.spec.js: should not upgrade bad legacy session token
        let legacy = try await api.send("POST", "/upgradeToRevocableSession", token: "badSessionToken")
        #expect(legacy.status == 400)
        expectError(legacy, 209, "invalid legacy session token")
        expectError(try await api.send("POST", "/upgradeToRevocableSession", token: "r:unknown"), 209, "Invalid session token")
        api.expectNeverShown(["pw-alice-upgrade"])
    }
}
