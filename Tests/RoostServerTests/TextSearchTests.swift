import Foundation
import RoostCore
@testable import RoostServer
import Testing

/// `$text` (REST guide, "Queries on String Values"): the matcher alone, then end to end with
/// `order=$score` and `keys=$score` as the JS SDK's `fullText()` and `sortByTextScore()` send them.
@Suite struct TextSearchTests {
    func score(_ term: String, _ text: String, language: String? = nil, caseSensitive: Bool = false,
               diacriticSensitive: Bool = false) -> Double {
        TextMatcher(TextSearch(term: term, language: language, caseSensitive: caseSensitive, diacriticSensitive: diacriticSensitive))
            .score(text)
    }

    @Test func wordsMatchAsATextIndexWould() {
        #expect(score("daddy", "Daddy's Bagels") > 0)  // Case folded, apostrophes split words.
        #expect(score("bagels", "one bagel") > 0 && score("bagel", "three bagels") > 0)  // Plurals.
        #expect(score("ponies", "a pony") == 0 && score("ponies", "many ponies") > 0)
        #expect(score("cafe", "Café Crème") > 0)
        #expect(score("cafe", "Café Crème", diacriticSensitive: true) == 0)
        #expect(score("Daddy", "daddy", caseSensitive: true) == 0)
        #expect(score("the", "the best sauce") == 0)  // English stop words are not indexed.
        #expect(score("the", "the best sauce", language: "none") > 0)
        #expect(score("sauce bagel", "bagel") > 0)  // Any word.
        #expect(score("sauce", "saucepan") == 0)  // Whole words only.
    }

    @Test func phrasesAndExclusions() {
        #expect(score("\"sweet daddy\"", "Sweet Daddy Sauce") > 0)
        #expect(score("\"daddy sweet\"", "Sweet Daddy Sauce") == 0)
        #expect(score("sauce \"sweet daddy\"", "Sweet Daddy Bagels") > 0)  // With a phrase, the phrase decides.
        #expect(score("daddy -sauce", "Sweet Daddy Sauce") == 0)
        #expect(score("daddy -sauce", "Daddy's Bagels") > 0)
        #expect(score("\"unclosed phrase", "an unclosed door") > 0)
    }

    @Test func moreOfTheSearchScoresHigher() {
        #expect(score("daddy sauce", "Daddy Sauce") > score("daddy sauce", "Daddy Bagels"))
        #expect(score("bagel", "bagel") > score("bagel", "bagel with cream cheese and chives"))
    }

    @Test func endToEnd() async throws {
        let server = try TestServer()
        _ = try await server.createAll("BarbecueSauce", [
            ["name": "Daddy's Bagels"], ["name": "Sweet Daddy Sauce"], ["name": "Bagel Barbecue"], ["name": "Plain", "tags": ["smoky daddy"]],
        ])
        func search(_ where: String, _ extra: [String: String] = [:]) async throws -> TestResponse {
            try await server.request("GET", "/classes/BarbecueSauce", query: ["where": `where`].merging(extra) { $1 })
        }
        let daddy = try await search(#"{"name":{"$text":{"$search":{"$term":"Daddy"}}}}"#, ["order": "name"])
        #expect(daddy.json["results"]?.arrayValue?.map { $0["name"] } == ["Daddy's Bagels", "Sweet Daddy Sauce"])

        // The JS SDK's sortByTextScore: best match first, each result with its score and nothing else.
        let ranked = try await search(#"{"name":{"$text":{"$search":{"$term":"bagels"}}}}"#, ["order": "$score", "keys": "$score"])
        let results = ranked.json["results"]?.arrayValue ?? []
        #expect(results.count == 2)
        let scores = results.compactMap { $0["score"]?.numberValue }
        #expect(scores.count == 2 && scores[0] > scores[1], "\(ranked.text)")
        #expect(results.allSatisfy { $0["name"] == nil && $0["objectId"] != nil })

        // A dotted key into an Object field is searched and scored too.
        _ = try await server.createAll("BarbecueSauce", [["name": "Nested", "info": ["blurb": "smoky bagels"]]])
        let nested = try await search(#"{"info.blurb":{"$text":{"$search":{"$term":"bagel"}}}}"#, ["keys": "$score"])
        #expect(nested.json["results"]?.arrayValue?.first?["score"]?.numberValue ?? 0 > 0, "\(nested.text)")

        // An array of strings is searched element by element.
        let tagged = try await search(#"{"tags":{"$text":{"$search":{"$term":"smoky"}}}}"#)
        #expect(tagged.json["results"]?.arrayValue?.map { $0["name"] } == ["Plain"])

        // Parse's checks on the operand (107).
        for (operand, message) in [
            (#""daddy""#, "bad $text: $search, should be object"), (#"{"$search":{"$term":5}}"#, "bad $text: $term, should be string"),
            (#"{"$search":{"$term":"x","$language":1}}"#, "bad $text: $language, should be string"),
            (#"{"$search":{"$term":"x","$caseSensitive":"yes"}}"#, "bad $text: $caseSensitive, should be boolean"),
        ] {
            let bad = try await search(#"{"name":{"$text":"# + operand + "}}")
            #expect(bad.status == 400 && bad.json == ["code": 107, "error": .string(message)], "\(operand)")
        }
    }
}
