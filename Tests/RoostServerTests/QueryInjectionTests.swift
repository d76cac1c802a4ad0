import Foundation
import RoostCore
import Testing

/// SQL injection attempts through every part of a query are harmless: the answer is the one Parse gives
/// (an error naming the bad part, or the correct results), nothing is changed, and the server keeps serving.
@Suite struct QueryInjectionTests {
    /// Queries `Keep` both ways (URL parameters and the SDK's POST body) and returns both responses.
    func bothWays(_ sentinel: Sentinel, _ parameters: [String: JSON]) async throws -> [TestResponse] {
        [
            try await sentinel.server.query(sentinel.className, parameters),
            try await sentinel.server.query(sentinel.className, parameters, viaBody: true),
        ]
    }

    /// Records an issue unless `response` is a Parse error (400 with one of `codes`) or a success whose
    /// results are exactly the sentinel objects listed in `expected` (by objectId), with no field the
    /// sentinel does not have.
    func expectHarmless(_ response: TestResponse, _ sentinel: Sentinel, expected: [String]?, codes: Set<Int>,
                        sourceLocation: SourceLocation = #_sourceLocation) {
        if response.status == 400 {
            #expect(response.code.map(codes.contains) == true, "\(response.text)", sourceLocation: sourceLocation)
            return
        }
        #expect(response.status == 200, "\(response.status) \(response.text)", sourceLocation: sourceLocation)
        let results = response.json["results"]?.arrayValue ?? []
        if let expected {
            #expect(results.compactMap { $0["objectId"]?.stringValue } == expected, "\(response.text)",
                    sourceLocation: sourceLocation)
        }
        let allowed = keySet(sentinel.original)
        for result in results {
            #expect(keySet(result).isSubset(of: allowed), "\(response.text)", sourceLocation: sourceLocation)
        }
    }

    static let hostileKeys = [
        "a') OR 1=1 --", "title' OR '1'='1", "n); DROP TABLE Keep; --", "meta.k') OR 1=1 --", "title\"", "title`",
        "$.title", "title[0]", "title'||'", "n/**/OR/**/1=1", "objectId' OR '1'='1", "title\u{0}", "meta.k'",
    ]

    @Test(arguments: hostileKeys)
    func sqlInWhereKeysIs105(key: String) async throws {
        let sentinel = try await Sentinel()
        for response in try await bothWays(sentinel, ["where": [key: 1]]) {
            expectParseError(response, 105, "Invalid key name: \(key)")
        }
        // Nested in $or, $and, $nor, and in a subquery.
        let nested: [JSON] = [
            ["$or": [[key: 1], ["n": 1]]], ["$and": [["n": 1], [key: ["$exists": true]]]], ["$nor": [[key: "x"]]],
            ["owner": ["$inQuery": ["className": "Keep", "where": [key: 1]]]],
            ["title": ["$select": ["query": ["className": "Keep", "where": [key: 1]], "key": "title"]]],
        ]
        for constraint in nested {
            let response = try await sentinel.server.query(sentinel.className, ["where": constraint], viaBody: true)
            expectParseError(response, 105, "Invalid key name: \(key)")
        }
        try await sentinel.expectIntact()
    }

    /// Hostile values, and how many objects (0 or the sentinel) Parse finds with each.
    static let hostileValues: [(JSON, Int)] = [
        (["title": "x' OR '1'='1"], 0),
        (["title": "original' --"], 0),
        (["title": "original\u{0}' OR 1=1 --"], 0),
        (["title": "\\' OR 1=1 --"], 0),
        (["title": "%"], 0),
        (["title": "_riginal"], 0),
        (["title": "*"], 0),
        (["title": ["$ne": "'; DROP TABLE Keep; --"]], 1),
        (["title": ["$in": ["original", "') OR 1=1 --"]]], 1),
        (["title": ["$nin": ["original", "') OR 1=1 --"]]], 0),
        (["title": ["$gt": "original' OR 1=1"]], 0),
        (["n": ["$in": ["1) OR 1=1 --"]]], 0),
        (["n": ["$gt": "0 OR 1=1"]], 0),
        (["n": "1 OR 1=1"], 0),
        (["objectId": "x' OR '1'='1"], 0),
        (["objectId": ["$in": ["x') OR ('1'='1"]]], 0),
        (["owner": pointer("Player", "p' OR 1=1 --")], 0),
        (["tags": "a' OR 1=1 --"], 0),
        (["tags": ["$all": ["a", "') OR 1=1 --"]]], 0),
        (["meta.k": "v' OR 1=1 --"], 0),
        (["meta.k": "v"], 1),
        (["meta": ["k": "v' OR 1=1"]], 0),
        (["$or": [["title": "x' OR 1=1"], ["n": ["$in": ["1; DROP TABLE Keep"]]]]], 0),
        (["title": ["$select": ["query": ["className": "Keep", "where": ["title": "original' OR 1=1"]], "key": "title"]]], 0),
        (["title": ["$regex": "' OR 1=1 --"]], 0),
        (["title": ["$regex": ".*'\\); DROP TABLE Keep; --"]], 0),
        (["title": ["$regex": "%"]], 0),
        (["title": ["$regex": "^orig"]], 1),
        (["title": ["$regex": "^ORIG", "$options": "i"]], 1),
        (["title": ["$regex": "\\Q') OR 1=1 --\\E"]], 0),
    ]

    @Test(arguments: hostileValues)
    func sqlInValuesAndRegexesMatchOnlyLiterally(constraint: JSON, count: Int) async throws {
        let sentinel = try await Sentinel()
        if TestServer.onPostgres, constraint.jsonText.contains("\\u0000") {
            // PostgreSQL cannot hold or take U+0000 in a string: the query is refused, and nothing changes.
            for response in try await bothWays(sentinel, ["where": constraint]) { #expect(response.json["code"] == 107) }
            try await sentinel.expectIntact()
            return
        }
        for response in try await bothWays(sentinel, ["where": constraint]) {
            #expect(response.status == 200, "\(response.text)")
            #expect(response.json["results"]?.arrayValue?.compactMap { $0["objectId"]?.stringValue }
                    == Array(repeating: sentinel.objectId, count: count))
        }
        let counted = try await sentinel.server.query(sentinel.className, ["where": constraint, "count": 1, "limit": 0])
        #expect(counted.json == ["results": [], "count": .number(Double(count))])
        try await sentinel.expectIntact()
    }

    @Test func sqlInRegexOptionsAndBrokenPatterns() async throws {
        let sentinel = try await Sentinel()
        let options = try await sentinel.server.query(sentinel.className, ["where": ["title": ["$regex": "^orig",
                                                                                             "$options": "i'); DROP TABLE Keep; --"]]])
        expectParseError(options, 102, "Bad $options value for query: i'); DROP TABLE Keep; --")
        for pattern in ["(' OR 1=1", "[') OR 1=1 --", "') OR 1=1 --", "\\"] {
            for response in try await bothWays(sentinel, ["where": ["title": ["$regex": .string(pattern)]]]) {
                expectHarmless(response, sentinel, expected: [], codes: [102, 107])
            }
        }
        try await sentinel.expectIntact()
    }

    @Test(arguments: [
        "n;DROP TABLE Keep", "title); DROP TABLE Keep; --", "-title' DESC", "title COLLATE NOCASE", "(SELECT 1)", "title--",
        "n,(CASE WHEN 1 THEN title END)", "json_extract(data,'$.title')", "n DESC; DELETE FROM Keep", "1",
    ])
    func sqlInOrderIs105(order: String) async throws {
        let sentinel = try await Sentinel()
        for response in try await bothWays(sentinel, ["order": .string(order)]) {
            #expect(response.status == 400, "\(response.text)")
            #expect(response.code == 105, "\(response.text)")
        }
        try await sentinel.expectIntact()
    }

    @Test(arguments: [
        ("include", "owner'); DROP TABLE Keep; --"), ("include", "owner.x' OR 1=1"), ("include", "*' --"),
        ("include", "owner,meta') --"), ("keys", "title'); DROP TABLE Keep; --"), ("keys", "title,n) FROM Keep; --"),
        ("keys", "data"), ("keys", "acl"), ("excludeKeys", "title' --"), ("excludeKeys", "title') OR 1=1"),
    ])
    func sqlInIncludeKeysAndExcludeKeys(option: String, value: String) async throws {
        let sentinel = try await Sentinel()
        for response in try await bothWays(sentinel, [option: .string(value)]) {
            expectHarmless(response, sentinel, expected: [sentinel.objectId], codes: [102, 105])
        }
        try await sentinel.expectIntact()
    }

    @Test(arguments: ["title') OR 1=1 --", "title FROM Keep; --", "data", "acl", "rperm", "objectId' OR '1'='1"])
    func sqlInSelectKey(key: String) async throws {
        let sentinel = try await Sentinel()
        let query: JSON = ["className": "Keep", "where": [:]]
        let select = try await sentinel.server.query(sentinel.className, ["where": ["title": ["$select": ["query": query,
                                                                                                      "key": .string(key)]]]])
        expectHarmless(select, sentinel, expected: [], codes: [102, 105])
        let dontSelect = try await sentinel.server.query(sentinel.className, ["where": ["title": ["$dontSelect": ["query": query,
                                                                                                              "key": .string(key)]]]])
        expectHarmless(dontSelect, sentinel, expected: nil, codes: [102, 105])
        try await sentinel.expectIntact()
    }

    @Test(arguments: [
        "Keep'; DROP TABLE Keep; --", "Keep\"--", "Keep WHERE 1=1", "sqlite_master", "sqlite_schema", "_join", "_schema",
        "_password", "c1", "c2", "Keep) OR (1=1",
    ])
    func classNamesInSubqueries(className: String) async throws {
        let sentinel = try await Sentinel()
        let s = sentinel.server
        let subquery: JSON = ["className": .string(className), "where": [:]]
        let inQuery = try await s.query(sentinel.className, ["where": ["owner": ["$inQuery": subquery]]], viaBody: true)
        expectHarmless(inQuery, sentinel, expected: [], codes: [102, 103])
        let notInQuery = try await s.query(sentinel.className, ["where": ["owner": ["$notInQuery": subquery]]], viaBody: true)
        expectHarmless(notInQuery, sentinel, expected: [sentinel.objectId], codes: [102, 103])
        let select = try await s.query(sentinel.className, ["where": ["title": ["$select": ["query": subquery, "key": "title"]]]],
                                       viaBody: true)
        expectHarmless(select, sentinel, expected: [], codes: [102, 103])
        let dontSelect = try await s.query(sentinel.className,
                                           ["where": ["title": ["$dontSelect": ["query": subquery, "key": "title"]]]], viaBody: true)
        expectHarmless(dontSelect, sentinel, expected: [sentinel.objectId], codes: [102, 103])
        let relatedTo = try await s.query(sentinel.className, ["where": ["$relatedTo": ["object": pointer(className, "x"),
                                                                                       "key": "rel"]]], viaBody: true)
        expectHarmless(relatedTo, sentinel, expected: [], codes: [102, 103])
        let relatedKey = try await s.query(sentinel.className, ["where": ["$relatedTo": ["object": pointer("Keep", sentinel.objectId),
                                                                                        "key": .string(className)]]], viaBody: true)
        expectHarmless(relatedKey, sentinel, expected: [], codes: [102, 103, 105])
        try await sentinel.expectIntact()
    }

    /// The class name in the URL is checked before anything reaches SQL.
    @Test(arguments: ["Keep'; DROP TABLE Keep; --", "Keep\"", "Keep%20OR%201=1", "Keep OR 1=1"])
    func sqlInTheClassNameOfTheURL(className: String) async throws {
        let sentinel = try await Sentinel()
        let encoded = className.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? className
        let response = try await sentinel.server.request("GET", "/classes/\(encoded)")
        #expect(response.status == 400, "\(response.text)")
        #expect(response.code == 103, "\(response.text)")
        try await sentinel.expectIntact()
    }

    /// Names of the storage's own columns and tables are ordinary Parse field names: they reach no column.
    @Test func internalNamesAreOrdinaryFields() async throws {
        let sentinel = try await Sentinel()
        let s = sentinel.server
        for name in ["data", "rperm", "acl", "rowid", "oid", "createdat"] {
            #expect(try await s.names("Keep", where: [name: ["$exists": true]], key: "title") == [], "\(name)")
            #expect(try await s.names("Keep", where: [name: ["$exists": false]], key: "title") == ["original"], "\(name)")
            let ordered = try await s.query("Keep", ["order": .string(name)])
            #expect(ordered.status == 200, "\(name): \(ordered.text)")
            #expect(ordered.json["results"]?.arrayValue?.count == 1, "\(name)")
            let keys = try await s.queryResults("Keep", ["keys": .string(name)])
            #expect(keySet(keys.first) == ["objectId", "createdAt", "updatedAt"], "\(name)")
        }
        try await sentinel.expectIntact()
    }
}
