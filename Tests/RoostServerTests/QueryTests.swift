import Foundation
import RoostCore
import Testing

/// `GET /classes/<C>`: `where` (equality and the basic operators), `order`, `limit`, `skip`, `keys`, `count`.
@Suite struct QueryTests {
    /// Four `Item`s (a–d) with overlapping values, and the two `Player`s they point to.
    struct Fixture {
        let server: TestServer
        let items: [String: String]
        let players: [String]
    }

    func fixture() async throws -> Fixture {
        let server = try TestServer()
        let players = try await server.createAll("Player", [["name": "p1"], ["name": "p2"]])
        let ids = try await server.createAll("Item", [
            ["name": "a", "score": 10, "group": "x", "tags": ["red", "blue"], "done": true,
             "owner": pointer("Player", players[0]), "note": nil, "when": date("2026-01-01T00:00:00.000Z")],
            ["name": "b", "score": 20, "group": "y", "tags": ["green"], "done": false,
             "owner": pointer("Player", players[1]), "when": date("2026-06-01T00:00:00.000Z")],
            ["name": "c", "score": 30, "group": "x", "tags": [], "done": false, "when": date("2027-01-01T00:00:00.000Z")],
            ["name": "d", "score": 20, "group": "x"],
        ])
        return Fixture(server: server, items: Dictionary(uniqueKeysWithValues: zip(["a", "b", "c", "d"], ids)), players: players)
    }

    @Test func equalityOnScalars() async throws {
        let f = try await fixture()
        #expect(try await f.server.values("name", of: "Item", where: ["group": "x"]) == ["a", "c", "d"])
        #expect(try await f.server.values("name", of: "Item", where: ["score": 20]) == ["b", "d"])
        #expect(try await f.server.values("name", of: "Item", where: ["done": false]) == ["b", "c"])
        #expect(try await f.server.values("name", of: "Item", where: ["done": true]) == ["a"])
        #expect(try await f.server.values("name", of: "Item", where: ["group": "x", "score": 20]) == ["d"])
        #expect(try await f.server.values("name", of: "Item", where: ["group": "nope"]) == [])
        #expect(try await f.server.values("name", of: "Item", where: ["objectId": .string(f.items["b"]!)]) == ["b"])
        #expect(try await f.server.values("name", of: "Item", where: [:]) == ["a", "b", "c", "d"])
        #expect(try await f.server.values("name", of: "Item", where: ["when": date("2026-06-01T00:00:00.000Z")]) == ["b"])
    }

    @Test func equalityOnAnArrayFieldMatchesArraysContainingTheValue() async throws {
        let f = try await fixture()
        #expect(try await f.server.values("name", of: "Item", where: ["tags": "red"]) == ["a"])
        #expect(try await f.server.values("name", of: "Item", where: ["tags": "blue"]) == ["a"])
        #expect(try await f.server.values("name", of: "Item", where: ["tags": "green"]) == ["b"])
        #expect(try await f.server.values("name", of: "Item", where: ["tags": "purple"]) == [])
        #expect(try await f.server.values("name", of: "Item", where: ["tags": ["red", "blue"]]) == ["a"])
    }

    @Test func pointerEquality() async throws {
        let f = try await fixture()
        #expect(try await f.server.values("name", of: "Item", where: ["owner": pointer("Player", f.players[0])]) == ["a"])
        #expect(try await f.server.values("name", of: "Item", where: ["owner": pointer("Player", f.players[1])]) == ["b"])
        #expect(try await f.server.values("name", of: "Item", where: ["owner": pointer("Player", "nobody0000")]) == [])
        let fetched = try await f.server.fetch("Item", f.items["a"]!)
        #expect(fetched["owner"] == pointer("Player", f.players[0]))
    }

    @Test func nullMatchesNullOrMissing() async throws {
        let f = try await fixture()
        #expect(try await f.server.values("name", of: "Item", where: ["owner": nil]) == ["c", "d"])
        #expect(try await f.server.values("name", of: "Item", where: ["note": nil]) == ["a", "b", "c", "d"])
        #expect(try await f.server.values("name", of: "Item", where: ["tags": ["$exists": false]]) == ["d"])
        #expect(try await f.server.values("name", of: "Item", where: ["owner": ["$ne": nil]]) == ["a", "b"])
        #expect(try await f.server.values("name", of: "Item", where: ["owner": ["$in": [nil]]]) == ["c", "d"])
        // A field set to null exists.
        #expect(try await f.server.values("name", of: "Item", where: ["note": ["$exists": true]]) == ["a"])
    }

