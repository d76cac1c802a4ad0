import Foundation
import RoostCore
import Testing

/// Parse Server's spec/ParseQuery.FullTextSearch.spec.js, the cases a REST client can observe (its MongoDB
/// describe block included: we search as a MongoDB text index does).
@Suite struct ParseQueryFullTextSearchSpecTests {
    /// The spec's `fullTextHelper`: eight `TestObject`s with `subject` and `comment`.
    func server() async throws -> TestServer {
        let s = try TestServer()
        let subjects = ["coffee", "Coffee Shopping", "Baking a cake", "baking", "Café Con Leche", "Сырники", "coffee and cream", "Cafe con Leche"]
        _ = try await s.createAll("TestObject", subjects.map { ["subject": .string($0), "comment": .string($0)] })
        return s
    }

    func search(_ term: String, _ options: [String: JSON] = [:]) -> JSON {
        var search = options
        search["$term"] = .string(term)
        return ["subject": ["$text": ["$search": .object(search)]]]
    }

    // spec: ParseQuery.FullTextSearch.spec.js: fullTextSearch: $search
    // spec: ParseQuery.FullTextSearch.spec.js: fullTextSearch: $search, sort
    // spec: ParseQuery.FullTextSearch.spec.js: fulltext descending by $score
    // spec: ParseQuery.FullTextSearch.spec.js: fullTextSearch: $language
    // spec: ParseQuery.FullTextSearch.spec.js: fullTextSearch: $diacriticSensitive
    // spec: ParseQuery.FullTextSearch.spec.js: fullTextSearch: $diacriticSensitive - false
    // spec: ParseQuery.FullTextSearch.spec.js: fullTextSearch: $caseSensitive
    @Test func searches() async throws {
        let s = try await server()
        #expect(try await s.queryResults("TestObject", ["where": search("coffee")]).count == 3)
        for order in ["$score", "-$score"] {
            let scored = try await s.queryResults("TestObject", ["where": search("coffee"), "keys": "$score", "order": .string(order)])
            let scores = scored.compactMap { $0["score"]?.numberValue }
            #expect(scored.count == 3 && scores.count == 3, "\(order)")
            #expect(scores == scores.sorted(by: >), "\(order): \(scores)")
        }
        #expect(try await s.queryResults("TestObject", ["where": search("leche", ["$language": "spanish"])]).count == 2)
        #expect(try await s.queryResults("TestObject", ["where": search("CAFÉ", ["$diacriticSensitive": true])]).count == 1)
        #expect(try await s.queryResults("TestObject", ["where": search("CAFÉ", ["$diacriticSensitive": false])]).count == 2)
        #expect(try await s.queryResults("TestObject", ["where": search("Coffee", ["$caseSensitive": true])]).count == 1)
    }

    // spec: ParseQuery.FullTextSearch.spec.js: fullTextSearch: $search, invalid input
    // spec: ParseQuery.FullTextSearch.spec.js: fullTextSearch: $language, invalid input
    // spec: ParseQuery.FullTextSearch.spec.js: fullTextSearch: $caseSensitive, invalid input
    // spec: ParseQuery.FullTextSearch.spec.js: fullTextSearch: $diacriticSensitive, invalid input
    @Test func invalidInput() async throws {
        let s = try await server()
        let invalid = try await s.query("TestObject", ["where": ["subject": ["$text": ["$search": true]]]], viaBody: true)
        expectParseError(invalid, 107, "bad $text: $search, should be object")
        expectParseError(try await s.query("TestObject", ["where": search("leche", ["$language": true])]), 107,
                         "bad $text: $language, should be string")
        expectParseError(try await s.query("TestObject", ["where": search("leche", ["$caseSensitive": "string"])]), 107,
                         "bad $text: $caseSensitive, should be boolean")
        expectParseError(try await s.query("TestObject", ["where": search("leche", ["$diacriticSensitive": "string"])]), 107,
                         "bad $text: $diacriticSensitive, should be boolean")
    }
}
