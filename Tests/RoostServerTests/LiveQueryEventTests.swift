import Foundation
import RoostCore
import Testing

/// LiveQuery change events end to end: REST writes on the real binary, subscribers on real WebSocket
/// clients (`Tests/LiveQuery/websocket_probe.py`), events decided as parse-server's `_onAfterSave` decides them.
@Suite struct LiveQueryEventTests {
    /// Also with the subscription's fields indexed: on PostgreSQL their declared indexes bring typed columns, which a
    /// version matched as values (`live_row`) does not have.
    @Test(arguments: [false, true]) func createUpdateLeaveEnterDeleteWithKeysAndWatch(indexed: Bool) async throws {
        let server = try TestServer()
        if indexed {
            let created = try await server.request("POST", "/schemas/Score", json: [
                "className": "Score", "fields": ["n": ["type": "Number"], "tag": ["type": "String"]],
                "indexes": ["byN": ["n": 1], "byTag": ["tag": 1]]], master: true)
            #expect(created.status == 200, "\(created.text)")
        }
        let result = try await Probe.run("events", server)
        let id = try #require(result["objectId"]?.stringValue)
        func object(_ fields: [String: JSON]) -> JSON {
            .object(fields.merging(["className": "Score", "objectId": .string(id)]) { $1 })
        }
        let v5: [String: JSON] = ["n": 5, "tag": "a", "other": 1], v6: [String: JSON] = ["n": 6, "tag": "a", "other": 1]
        let v0: [String: JSON] = ["n": 0, "tag": "b", "other": 1], v3: [String: JSON] = ["n": 3, "tag": "b", "other": 1]
        let expected: [JSON] = [
            ["op": "create", "requestId": 1, "object": object(v5)],
            ["op": "create", "requestId": 2, "object": object(["n": 5])],  // keys: built-in fields and `n` only
            ["op": "create", "requestId": 3, "object": object(v5)],
            ["op": "update", "requestId": 1, "object": object(v6), "original": object(v5)],
            ["op": "update", "requestId": 2, "object": object(["n": 6]), "original": object(["n": 5])],
            // Subscription 3 watches `tag`: the update of `n` alone is not sent.
            ["op": "leave", "requestId": 1, "object": object(v0), "original": object(v6)],
            ["op": "leave", "requestId": 2, "object": object(["n": 0]), "original": object(["n": 6])],
            ["op": "update", "requestId": 3, "object": object(v0), "original": object(v6)],
            ["op": "enter", "requestId": 1, "object": object(v3), "original": object(v0)],
            ["op": "enter", "requestId": 2, "object": object(["n": 3]), "original": object(["n": 0])],
            // The second object (n: 1, no tag) matches only subscription 3, whose watched field it does not set.
            ["op": "delete", "requestId": 1, "object": object(v3)],
            ["op": "delete", "requestId": 2, "object": object(["n": 3])],
            ["op": "delete", "requestId": 3, "object": object(v3)],
        ]
        #expect(result["events"] == .array(expected))
    }

    @Test func subscribersSeeOnlyWhatTheirACLsAndRolesLetThemRead() async throws {
        let server = try TestServer(arguments: ["--password-iterations", "1000"])
        let result = try await Probe.run("access", server)
        #expect(result["seen"]?["ann"] == [["create", "editors'"], ["enter", "bob's"], ["leave", "bob's"]],
                "ann reads through her role, enters when granted read access, leaves when it is taken away (with the version she could read)")
        let original = result["enterOriginal"]?.arrayValue?.first?.arrayValue ?? []
        #expect(original.contains("objectId") && !original.contains("text"),
                "ann's enter carries only the identity of the version she could not read: \(original)")
        #expect(result["seen"]?["bob"] == [["create", "bob's"], ["update", "bob's"], ["update", "bob's"], ["update", "bob's, edited"]])
        #expect(result["seen"]?["anonymous"] == [], "public clients see nothing private")
        #expect(result["seen"]?["master"] == [["create", "bob's"], ["create", "editors'"], ["update", "bob's"], ["update", "bob's"],
                                              ["update", "bob's, edited"]])
        #expect(result["refused"] == ["op": "error", "requestId": 8, "code": 119], "a class whose find is master-only refuses the subscription")
        #expect(result["allowed"] == "subscribed")
        #expect(result["userEvent"] == ["enter", ["ACL", "className", "createdAt", "objectId", "updatedAt", "username"]],
                "ann made her user public: bob sees it enter, without her email (REST reads hide it too)")
        #expect(result["ownUserEvent"] == ["update", "ann@example.com"], "ann's own record comes whole, as `GET /users/me`")
    }

    /// Parse re-reads a subscriber's session for its events: a log-out ends them at once (with 209), not at reconnect.
    @Test func aSubscriberWhoLogsOutGetsNoMoreEvents() async throws {
        let server = try TestServer(arguments: ["--password-iterations", "1000"])
        let result = try await Probe.run("revoked", server)
        let before = result["before"]?.arrayValue ?? []
        #expect(before.count == 1 && before.first?["op"] == "create" && before.first?["object"]?["text"] == "before", "\(result)")
        #expect(result["after"] == [["op": "error", "requestId": 1, "code": 209]], "\(result)")
    }

    @Test func eventsComeInCommitOrder() async throws {
        let server = try TestServer()
        let result = try await Probe.run("ordering", server)
        #expect(result["values"] == .array((1...40).map { .number(Double($0)) }), "40 concurrent increments, each seen once, in order")
        #expect(result["ops"] == ["update"])
    }

    @Test func batchesSendEventsARolledBackTransactionSendsNoneAndAReplaySendsNothingNew() async throws {
        let server = try TestServer()
        let result = try await Probe.run("batches", server)
        #expect(result["seen"] == [["create", 1], ["create", 2], ["create", 4], ["create", 5], ["create", 6]],
                "none for the failed transactional batch (k: 3) or the plain batch's failed item; one for a create sent twice under one request id")
        #expect(result["replayed"] == true)
        #expect(result["failed"] == true)
        #expect(result["partial"] == [true, false, true])
    }

    @Test func subscriptionsMatchAsRESTQueriesDoSubqueriesIncluded() async throws {
        let server = try TestServer()
        let result = try await Probe.run("operators", server)
        // Parse's in-memory matcher never matches `$inQuery`; ours runs the query's SQL.
        #expect(result["seen"] == [[1, "Ann"], [2, "Ann"], [3, "Ann"], [3, "Bob"]])
    }
}
