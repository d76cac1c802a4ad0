import Foundation
import RoostCore
import Testing

/// More of Parse Server's spec/ParseQuery.spec.js (see `ParseQuerySpecTests`): the JS SDK's `first`, `get`, `count`,
/// `each`/`eachBatch` and `distinct` written out as the requests the SDK 5.3 sends (`POST` with `_method: GET`, the
/// `where` as an object). `eachBatch` pages with `order=objectId`, `limit=batchSize` and, after a full page,
/// `objectId: {$gt: <last id>}` added to the `where`; its refusals of `order`, `skip` and `limit` ("Cannot iterate on a
/// query with sort, skip, or limit.") happen in the SDK, before any request, and are not carried.
@Suite struct ParseQueryRESTSpecTests {
    /// The objects of `where`, paged as the JS SDK's `eachBatch` pages them; returns them and the number of requests.
    private func eachBatch(_ s: TestServer, _ className: String, where constraint: [String: JSON] = [:], batchSize: Int = 100,
                           extra: [String: JSON] = [:], master: Bool = false) async throws -> (objects: [JSON], requests: Int) {
        var constraint = constraint
        var objects: [JSON] = []
        var requests = 0
        while true {
            var parameters = extra
            parameters["where"] = .object(constraint)
            parameters["limit"] = .number(Double(batchSize))
            parameters["order"] = "objectId"
            let response = try await s.query(className, parameters, master: master, viaBody: true)
            requests += 1
            let page = try #require(response.json["results"]?.arrayValue, "\(response.status) \(response.text)")
            objects += page
            guard page.count >= batchSize, let last = page.last?["objectId"] else { break }
            constraint["objectId"] = ["$gt": last]
        }
        return (objects, requests)
    }

    // spec: ParseQuery.spec.js: get undefined
    /// `query.get(undefined)`: `equalTo('objectId', undefined)` is `doesNotExist`, and `first()` asks for one; no
    /// object lacks an id, so the SDK rejects (101 "Object not found.", made by the SDK from the empty results).
    @Test func gettingAnUndefinedIdFindsNothing() async throws {
        let s = try TestServer()
        _ = try await s.create("TestObject", ["foo": "bar"])
        let response = try await s.query("TestObject", ["where": ["objectId": ["$exists": false]], "limit": 1], viaBody: true)
        #expect(response.status == 200 && response.json == ["results": []], "\(response.text)")
    }

    // spec: ParseQuery.spec.js: async methods
    @Test func firstFindGetAndCount() async throws {
        let s = try TestServer()
        _ = try await s.createAll("TestObject", (1...10).map { ["x": .number(Double($0))] })
        let first = try await s.query("TestObject", ["where": [:], "order": "x", "limit": 1], viaBody: true)
        #expect(first.json["results"]?.arrayValue?.compactMap { $0["x"] } == [1], "\(first.text)")
        let descending = try await s.query("TestObject", ["where": [:], "order": "-x"], viaBody: true)
        let results = try #require(descending.json["results"]?.arrayValue, "\(descending.text)")
        #expect(results.count == 10 && results.first?["x"] == 10)
        let id = try #require(results.first?["objectId"]?.stringValue)
        #expect(try await s.fetch("TestObject", id)["x"] == 10)
        let count = try await s.query("TestObject", ["where": [:], "count": 1, "limit": 0], viaBody: true)
        #expect(count.json == ["results": [], "count": 10], "\(count.text)")
    }

    // spec: ParseQuery.spec.js: query.each
    // spec: ParseQuery.spec.js: query.each async
    /// (The two differ only in the callback, which runs in the SDK: the requests are the same.)
    @Test func eachPagesThroughEveryMatchOnce() async throws {
        let s = try TestServer()
        _ = try await s.createAll("TestObject", (0..<50).map { ["x": .number(Double($0))] })
        let (objects, requests) = try await eachBatch(s, "TestObject", where: ["x": ["$lt": 25]], batchSize: 10)
        #expect(objects.compactMap { $0["x"]?.numberValue.map { Int($0) } }.sorted() == Array(0..<25))
        #expect(requests == 3, "pages of 10, 10 and 5")
    }

    // spec: ParseQuery.spec.js: select keys with each query
    @Test func eachWithSelectedKeysSendsThemAndTheBuiltInFields() async throws {
        let s = try TestServer()
        let id = try await s.create("TestObject", ["foo": "baz", "bar": 1])
        let (objects, _) = try await eachBatch(s, "TestObject", extra: ["keys": "foo"])
        #expect(objects.count == 1)
        let object = try #require(objects.first)
        #expect(object["objectId"] == .string(id))
        #expect(isParseISODate(object["createdAt"]?.stringValue) && isParseISODate(object["updatedAt"]?.stringValue))
        #expect(object["foo"] == "baz")
        #expect(object["bar"] == nil, "\(object)")
    }

    // spec: ParseQuery.spec.js: can set object type key
    /// `object.set('objectField.baz', 50)` sends the dotted key.
    @Test func aDottedKeySetsOneKeyOfAnObjectField() async throws {
        let s = try TestServer()
        let id = try await s.create("TestObject", ["objectField": ["bar": true, "baz": 100]])
        #expect(try await s.fetch("TestObject", id)["objectField"] == ["bar": true, "baz": 100])
        try await s.update("TestObject", id, ["objectField.baz": 50])
        #expect(try await s.fetch("TestObject", id)["objectField"] == ["bar": true, "baz": 50])
    }

    // spec: ParseQuery.spec.js: should query with distinct within eachBatch and direct access enabled
    /// Parse's `directAccess` only routes the SDK's requests inside the process; over HTTP they are the same.
    @Test func distinctOfAPointerMatchInsideAnEachBatch() async throws {
        let s = try TestServer(arguments: fastHashing)
        let user = try await s.signUpAccount("foo", password: "bar")
        _ = try await s.create("Score", ["player": pointer("_User", user.id), "score": 1], token: user.token)
        let (users, _) = try await eachBatch(s, "_User", where: ["objectId": .string(user.id)], master: true)
        #expect(users.compactMap { $0["objectId"]?.stringValue } == [user.id])
        let distinct = try await s.request("POST", "/aggregate/Score", json: [
            "_method": "GET", "distinct": "score", "where": ["player": pointer("_User", user.id)],
        ], master: true)
        #expect(distinct.status == 200 && distinct.json == ["results": [1]], "\(distinct.text)")
    }
}
