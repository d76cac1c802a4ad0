import Foundation
import RoostCore
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Bad queries get the Parse error code and message that name the problem, and change nothing.
@Suite struct QueryErrorTests {
    func server() async throws -> TestServer {
        let server = try TestServer()
        _ = try await server.createAll("Item", [["name": "a", "n": 1, "s": "aaa"], ["name": "b", "n": 2, "s": "aab"]])
        return server
    }

    @Test(arguments: ["x", "where2", "limits", "Where", "sort", "_method2", "master"])
    func unknownTopLevelOptionIs102(option: String) async throws {
        let s = try await server()
        let response = try await s.query("Item", [option: 1])
        expectParseError(response, 102, "Invalid parameter for query: \(option)")
        // The same through the SDK's POST form.
        let body = try await s.query("Item", [option: 1], viaBody: true)
        expectParseError(body, 102, "Invalid parameter for query: \(option)")
    }

    @Test func everyKnownOptionIsAccepted() async throws {
        let s = try await server()
        let parameters: [String: JSON] = [
            "where": ["n": 1], "order": "n", "limit": 10, "skip": 0, "count": 1, "keys": "name", "excludeKeys": "s",
            "include": "owner", "readPreference": "PRIMARY", "includeReadPreference": "PRIMARY", "subqueryReadPreference": "PRIMARY",
            "comment": "hello",
        ]
        let response = try await s.query("Item", parameters)
        #expect(response.status == 200, "\(response.text)")
        #expect(response.json["count"] == 1)
        #expect(response.json["results"]?.arrayValue?.map { $0["name"] } == ["a"])
    }

    @Test(arguments: ["$foo", "$regexp", "$contains", "$size", "$elemMatch", "$where", "$expr"])
    func unknownOperatorIs107(op: String) async throws {
        let s = try await server()
        let response = try await s.query("Item", ["where": ["n": [op: 1]]])
        expectParseError(response, 107, "bad constraint: \(op)")
    }

    @Test(arguments: ["q", "g", "iq", "I", " i", "i;"])
    func badRegexOptionsAre102(options: String) async throws {
        let s = try await server()
        let response = try await s.query("Item", ["where": ["s": ["$regex": "^a", "$options": .string(options)]]])
        expectParseError(response, 102, "Bad $options value for query: \(options)")
    }

    @Test func goodRegexOptionsAreAccepted() async throws {
        let s = try await server()
        for options in ["i", "m", "x", "s", "imxs", "ii"] {
            let response = try await s.query("Item", ["where": ["s": ["$regex": "^A", "$options": .string(options)]]])
            #expect(response.status == 200, "\(options): \(response.text)")
        }
    }

    /// Patterns whose backtracking can take exponential time run as MongoDB runs them; on a value where
    /// one would backtrack without end, PCRE2's step limit stops the query with 102, and the next one runs.
    @Test(arguments: ["(a+)+$", "(a|aa)+$", "((a+))+$", "^(\\w+\\s?)*$", "(.*a){30}"])
    func catastrophicPatternsAreStoppedWith102(pattern: String) async throws {
        let s = try await server()
        _ = try await s.create("Item", ["name": "long", "s": .string(String(repeating: "a", count: 40) + "!")])
        let response = try await s.query("Item", ["where": ["s": ["$regex": .string(pattern)]]])
        expectParseError(response, 102, "$regex took too long: the pattern backtracks too much on a stored value")
        #expect(try await s.names("Item", where: ["s": ["$regex": "^aa"]]) == ["a", "b", "long"])
    }

    /// The same patterns on values where they do not backtrack answer their results (the old pattern check refused them).
    @Test func riskyPatternsRunOnHarmlessValues() async throws {
        let s = try await server()
        #expect(try await s.names("Item", where: ["s": ["$regex": "(a+)+b$"]]) == ["b"])
        #expect(try await s.names("Item", where: ["s": ["$regex": "(x+x+)+y"]]) == [])
        #expect(try await s.names("Item", where: ["s": ["$regex": "^(a|a)*$"]]) == ["a"])
        #expect(try await s.names("Item", where: ["s": ["$regex": "a*a*b"]]) == ["b"])
        // PCRE2 sees this one cannot backtrack without end, even on the long value.
        _ = try await s.create("Item", ["name": "long", "s": .string(String(repeating: "a", count: 40) + "!")])
        #expect(try await s.names("Item", where: ["s": ["$regex": "(a*)*b"]]) == ["b"])
    }

