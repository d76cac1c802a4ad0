import Foundation
import RoostCore
import Testing

/// The options of `GET /classes/<C>`: `order`, `limit` (and `--max-limit`), `skip`, `keys`,
/// `excludeKeys`, `count`.
@Suite struct QueryOptionTests {
    /// Five `Row`s created one request after another, so `createdAt` never decreases along `r0`…`r4`.
    func rows() async throws -> (TestServer, [String]) {
        let server = try TestServer()
        var ids: [String] = []
        let values: [(String, Double, String)] = [("r0", 3, "b"), ("r1", 1, "a"), ("r2", 2, "b"), ("r3", 5, "a"), ("r4", 4, "c")]
        for (name, n, group) in values {
            ids.append(try await server.create("Row", ["name": .string(name), "n": .number(n), "group": .string(group),
                                                       "secret": .string("s-\(name)"), "extra": ["deep": .string(name)]]))
        }
        return (server, ids)
    }

    @Test func orderByCommaListAndDescending() async throws {
        let (server, _) = try await rows()
        #expect(try await server.orderedNames("Row", ["order": "n"]) == ["r1", "r2", "r0", "r4", "r3"])
        #expect(try await server.orderedNames("Row", ["order": "-n"]) == ["r3", "r4", "r0", "r2", "r1"])
        #expect(try await server.orderedNames("Row", ["order": "group,-n"]) == ["r3", "r1", "r0", "r2", "r4"])
        #expect(try await server.orderedNames("Row", ["order": "-group,n"]) == ["r4", "r2", "r0", "r1", "r3"])
        // Spaces around the terms are ignored, as Parse trims them.
        #expect(try await server.orderedNames("Row", ["order": "group, -n"]) == ["r3", "r1", "r0", "r2", "r4"])
        // A field that is not in the schema is silently ignored.
        #expect(try await server.orderedNames("Row", ["order": "nothing,-n"]) == ["r3", "r4", "r0", "r2", "r1"])
        #expect(try await server.orderedNames("Row", ["order": "-nothing"]).count == 5)
        // With a where, a limit and a skip.
        #expect(try await server.orderedNames("Row", ["where": ["group": "b"], "order": "-n"]) == ["r0", "r2"])
        #expect(try await server.orderedNames("Row", ["order": "n", "skip": 1, "limit": 2]) == ["r2", "r0"])
        // Order through the SDK's POST form, with `order` as a string.
        let body = try await server.query("Row", ["order": "-n", "limit": 2], viaBody: true)
        #expect(body.json["results"]?.arrayValue?.map { $0["name"] } == ["r3", "r4"])
    }

    @Test func orderByBuiltInKeys() async throws {
        let (server, ids) = try await rows()
        func values(_ order: String, _ key: String) async throws -> [String] {
            try await server.orderedNames("Row", ["order": .string(order)], key: key)
        }
        let created = try await values("createdAt", "createdAt")
        #expect(created.count == 5)
        #expect(created == created.sorted())
        #expect(try await values("createdAt", "name") == ["r0", "r1", "r2", "r3", "r4"] || Set(created).count < 5)
        let newestFirst = try await values("-createdAt", "createdAt")
        #expect(newestFirst == created.sorted(by: >))
        // updatedAt: touch r1 last, so it is the most recently updated.
        try await server.update("Row", ids[1], ["touched": true])
        let newest = try await server.queryResults("Row", ["order": "-updatedAt"])
        let stamps = newest.compactMap { $0["updatedAt"]?.stringValue }
        #expect(stamps.count == 5)
        #expect(stamps == stamps.sorted(by: >))
        #expect(newest.first { $0["name"] == "r1" }?["updatedAt"]?.stringValue == stamps.first)
        let updatedAscending = try await values("updatedAt", "updatedAt")
        #expect(updatedAscending == updatedAscending.sorted())
        // objectId.
        #expect(try await values("objectId", "objectId") == ids.sorted())
        #expect(try await values("-objectId", "objectId") == ids.sorted(by: >))
    }

    @Test func limitAndSkip() async throws {
        let server = try TestServer()
        _ = try await server.createAll("Many", (0..<130).map { ["n": .number(Double($0))] })
        // Default limit: 100.
        #expect(try await server.queryResults("Many").count == 100)
        #expect(try await server.queryResults("Many", ["limit": 130]).count == 130)
        #expect(try await server.queryResults("Many", ["limit": 7]).count == 7)
        #expect(try await server.queryResults("Many", ["limit": 0]).isEmpty)
        #expect(try await server.queryResults("Many", ["skip": 125]).count == 5)
        #expect(try await server.queryResults("Many", ["skip": 500]).isEmpty)
        let page = try await server.queryResults("Many", ["order": "-n", "skip": 20, "limit": 3]).map { $0["n"] }
        #expect(page == [109, 108, 107])
        // Numbers sent as strings in a body, as some SDKs do.
        let body = try await server.query("Many", ["limit": "2", "skip": "3", "order": "n"], viaBody: true)
        #expect(body.json["results"]?.arrayValue?.map { $0["n"] } == [3, 4])
    }

