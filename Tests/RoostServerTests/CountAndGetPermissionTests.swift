import Foundation
import RoostCore
import Testing

/// A query that counts is a `count`, and one whose `where` is exactly one objectId is a `get`, as Parse
/// Server decides (`DatabaseController.find`: `op = count ? 'count' : objectId alone ? 'get' : 'find'`;
/// `RestQuery.runCount` counts in a second query of its own). Their class-level permissions apply to them.
@Suite struct CountAndGetPermissionTests {
    func find(_ api: RecordingServer, _ className: String, _ parameters: [String: String], token: String? = nil) async throws -> TestResponse {
        try await api.send("GET", "/classes/\(className)", token: token, query: parameters)
    }

    @Test func countingNeedsTheCountPermissionWhateverTheLimit() async throws {
        let api = try RecordingServer()
        let ids = try await api.server.createAll("Tally", [["n": 1], ["n": 2], ["n": 3]])
        let put = try await api.send("PUT", "/schemas/Tally", json: ["classLevelPermissions": ["find": ["*": true], "get": ["*": true], "count": [:]]],
                                     master: true)
        #expect(put.status == 200, "\(put.text)")
        let refusal = "Permission denied for action count on class Tally."
        for parameters in [["count": "1", "limit": "0"], ["count": "1", "limit": "1"], ["count": "1"],
                           ["count": "1", "where": #"{"objectId":"\#(ids[0])"}"#]] {
            expectError(try await find(api, "Tally", parameters), 119, refusal)
        }
        // Finding without counting is still allowed; the master key counts.
        #expect(try await find(api, "Tally", ["limit": "1"]).json["results"]?.arrayValue?.count == 1)
        let master = try await api.send("GET", "/classes/Tally", master: true, query: ["count": "1", "limit": "1"])
        #expect(master.json["count"] == 3)

        // A count limited by `pointerFields` counts only the caller's objects, though they may find all.
        let dana = try await api.signUp("dana", "pw-dana")
        _ = try await api.send("POST", "/classes/Tally", json: ["n": 4, "owner": pointer("_User", dana.id)], master: true)
        _ = try await api.send("PUT", "/schemas/Tally", json: ["classLevelPermissions": openPermissions(["count": ["pointerFields": ["owner"]]])], master: true)
        let counted = try await find(api, "Tally", ["count": "1", "limit": "10"], token: dana.token)
        #expect(counted.json["count"] == 1, "\(counted.text)")
        #expect(counted.json["results"]?.arrayValue?.count == 4)
    }

    @Test func aQueryForOneObjectIdIsAGet() async throws {
        let api = try RecordingServer()
        let ids = try await api.server.createAll("Note", [["text": "a"], ["text": "b"]])
        let only: [String: String] = ["where": #"{"objectId":"\#(ids[0])"}"#]

        // `get` closed, `find` open: asking for one objectId is refused like a get.
        _ = try await api.send("PUT", "/schemas/Note", json: ["classLevelPermissions": ["find": ["*": true], "get": [:]]], master: true)
        expectError(try await api.send("GET", "/classes/Note/\(ids[0])"), 119, "Permission denied for action get on class Note.")
        expectError(try await find(api, "Note", only), 119, "Permission denied for action get on class Note.")
        // Any other query is a find (as in Parse, `{"objectId":{"$eq":…}}` or a second key make it one).
        #expect(try await find(api, "Note", [:]).json["results"]?.arrayValue?.count == 2)
        #expect(try await find(api, "Note", ["where": #"{"objectId":"\#(ids[0])","text":"a"}"#]).json["results"]?.arrayValue?.count == 1)

        // `find` closed, `get` open: the same query is allowed, as a get; others are refused.
        _ = try await api.send("PUT", "/schemas/Note", json: ["classLevelPermissions": ["find": [:], "get": ["*": true]]], master: true)
        let got = try await find(api, "Note", only)
        #expect(got.status == 200, "\(got.text)")
        #expect(got.json["results"]?.arrayValue?.map { $0["text"] } == ["a"])
        expectError(try await find(api, "Note", ["where": #"{"text":"a"}"#]), 119, "Permission denied for action find on class Note.")

        // A get limited by `pointerFields` finds only the caller's object that way.
        let erin = try await api.signUp("erin", "pw-erin")
        let mine = try await api.send("POST", "/classes/Note", json: ["text": "mine", "owner": pointer("_User", erin.id)], master: true)
        let mineId = try #require(mine.json["objectId"]?.stringValue)
        _ = try await api.send("PUT", "/schemas/Note", json: ["classLevelPermissions": openPermissions(["get": ["pointerFields": ["owner"]]])], master: true)
        #expect(try await find(api, "Note", ["where": #"{"objectId":"\#(mineId)"}"#], token: erin.token).json["results"]?.arrayValue?.count == 1)
        #expect(try await find(api, "Note", only, token: erin.token).json["results"]?.arrayValue?.count == 0)
    }
}