    /// MongoDB's (PCRE's) syntax: back-references, possessive quantifiers, lookarounds, `\Q…\E`, options `x` and `s`.
    @Test func pcreSyntaxRuns() async throws {
        let s = try await server()
        _ = try await s.createAll("Item", [["name": "foo", "s": "foowbxl"], ["name": "ml", "s": "x\ny"]])
        // The issue's example, which the old pattern check refused for its two unbounded repetitions.
        #expect(try await s.names("Item", where: ["s": ["$regex": "^fo*\\wb[^o]l+$"]]) == ["foo"])
        #expect(try await s.names("Item", where: ["s": ["$regex": "^(a)\\1b$"]]) == ["b"])
        #expect(try await s.names("Item", where: ["s": ["$regex": "^a++b"]]) == ["b"])
        #expect(try await s.names("Item", where: ["s": ["$regex": "^aa(?=b)"]]) == ["b"])
        #expect(try await s.names("Item", where: ["s": ["$regex": "^aa(?!b)"]]) == ["a"])
        #expect(try await s.names("Item", where: ["s": ["$regex": "\\Qwb\\E"]]) == ["foo"])
        #expect(try await s.names("Item", where: ["s": ["$regex": "^ a a b # comment", "$options": "x"]]) == ["b"])
        #expect(try await s.names("Item", where: ["s": ["$regex": "x.y"]]) == [])
        #expect(try await s.names("Item", where: ["s": ["$regex": "x.y", "$options": "s"]]) == ["ml"])
        expectParseError(try await s.query("Item", ["where": ["s": ["$regex": "(a"]]]), 102, "bad regex: (a")
        let long = String(repeating: "a", count: 32_765)
        expectParseError(try await s.query("Item", ["where": ["s": ["$regex": .string(long)]]], viaBody: true), 102,
                         "bad regex: longer than 32764 bytes")
    }

    /// Patterns without nested groups can still backtrack polynomially (`a*a*b` tries every split of a run
    /// of `a`s at every start): on a 1,000-character value the answer must still come quickly, as it does
    /// from MongoDB, either with the results or with 102.
    @Test func polynomialBacktrackingIsBounded() async throws {
        let s = try await server()
        _ = try await s.create("Item", ["name": "long", "s": .string(String(repeating: "a", count: 1000))])
        var components = URLComponents(string: s.baseURL + "/classes/Item")!
        components.queryItems = [URLQueryItem(name: "where", value: #"{"s":{"$regex":"a*a*b"}}"#)]
        var request = URLRequest(url: components.url!, timeoutInterval: 15)
        request.setValue(TestServer.applicationId, forHTTPHeaderField: "X-Parse-Application-Id")
        let start = Date()
        do {
            let (data, response) = try await s.session.data(for: request)
            let status = (response as? HTTPURLResponse)?.statusCode
            let body = (try? JSONParser.parse(Array(data))) ?? .null
            let names = body["results"]?.arrayValue?.compactMap { $0["name"]?.stringValue }
            #expect(status == 200 && names == ["b"] || status == 400 && body["code"] == 102, "\(String(decoding: data, as: UTF8.self))")
        } catch {
            Issue.record("no answer: \(error)")
        }
        let elapsed = Date().timeIntervalSince(start)
        // Milliseconds when idle; the bound leaves room for a loaded 2-core machine (unbounded, it took minutes).
        #expect(elapsed < 15, "the query took \(elapsed) s")
    }

    /// Ordinary patterns with groups and quantifiers still run.
    @Test(arguments: [
        ("^(aa)+b$", ["b"]), ("^a{2}[ab]$", ["a", "b"]), ("(aaa|aab)", ["a", "b"]), ("^\\w+$", ["a", "b"]), ("b$", ["b"]),
        ("^(?:a)a", ["a", "b"]), ("a?b", ["b"]),
    ] as [(String, [String])])
    func safePatternsRun(pattern: String, expected: [String]) async throws {
        let s = try await server()
        #expect(try await s.names("Item", where: ["s": ["$regex": .string(pattern)]]) == expected)
    }

    @Test(arguments: ["bad-key", "1abc", "_private", "a b", "a$b", "$foo", ".a", "a.-b", "é"])
    func badKeyNamesAre105(key: String) async throws {
        let s = try await server()
        let response = try await s.query("Item", ["where": [key: 1]])
        expectParseError(response, 105, "Invalid key name: \(key)")
    }

    @Test func whereOnACLIs102() async throws {
        let s = try await server()
        expectParseError(try await s.query("Item", ["where": ["ACL": ["*": ["read": true]]]]), 102, "Cannot query on ACL.")
        expectParseError(try await s.query("Item", ["where": ["ACL": ["$exists": true]]]), 102, "Cannot query on ACL.")
        expectParseError(try await s.query("Item", ["where": ["$or": [["ACL": ["*": ["read": true]]], ["n": 1]]]]), 102,
                         "Cannot query on ACL.")
    }

    @Test func malformedOperatorValues() async throws {
        let s = try await server()
        expectParseError(try await s.query("Item", ["where": ["n": ["$in": 1]]]), 107, "bad $in value")
        expectParseError(try await s.query("Item", ["where": ["n": ["$nin": "x"]]]), 107, "bad $nin value")
        expectParseError(try await s.query("Item", ["where": ["n": ["$all": 1]]]), 107, "bad $all value")
        expectParseError(try await s.query("Item", ["where": ["$or": 1]]), 102)
        expectParseError(try await s.query("Item", ["where": ["$and": ["n": 1]]]), 102)
        expectParseError(try await s.query("Item", ["where": ["$nor": []]]), 102, "Bad $nor format - use an array of at least 1 value.")
        // The server keeps serving.
        #expect(try await s.names("Item", where: ["n": 1]) == ["a"])
    }

    @Test func badOrderKeysAre105() async throws {
        let s = try await server()
        for order in ["a-b", "n;", "-", "1n"] {
            let response = try await s.query("Item", ["order": .string(order)])
            #expect(response.status == 400, "\(order)")
            #expect(response.code == 105, "\(order)")
        }
    }
}