    /// Parse (MongoDB) equality never matches a value of another type: `true` is not `1`, `"20"` is not `20`.
    @Test(arguments: [
        ["done": 1], ["done": 0], ["done": "true"], ["score": "20"], ["score": true], ["name": ["$in": [1, true]]],
        ["tags": 1], ["score": ["20"]],
    ] as [JSON])
    func equalityDoesNotConflateTypes(constraint: JSON) async throws {
        let f = try await fixture()
        let names = try await f.server.values("name", of: "Item", where: constraint)
        #expect(names == [])
    }

    @Test func datesCompareByInstant() async throws {
        let f = try await fixture()
        // The same instant written with an offset.
        #expect(try await f.server.values("name", of: "Item", where: ["when": date("2026-06-01T02:00:00+02:00")]) == ["b"])
        #expect(try await f.server.values("name", of: "Item", where: ["when": date("2026-06-01T00:00:00Z")]) == ["b"])
        // The built-in dates are compared with the Date form.
        let past = date("2020-01-01T00:00:00.000Z")
        let future = date("2100-01-01T00:00:00.000Z")
        #expect(try await f.server.values("name", of: "Item", where: ["createdAt": ["$gt": past]]) == ["a", "b", "c", "d"])
        #expect(try await f.server.values("name", of: "Item", where: ["createdAt": ["$lt": past]]) == [])
        #expect(try await f.server.values("name", of: "Item", where: ["updatedAt": ["$lte": future]]) == ["a", "b", "c", "d"])
        let a = try await f.server.fetch("Item", f.items["a"]!)
        let createdA = date(try #require(a["createdAt"]?.stringValue))
        #expect(try await f.server.values("name", of: "Item", where: ["createdAt": ["$lte": createdA], "name": "a"]) == ["a"])
        for order in ["createdAt", "-updatedAt", "_created_at", "-_updated_at"] {
            #expect(try await f.server.results("Item", ["order": .string(order)]).count == 4, "\(order)")
        }
    }

    @Test func comparisonOperators() async throws {
        let f = try await fixture()
        #expect(try await f.server.values("name", of: "Item", where: ["group": ["$ne": "x"]]) == ["b"])
        // A missing field is "not equal" too.
        #expect(try await f.server.values("name", of: "Item", where: ["done": ["$ne": true]]) == ["b", "c", "d"])
        #expect(try await f.server.values("name", of: "Item", where: ["score": ["$gt": 10, "$lt": 30]]) == ["b", "d"])
        #expect(try await f.server.values("name", of: "Item", where: ["score": ["$gte": 20]]) == ["b", "c", "d"])
        #expect(try await f.server.values("name", of: "Item", where: ["score": ["$lte": 20]]) == ["a", "b", "d"])
        #expect(try await f.server.values("name", of: "Item", where: ["name": ["$lt": "c"]]) == ["a", "b"])
        #expect(try await f.server.values("name", of: "Item", where: ["score": ["$eq": 30]]) == ["c"])
        let march = date("2026-03-01T00:00:00.000Z")
        #expect(try await f.server.values("name", of: "Item", where: ["when": ["$gt": march]]) == ["b", "c"])
        #expect(try await f.server.values("name", of: "Item", where: ["when": ["$lt": march]]) == ["a"])
    }

    @Test func membershipAndExistence() async throws {
        let f = try await fixture()
        #expect(try await f.server.values("name", of: "Item", where: ["name": ["$in": ["a", "c", "zz"]]]) == ["a", "c"])
        #expect(try await f.server.values("name", of: "Item", where: ["score": ["$in": [10, 30]]]) == ["a", "c"])
        #expect(try await f.server.values("name", of: "Item", where: ["group": ["$nin": ["x"]]]) == ["b"])
        #expect(try await f.server.values("name", of: "Item", where: ["done": ["$nin": [true]]]) == ["b", "c", "d"])
        #expect(try await f.server.values("name", of: "Item", where: ["tags": ["$in": ["green", "red"]]]) == ["a", "b"])
        #expect(try await f.server.values("name", of: "Item", where: ["tags": ["$exists": true]]) == ["a", "b", "c"])
        #expect(try await f.server.values("name", of: "Item", where: ["owner": ["$exists": true]]) == ["a", "b"])
        #expect(try await f.server.values("name", of: "Item", where: ["$or": [["name": "a"], ["score": 30]]]) == ["a", "c"])
    }

    @Test func orderByOneOrSeveralKeys() async throws {
        let f = try await fixture()
        func names(_ order: String) async throws -> [String] {
            try await f.server.results("Item", ["order": .string(order)]).map { $0["name"]?.stringValue ?? "?" }
        }
        #expect(try await names("name") == ["a", "b", "c", "d"])
        #expect(try await names("-name") == ["d", "c", "b", "a"])
        #expect(try await names("group,-score") == ["c", "d", "a", "b"])
        #expect(try await names("-group,name") == ["b", "a", "c", "d"])
        #expect(try await names("score,name") == ["a", "b", "d", "c"])
        #expect(try await names("-score,-name") == ["c", "d", "b", "a"])
        // A key that is not in the schema is dropped, as Parse does.
        #expect(try await names("nothingHere,name") == ["a", "b", "c", "d"])
        let badOrder = try await f.server.find("Item", ["order": "a-b"])
        #expect(badOrder.status == 400)
        #expect(badOrder.code == 105)
    }

    @Test func limitSkipAndCount() async throws {
        let server = try TestServer()
        _ = try await server.createAll("Many", (0..<120).map { ["n": .number(Double($0)), "even": .bool($0 % 2 == 0)] })
        #expect(try await server.results("Many").count == 100)
        #expect(try await server.results("Many", ["limit": 120]).count == 120)
        #expect(try await server.results("Many", ["limit": 1000]).count == 120)
        #expect(try await server.results("Many", ["limit": 5]).count == 5)
        #expect(try await server.results("Many", ["limit": 0]).isEmpty)
        #expect(try await server.results("Many", ["skip": 115]).count == 5)
        let page = try await server.results("Many", ["order": "n", "skip": 10, "limit": 3])
        #expect(page.map { $0["n"] } == [10, 11, 12])
        let last = try await server.results("Many", ["order": "-n", "limit": 2])
        #expect(last.map { $0["n"] } == [119, 118])

        let counted = try await server.find("Many", ["count": 1])
        #expect(counted.json["count"] == 120)
        #expect(counted.json["results"]?.arrayValue?.count == 100)
        let onlyCount = try await server.find("Many", ["count": 1, "limit": 0])
        #expect(onlyCount.status == 200)
        #expect(onlyCount.json == ["results": [], "count": 120])
        let filtered = try await server.find("Many", ["count": 1, "limit": 0, "where": ["even": true]])
        #expect(filtered.json == ["results": [], "count": 60])
        // count ignores limit and skip.
        let paged = try await server.find("Many", ["count": 1, "limit": 3, "skip": 100])
        #expect(paged.json["count"] == 120)
        #expect(paged.json["results"]?.arrayValue?.count == 3)
        let noCount = try await server.find("Many", ["limit": 1])
        #expect(noCount.json["count"] == nil)
    }

    @Test func keysSelectFields() async throws {
        let f = try await fixture()
        let results = try await f.server.results("Item", ["keys": "name,score"])
        #expect(results.count == 4)
        for result in results {
            #expect(result.objectValue.map { Set($0.keys) } == ["objectId", "createdAt", "updatedAt", "name", "score"])
        }
        let one = try await f.server.request("GET", "/classes/Item/\(f.items["a"]!)", query: ["keys": "group"])
        #expect(one.json.objectValue.map { Set($0.keys) } == ["objectId", "createdAt", "updatedAt", "group"])
    }

    @Test func queryOnAMissingClassAnswersNoResults() async throws {
        let server = try TestServer()
        let response = try await server.find("NeverWritten", ["where": ["a": 1]])
        #expect(response.status == 200)
        #expect(response.json == ["results": []])
    }

    @Test func unknownQueryParametersAre102() async throws {
        let f = try await fixture()
        let find = try await f.server.find("Item", ["foo": 1])
        #expect(find.status == 400)
        #expect(find.json == ["code": 102, "error": "Invalid parameter for query: foo"])
        let get = try await f.server.request("GET", "/classes/Item/\(f.items["a"]!)", query: ["where": "{}"])
        #expect(get.status == 400)
        #expect(get.json == ["code": 102, "error": "Improper encode of parameter"])
    }

    @Test func malformedConstraints() async throws {
        let f = try await fixture()
        let badKey = try await f.server.find("Item", ["where": ["bad-key": 1]])
        #expect(badKey.status == 400)
        #expect(badKey.code == 105)
        let acl = try await f.server.find("Item", ["where": ["ACL": ["*": ["read": true]]]])
        #expect(acl.json == ["code": 102, "error": "Cannot query on ACL."])
        // Parse: 107 "bad constraint: $foo" and "bad $in value".
        let unknownOperator = try await f.server.find("Item", ["where": ["score": ["$foo": 1]]])
        #expect(unknownOperator.status == 400)
        #expect(unknownOperator.json == ["code": 107, "error": "bad constraint: $foo"])
        let badIn = try await f.server.find("Item", ["where": ["score": ["$in": 1]]])
        #expect(badIn.status == 400)
        #expect(badIn.json == ["code": 107, "error": "bad $in value"])
        let badOr = try await f.server.find("Item", ["where": ["$or": 1]])
        #expect(badOr.code == 102)
    }
}