    @Test func maxLimitClampsLargerLimits() async throws {
        let server = try TestServer(arguments: ["--max-limit", "5"])
        _ = try await server.createAll("Many", (0..<12).map { ["n": .number(Double($0))] })
        #expect(try await server.queryResults("Many", ["limit": 100]).count == 5)
        #expect(try await server.queryResults("Many", ["limit": 6]).count == 5)
        #expect(try await server.queryResults("Many", ["limit": 3]).count == 3)
        #expect(try await server.queryResults("Many", ["limit": 5, "skip": 10]).count == 2)
        let page = try await server.queryResults("Many", ["limit": 1000, "order": "n", "skip": 5]).map { $0["n"] }
        #expect(page == [5, 6, 7, 8, 9])
        // The count is not clamped.
        let counted = try await server.query("Many", ["count": 1, "limit": 50])
        #expect(counted.json["count"] == 12)
        #expect(counted.json["results"]?.arrayValue?.count == 5)
        #expect(try await server.query("Many", ["count": 1, "limit": 0]).json == ["results": [], "count": 12])
    }

    @Test func countWithLimitZero() async throws {
        let (server, _) = try await rows()
        #expect(try await server.query("Row", ["count": 1, "limit": 0]).json == ["results": [], "count": 5])
        #expect(try await server.query("Row", ["count": 1, "limit": 0, "where": ["group": "b"]]).json == ["results": [], "count": 2])
        #expect(try await server.query("Row", ["count": 1, "limit": 0, "where": ["group": "zz"]]).json == ["results": [], "count": 0])
        #expect(try await server.query("Row", ["count": "true", "limit": 0]).json == ["results": [], "count": 5])
        let both = try await server.query("Row", ["count": 1, "limit": 2, "order": "n"])
        #expect(both.json["count"] == 5)
        #expect(both.json["results"]?.arrayValue?.map { $0["name"] } == ["r1", "r2"])
        // The SDK form.
        let body = try await server.query("Row", ["count": 1, "limit": 0, "where": ["n": ["$gt": 2]]], viaBody: true)
        #expect(body.json == ["results": [], "count": 3])
        // count=0 is off.
        #expect(try await server.query("Row", ["count": 0, "limit": 1]).json["count"] == nil)
    }

    @Test func keysSelectFields() async throws {
        let (server, _) = try await rows()
        let results = try await server.queryResults("Row", ["keys": "name,n", "order": "n"])
        #expect(results.count == 5)
        for result in results {
            #expect(keySet(result) == ["objectId", "createdAt", "updatedAt", "name", "n"])
        }
        #expect(results.first?["name"] == "r1")
        // As a JSON array in the SDK's POST form.
        let body = try await server.query("Row", ["keys": ["group"], "limit": 1], viaBody: true)
        #expect(keySet(body.json["results"]?.arrayValue?.first) == ["objectId", "createdAt", "updatedAt", "group"])
        // A key that does not exist selects nothing more.
        let none = try await server.queryResults("Row", ["keys": "nothing", "limit": 1])
        #expect(keySet(none.first) == ["objectId", "createdAt", "updatedAt"])
        // A dot path into an Object field returns the Object field.
        let deep = try await server.queryResults("Row", ["keys": "extra.deep", "where": ["name": "r2"]])
        #expect(deep.first?["extra"]?["deep"] == "r2")
        #expect(deep.first?["name"] == nil)
    }

    /// A `keys` entry made only of dots names no field: it is ignored, in finds, gets and batches alike.
    /// (It split into no parts, and the include loop's range `1..<0` crashed the server.)
    @Test func keysOfOnlyDotsAreIgnored() async throws {
        let (server, ids) = try await rows()
        for keys in [".", "..", "name,.", "a,..,name"] {
            let found = try await server.request("GET", "/classes/Row", query: ["keys": keys, "where": #"{"name":"r2"}"#])
            #expect(found.status == 200, "\(keys): \(found.text)")
            let expected: Set<String> = keys.contains("name") ? ["objectId", "createdAt", "updatedAt", "name"]
                : ["objectId", "createdAt", "updatedAt"]
            #expect(keySet(found.json["results"]?.arrayValue?.first) == expected, "\(keys)")
        }
        let got = try await server.request("GET", "/classes/Row/\(ids[0])", query: ["keys": "."])
        #expect(got.status == 200)
        #expect(got.json["objectId"] == .string(ids[0]))
        let batch = try await server.request("POST", "/batch", json: [
            "requests": [["method": "GET", "path": "/parse/classes/Row", "body": ["keys": "."]]],
        ])
        #expect(batch.status == 200)
        #expect(batch.json.arrayValue?.first?["success"]?["results"]?.arrayValue?.count == 5)
        #expect(try await server.request("GET", "/health").status == 200)  // Still serving.
    }

    @Test func excludeKeysDropsFields() async throws {
        let (server, ids) = try await rows()
        let results = try await server.queryResults("Row", ["excludeKeys": "secret,extra"])
        #expect(results.count == 5)
        for result in results {
            #expect(keySet(result) == ["objectId", "createdAt", "updatedAt", "name", "n", "group"])
        }
        // The built-in keys cannot be excluded.
        let builtIn = try await server.queryResults("Row", ["excludeKeys": "objectId,createdAt,name", "where": ["name": "r0"]])
        #expect(keySet(builtIn.first) == ["objectId", "createdAt", "updatedAt", "n", "group", "secret", "extra"])
        // On a single-object get.
        let one = try await server.request("GET", "/classes/Row/\(ids[0])", query: ["excludeKeys": "secret"])
        #expect(one.status == 200)
        #expect(one.json["secret"] == nil)
        #expect(one.json["name"] == "r0")
        // keys and excludeKeys together.
        let both = try await server.queryResults("Row", ["keys": "name,secret", "excludeKeys": "secret", "limit": 1])
        #expect(keySet(both.first) == ["objectId", "createdAt", "updatedAt", "name"])
    }
}
