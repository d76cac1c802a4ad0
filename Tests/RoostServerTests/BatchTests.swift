import Foundation
import RoostCore
import Testing

/// `POST /batch`: sub-requests answered in order, a 50-request limit, and `"transaction": true`.
@Suite struct BatchTests {
    @Test func mixedSuccessAndErrorsComeBackInOrder() async throws {
        let server = try TestServer()
        let existing = try await server.create("Game", ["score": 1])
        let note = try await server.create("Note", ["text": "hello"])
        let response = try await server.request("POST", "/batch", json: ["requests": [
            ["method": "POST", "path": "/parse/classes/Game", "body": ["score": 2]],
            ["method": "POST", "path": "/parse/classes/Game", "body": ["bad-key": 1]],
            ["method": "PUT", "path": .string("/parse/classes/Game/\(existing)"), "body": ["score": ["__op": "Increment", "amount": 10]]],
            ["method": "GET", "path": "/parse/classes/Game/missing000"],
            ["method": "POST", "path": "/parse/classes/Game", "body": ["score": "not a number"]],
            ["method": "GET", "path": "/parse/classes/Note", "body": ["where": ["text": "hello"]]],
            ["method": "DELETE", "path": .string("/parse/classes/Game/\(existing)")],
            ["method": "POST", "path": "/parse/classes/Game", "body": ["score": ["__op": "Frobnicate"]]],
        ]])
        #expect(response.status == 200)
        let items = try #require(response.json.arrayValue)
        try #require(items.count == 8)

        let created = try #require(items[0]["success"])
        #expect(created.objectValue?.keys.sorted() == ["createdAt", "objectId"])
        #expect(isParseISODate(created["createdAt"]?.stringValue))
        #expect(items[1]["error"]?["code"] == 105)
        #expect(items[2]["success"]?["score"] == 11)
        #expect(isParseISODate(items[2]["success"]?["updatedAt"]?.stringValue))
        #expect(items[3] == ["error": ["code": 101, "error": "Object not found."]])
        #expect(items[4]["error"]?["code"] == 111)
        #expect(items[5]["success"]?["results"]?.arrayValue?.map { $0["objectId"] } == [.string(note)])
        #expect(items[6] == ["success": [:]])
        #expect(items[7] == ["error": ["code": 108, "error": "The Frobnicate operator is not supported yet."]])
        for item in items { #expect(item.objectValue?.count == 1) }

        // The successes were written, the failures were not.
        let newId = try #require(created["objectId"]?.stringValue)
        #expect(try await server.fetch("Game", newId)["score"] == 2)
        #expect(try await server.fetch("Game", existing) == .null)
        #expect(try await server.results("Game").count == 1)
    }

    /// Parse (`batch.js`): an item whose path lacks the mount prefix fails the whole batch with 107.
    @Test(arguments: ["/classes/Game", "/other/classes/Game", "classes/Game", "/parsex/classes/Game"])
    func pathsMustCarryTheMountPrefix(badPath: String) async throws {
        let server = try TestServer()
        let response = try await server.request("POST", "/batch", json: ["requests": [
            ["method": "POST", "path": "/parse/classes/Game", "body": ["score": 1]],
            ["method": "POST", "path": .string(badPath), "body": ["score": 2]],
            ["method": "POST", "path": "/parse/classes/Game", "body": ["score": 3]],
        ]])
        #expect(response.status == 400)
        #expect(response.json == ["code": 107, "error": .string("cannot route batch path \(badPath)")])
        #expect(try await server.find("Game", ["count": 1, "limit": 0]).json["count"] == 0)
        // The same items with proper paths go through.
        let fixed = try await server.request("POST", "/batch", json: ["requests": [
            ["method": "POST", "path": "/parse/classes/Game", "body": ["score": 1]],
        ]])
        #expect(fixed.json.arrayValue?.first?["success"]?["objectId"] != nil)
        // A path under the mount that no route takes: Parse's router names it without the mount.
        let unroutable = try await server.request("POST", "/batch", json: ["requests": [
            ["method": "PATCH", "path": "/parse/classes/Game", "body": ["score": 1]],
        ]])
        #expect(unroutable.json == ["code": 107, "error": "cannot route PATCH /classes/Game"])
    }

    @Test func requestsMustBeAnArray() async throws {
        let server = try TestServer()
        for body: JSON in [[:], ["requests": "x"], ["requests": ["method": "GET"]], ["requests": nil]] {
            let response = try await server.request("POST", "/batch", json: body)
            #expect(response.status == 400, "\(body.jsonText)")
            #expect(response.code == 107, "\(body.jsonText)")
        }
        let empty = try await server.request("POST", "/batch", json: ["requests": []])
        #expect(empty.status == 200)
        #expect(empty.json == [])
    }

    @Test func atMostFiftyRequests() async throws {
        let server = try TestServer()
        func batch(_ count: Int) -> JSON {
            ["requests": .array((0..<count).map { n in
                ["method": "POST", "path": "/parse/classes/Bulk", "body": ["n": .number(Double(n))]]
            })]
        }
        let tooMany = try await server.request("POST", "/batch", json: batch(51))
        #expect(tooMany.status == 400)
        #expect(tooMany.code != nil)
        #expect(tooMany.json["error"]?.stringValue?.isEmpty == false)
        #expect(try await server.find("Bulk", ["count": 1, "limit": 0]).json["count"] == 0)

        let fifty = try await server.request("POST", "/batch", json: batch(50))
        #expect(fifty.status == 200)
        #expect(fifty.json.arrayValue?.count == 50)
        #expect(fifty.json.arrayValue?.allSatisfy { $0["success"]?["objectId"] != nil } == true)
        #expect(try await server.find("Bulk", ["count": 1, "limit": 0]).json["count"] == 50)
    }

    @Test func transactionIsAllOrNothing() async throws {
        let server = try TestServer()
        let existing = try await server.create("Game", ["score": 1])
        let before = try await server.fetch("Game", existing)
        let failing = try await server.request("POST", "/batch", json: [
            "transaction": true,
            "requests": [
                ["method": "POST", "path": "/parse/classes/Game", "body": ["score": 2]],
                ["method": "PUT", "path": .string("/parse/classes/Game/\(existing)"), "body": ["score": 100]],
                ["method": "POST", "path": "/parse/classes/NewClass", "body": ["a": 1]],
                ["method": "PUT", "path": "/parse/classes/Game/missing000", "body": ["score": 3]],
                ["method": "POST", "path": "/parse/classes/Game", "body": ["score": 4]],
            ],
        ])
        #expect(failing.status >= 400)
        #expect(failing.code != nil)
        // Nothing of the batch was written: not the objects, not the update, not the new class.
        #expect(try await server.fetch("Game", existing) == before)
        #expect(try await server.results("Game").count == 1)
        #expect(try await server.request("GET", "/schemas/NewClass", master: true).code == 103)

        let typeError = try await server.request("POST", "/batch", json: [
            "transaction": true,
            "requests": [
                ["method": "POST", "path": "/parse/classes/Game", "body": ["score": 5]],
                ["method": "POST", "path": "/parse/classes/Game", "body": ["score": "five"]],
            ],
        ])
        #expect(typeError.status >= 400)
        #expect(try await server.results("Game").count == 1)

        let succeeding = try await server.request("POST", "/batch", json: [
            "transaction": true,
            "requests": [
                ["method": "POST", "path": "/parse/classes/Game", "body": ["score": 6]],
                ["method": "PUT", "path": .string("/parse/classes/Game/\(existing)"), "body": ["score": ["__op": "Increment", "amount": 1]]],
                ["method": "GET", "path": "/parse/classes/Game", "body": ["where": ["score": 6]]],
            ],
        ])
        #expect(succeeding.status == 200)
        let items = try #require(succeeding.json.arrayValue)
        try #require(items.count == 3)
        #expect(items[0]["success"]?["objectId"] != nil)
        #expect(items[1]["success"]?["score"] == 2)
        // Later sub-requests see earlier writes of the same transaction.
        #expect(items[2]["success"]?["results"]?.arrayValue?.count == 1)
        #expect(try await server.results("Game").count == 2)
        #expect(try await server.fetch("Game", existing)["score"] == 2)
    }

    @Test func nonTransactionalBatchKeepsEarlierWritesWhenALaterOneFails() async throws {
        let server = try TestServer()
        let response = try await server.request("POST", "/batch", json: ["requests": [
            ["method": "POST", "path": "/parse/classes/Game", "body": ["score": 1]],
            ["method": "POST", "path": "/parse/classes/Game", "body": ["score": "x"]],
            ["method": "POST", "path": "/parse/classes/Game", "body": ["score": 3]],
        ]])
        #expect(response.status == 200)
        #expect(response.json.arrayValue?.map { $0.objectValue?.keys.first } == ["success", "error", "success"])
        #expect(try await server.results("Game", ["order": "score"]).map { $0["score"] } == [1, 3])
    }

    @Test func batchNeedsTheApplicationIdAndPassesTheMasterKeyOn() async throws {
        let server = try TestServer()
        let body: JSON = ["requests": [["method": "GET", "path": "/parse/schemas"]]]
        let unauthorized = try await server.request("POST", "/batch", json: body, appId: false)
        #expect(unauthorized.status == 403)
        let plain = try await server.request("POST", "/batch", json: body)
        #expect(plain.json.arrayValue?.first?["error"] != nil)
        let master = try await server.request("POST", "/batch", json: body, master: true)
        // Parse has `_User` and `_Role` from the start.
        let names = master.json.arrayValue?.first?["success"]?["results"]?.arrayValue?.compactMap { $0["className"]?.stringValue }
        #expect(names?.sorted() == ["_Role", "_User"], "\(master.text)")
    }
}
