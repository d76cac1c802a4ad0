import Foundation
import RoostCore
@testable import RoostServer
import Testing

/// `$text` on an FTS5 index (`TextIndex`), end to end: created by the first search or declared, kept in step by
/// every write in the writing transaction, finding exactly what the matcher alone finds, and never reading the
/// client's term as FTS5 syntax.
@Suite struct TextIndexTests {
    /// The server's database, read beside it (WAL: the server keeps writing).
    func database(_ server: TestServer) throws -> SQLiteConnection {
        try SQLiteConnection(path: server.dataDirectory.path + "/roost.sqlite", readOnly: true, pragmas: SQLiteEngine.pragmas)
    }

    /// The FTS5 table of `field` of `className`, or nil when there is none.
    func indexTable(_ server: TestServer, _ className: String, _ field: String) throws -> String? {
        let db = try database(server)
        guard let id = try db.fetchRows("SELECT id FROM _schema WHERE className = ?", [.text(className)], cacheable: false)
            .first?.first?.integer else { return nil }
        let name = "c\(id)_text_\(field)$"
        let found = try db.fetchRows("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", [.text(name)], cacheable: false)
        return found.first?.first?.integer == 1 ? "\"\(name)\"" : nil
    }

    /// How many rows of the index hold `word` (every row with no word given); nothing is left staged after a commit.
    func indexed(_ server: TestServer, _ className: String, _ field: String, _ word: String? = nil) throws -> Int {
        guard let table = try indexTable(server, className, field) else { return -1 }
        let db = try database(server)
        let staged = try db.fetchRows("SELECT count(*) FROM \"\(table.dropFirst().dropLast())new\"", [], cacheable: false)
        guard staged.first?.first?.integer == 0 else { return -2 }
        let rows = try word.map { try db.fetchRows("SELECT count(*) FROM \(table) WHERE \(table) MATCH ?", [.text("\"\($0)\"")], cacheable: false) }
            ?? db.fetchRows("SELECT count(*) FROM \(table)", [], cacheable: false)
        return Int(rows.first?.first?.integer ?? -1)
    }

    func search(_ server: TestServer, _ className: String, _ field: String, _ term: String, _ options: [String: JSON] = [:],
                extra: [String: JSON] = [:], token: String? = nil) async throws -> TestResponse {
        var search: [String: JSON] = ["$term": .string(term)]
        search.merge(options) { $1 }
        var query: [String: String] = ["where": JSON.object([field: ["$text": ["$search": .object(search)]]]).jsonText]
        for (name, value) in extra { query[name] = value.stringValue ?? value.jsonText }
        return try await server.request("GET", "/classes/\(className)", headers: token.map { ["X-Parse-Session-Token": $0] } ?? [:],
                                        query: query)
    }

    func names(_ response: TestResponse) -> [String] {
        (response.json["results"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue }.sorted()
    }

    @Test func theFirstSearchCreatesTheIndexAndWritesKeepItInStep() async throws {
        let server = try TestServer()
        let ids = try await server.createAll("Note", [
            ["name": "a", "body": "Fresh bagels every morning"], ["name": "b", "body": "Sweet daddy sauce"],
            ["name": "c", "tags": ["smoky", "bagel"]], ["name": "d", "other": 5],
        ])
        #expect(try indexTable(server, "Note", "body") == nil)
        #expect(names(try await search(server, "Note", "body", "bagel")) == ["a"])
        // Created by that search, with the rows already stored, and listed as Parse's MongoDB adapter lists it.
        #expect(try indexed(server, "Note", "body") == 2)
        let schema = try await server.request("GET", "/schemas/Note", master: true)
        #expect(schema.json["indexes"] == ["_id_": ["_id": 1], "body_text": ["body": "text"]], "\(schema.text)")
        // The query reads the index (not every row).
        let plan = try await server.request("GET", "/classes/Note", master: true, query: [
            "where": #"{"body":{"$text":{"$search":{"$term":"bagel"}}}}"#, "explain": "true"])
        #expect(plan.text.contains("VIRTUAL TABLE"), "\(plan.text)")

        // An array field: its string elements are indexed together.
        #expect(names(try await search(server, "Note", "tags", "bagels")) == ["c"])
        #expect(try indexed(server, "Note", "tags", "bagel") == 1)

        // Create, update, delete: the index follows each write.
        let created = try await server.create("Note", ["name": "e", "body": "Bagel with chives"])
        #expect(names(try await search(server, "Note", "body", "chive")) == ["e"])
        #expect(try indexed(server, "Note", "body", "chives") == 1)
        try await server.update("Note", created, ["body": "Toast with jam"])
        #expect(names(try await search(server, "Note", "body", "chives")) == [])
        #expect(names(try await search(server, "Note", "body", "jam")) == ["e"])
        #expect(try indexed(server, "Note", "body", "chives") == 0 && indexed(server, "Note", "body", "jam") == 1)
        try await server.update("Note", ids[1], ["name": "b2"])  // Another field: the index row stays.
        #expect(names(try await search(server, "Note", "body", "daddy")) == ["b2"])
        try await server.update("Note", ids[1], ["body": ["__op": "Delete"]])
        #expect(names(try await search(server, "Note", "body", "daddy")) == [])
        #expect(try indexed(server, "Note", "body", "daddy") == 0)
        #expect(try await server.request("DELETE", "/classes/Note/\(created)").status == 200)
        #expect(names(try await search(server, "Note", "body", "jam")) == [])
        #expect(try indexed(server, "Note", "body") == 1)

        // Deleting the field drops its index; dropping the class drops them all.
        #expect(try await server.request("PUT", "/schemas/Note", json: ["fields": ["body": ["__op": "Delete"]]], master: true).status == 200)
        #expect(try indexTable(server, "Note", "body") == nil)
        #expect(try await server.request("GET", "/schemas/Note", master: true).json["indexes"]?["body_text"] == nil)
        let tagsTable = try #require(try indexTable(server, "Note", "tags"))
        for id in ids where id != ids[1] { _ = try await server.request("DELETE", "/classes/Note/\(id)", master: true) }
        _ = try await server.request("DELETE", "/classes/Note/\(ids[1])", master: true)
        #expect(try await server.request("DELETE", "/schemas/Note", master: true).status == 200)
        let left = try database(server).fetchRows("SELECT count(*) FROM sqlite_master WHERE name LIKE ?",
                                                  [.text(String(tagsTable.dropFirst().dropLast()) + "%")], cacheable: false)
        #expect(left.first?.first?.integer == 0)
    }

    /// A text index answers no comparison or sort: a field with one still gets its automatic (ordered) index.
    /// And deleting one field of a text index over two drops the other's tables too (nothing keeps firing on writes).
    @Test func textIndexesNeitherBlockOrderedIndexesNorOutliveTheirDefinition() async throws {
        let server = try AutoIndexTests.server()
        _ = try await server.createAll("Note", (0..<25).map { ["body": .string("word\($0)"), "title": .string("t\($0)")] })
        #expect(names(try await search(server, "Note", "body", "word3")) == [])  // Makes body_text.
        for i in 0..<3 { _ = try await server.request("GET", "/classes/Note", query: ["where": #"{"body":"word\#(i)"}"#]) }
        var indexes: JSON = .null
        for _ in 0..<300 where indexes["_auto_body_1"] == nil {
            try await Task.sleep(nanoseconds: 100_000_000)
            indexes = try await server.request("GET", "/schemas/Note", master: true).json["indexes"] ?? .null
        }
        #expect(indexes["_auto_body_1"] == ["body": 1] && indexes["body_text"] == ["body": "text"], "\(indexes)")

        let both = try await server.request("PUT", "/schemas/Note", json: ["indexes": ["both": ["title": "text", "body": "text"]]], master: true)
        #expect(both.status == 200, "\(both.text)")
        #expect(try indexTable(server, "Note", "title") != nil)
        #expect(try await server.request("PUT", "/schemas/Note", json: ["fields": ["title": ["__op": "Delete"]]], master: true).status == 200)
        #expect(try indexTable(server, "Note", "title") == nil)
        #expect(try indexTable(server, "Note", "body") != nil)  // body_text still names it.
        #expect(try await server.request("PUT", "/schemas/Note", json: ["fields": ["body": ["__op": "Delete"]]], master: true).status == 200)
        #expect(try indexTable(server, "Note", "body") == nil)
    }

    /// Searches make at most `maxPerClass` text indexes in a class (1 here, 10 by default): a client allowed to find
    /// cannot make every write of the class run one trigger per field it searched. Past the bound, searches scan.
    @Test func searchesMakeAFewTextIndexesPerClassAtMost() async throws {
        let server = try TestServer(environment: ["ROOST_TEST_AUTO_INDEX_MAX_PER_CLASS": "1"])
        _ = try await server.createAll("Note", [["name": "a", "body": "fresh bagels", "title": "bagel shop"], ["name": "b", "body": "toast", "title": "cafe"]])
        #expect(names(try await search(server, "Note", "body", "bagel")) == ["a"])
        #expect(names(try await search(server, "Note", "title", "bagel")) == ["a"])
        #expect(try indexTable(server, "Note", "body") != nil)
        #expect(try indexTable(server, "Note", "title") == nil)
        #expect(try await server.logShows("no automatic text index on Note.title: the class has 1 text indexes already"))
    }

    /// A class over the automatic-index bound (30 objects here, 200,000 by default) gets no text index from a
    /// search: indexing every object would hold writes. Its searches scan and answer the same; a declared index is made.
    @Test func aLargeClassGetsNoTextIndexFromASearch() async throws {
        let server = try TestServer(environment: ["ROOST_TEST_AUTO_INDEX_MAX_OBJECTS": "30"])
        _ = try await server.createAll("Note", (0..<31).map { ["name": .string("n\($0)"), "body": .string($0 == 7 ? "fresh bagels" : "plain toast")] })
        for _ in 0..<2 { #expect(names(try await search(server, "Note", "body", "bagel")) == ["n7"]) }
        #expect(try indexTable(server, "Note", "body") == nil)
        #expect(try await server.request("GET", "/schemas/Note", master: true).json["indexes"]?["body_text"] == nil)
        #expect(server.log().components(separatedBy: "no automatic text index on Note.body").count == 2)  // Logged once.
        let declared = try await server.request("PUT", "/schemas/Note", json: ["indexes": ["body_text": ["body": "text"]]], master: true)
        #expect(declared.status == 200, "\(declared.text)")
        #expect(try indexed(server, "Note", "body") == 31)
        #expect(names(try await search(server, "Note", "body", "bagel")) == ["n7"])
    }

    @Test func aDeclaredIndexCoversTheRowsBeforeIt() async throws {
        let server = try TestServer()
        _ = try await server.createAll("Post", (0..<30).map { ["name": .string("p\($0)"), "body": .string("post number \($0) about llamas")] })
        let declared = try await server.request("PUT", "/schemas/Post", json: ["indexes": ["words": ["body": "text"]]], master: true)
        #expect(declared.status == 200 && declared.json["indexes"]?["words"] == ["body": "text"], "\(declared.text)")
        #expect(try indexed(server, "Post", "body", "llamas") == 30)
        #expect(try await search(server, "Post", "body", "llama", extra: ["count": 1, "limit": 0]).json["count"] == 30)
        // Not a second index for the same field.
        #expect(try await server.request("GET", "/schemas/Post", master: true).json["indexes"]?["body_text"] == nil)
        let numbered = try await server.request("PUT", "/schemas/Post", json: ["fields": ["n": ["type": "Number"]]], master: true)
        #expect(numbered.status == 200)
        for bad: JSON in [["n": "text"], ["body": "text", "name": 1], ["missing": "text"]] {
            let refused = try await server.request("PUT", "/schemas/Post", json: ["indexes": ["bad": bad]], master: true)
            #expect(refused.status == 400 && refused.code == 102, "\(bad): \(refused.text)")
        }
        #expect(try await server.request("PUT", "/schemas/Post", json: ["indexes": ["words": ["__op": "Delete"]]], master: true).status == 200)
        #expect(try indexTable(server, "Post", "body") == nil)
        // Without the index the search still answers (and creates it again).
        #expect(try await search(server, "Post", "body", "llama", extra: ["count": 1, "limit": 0]).json["count"] == 30)
        #expect(try indexed(server, "Post", "body") == 30)

        // The name Parse would give is taken by an ordered index: the text index gets another.
        #expect(try await server.request("PUT", "/schemas/Post", json: ["indexes": ["name_text": ["name": 1]]], master: true).status == 200)
        #expect(names(try await search(server, "Post", "name", "p7")) == ["p7"])
        let indexes = try await server.request("GET", "/schemas/Post", master: true).json["indexes"]
        #expect(indexes?["name_text"] == ["name": 1] && indexes?["name_text_1"] == ["name": "text"], "\(indexes ?? .null)")
        #expect(try indexed(server, "Post", "name") == 30)
    }

    @Test func aRolledBackBatchLeavesNoTrace() async throws {
        let server = try TestServer()
        let kept = try await server.create("Memo", ["name": "kept", "body": "original wording"])
        #expect(names(try await search(server, "Memo", "body", "wording")) == ["kept"])
        let failing = try await server.request("POST", "/batch", json: [
            "transaction": true,
            "requests": [
                ["method": "POST", "path": "/parse/classes/Memo", "body": ["name": "ghost", "body": "phantom words"]],
                ["method": "PUT", "path": .string("/parse/classes/Memo/\(kept)"), "body": ["body": "rewritten phantom"]],
                ["method": "POST", "path": "/parse/classes/Memo", "body": ["name": 5]],  // A type error: all rolls back.
            ],
        ])
        #expect(failing.status >= 400, "\(failing.text)")
        #expect(try indexed(server, "Memo", "body", "phantom") == 0)
        #expect(try indexed(server, "Memo", "body", "original") == 1)
        #expect(try indexed(server, "Memo", "body") == 1)
        #expect(names(try await search(server, "Memo", "body", "phantom")) == [])
        #expect(names(try await search(server, "Memo", "body", "original")) == ["kept"])

        // The same batch, valid: all of it lands in the index.
        let passing = try await server.request("POST", "/batch", json: [
            "transaction": true,
            "requests": [
                ["method": "POST", "path": "/parse/classes/Memo", "body": ["name": "ghost", "body": "phantom words"]],
                ["method": "PUT", "path": .string("/parse/classes/Memo/\(kept)"), "body": ["body": "rewritten phantom"]],
                // Within the transaction the staged words are found (they reach FTS5 at the commit).
                ["method": "GET", "path": "/parse/classes/Memo", "body": ["where": ["body": ["$text": ["$search": ["$term": "phantom"]]]]]],
                ["method": "GET", "path": "/parse/classes/Memo", "body": ["where": ["body": ["$text": ["$search": ["$term": "original"]]]]]],
            ],
        ])
        #expect(passing.status == 200, "\(passing.text)")
        #expect(passing.json.arrayValue?[2]["success"]?["results"]?.arrayValue?.count == 2, "\(passing.text)")
        #expect(passing.json.arrayValue?[3]["success"]?["results"]?.arrayValue?.count == 0, "\(passing.text)")
        #expect(names(try await search(server, "Memo", "body", "phantom")) == ["ghost", "kept"])
        #expect(try indexed(server, "Memo", "body", "original") == 0)
    }

    /// With the index, a search finds exactly what `TextMatcher` alone finds, for every option.
    @Test func theIndexFindsWhatTheMatcherFinds() async throws {
        let texts = [
            "Daddy's Bagels", "one bagel", "three BAGELS", "a pony", "many ponies", "Café Crème", "cafe creme", "CAFÉ",
            "the best sauce", "Sweet Daddy Sauce", "saucepan", "caresses and caress", "the bus status", "buses", "glasses",
            "naïve résumé", "NAIVE resume", "Straße", "İstanbul", "istanbul", "数据库 搜索", "x1 y2 z3", "don't stop",
            "Ça va", "les pâtes", "über alles", "ties", "tie", "abcśs", "abcś", "\u{0065}\u{0301}t\u{0065}\u{0301}", "été",
            "snake_case e-mail@Host.org 3.14 [tab]\tEND", "Naïve_SNAKE",
        ]
        let server = try TestServer()
        _ = try await server.createAll("Text", texts.enumerated().map { ["name": .string("t\($0.offset)"), "body": .string($0.element)] })
        let terms = [
            "bagel", "Bagels", "ponies", "pony", "cafe", "Café", "the", "sauce", "\"sweet daddy\"", "\"daddy sweet\"",
            "daddy -sauce", "caress", "caresses", "bus", "status", "buse", "glass", "naive", "résumé", "straße", "istanbul",
            "İstanbul", "数据库", "x1", "don", "ça", "pâte", "uber", "tie", "ties", "abcś", "abcśs", "abcss", "été", "ete",
            "-bagel", "\"the\"", "sauce \"sweet daddy\"", "\"unclosed bagel", "DADDY", "snake", "case", "mail", "host", "14", "3",
            "end", "tab", "\"snake case\"", "snake_case",
        ]
        let optionSets: [[String: JSON]] = [
            [:], ["$caseSensitive": true], ["$diacriticSensitive": true], ["$language": "none"],
            ["$caseSensitive": true, "$diacriticSensitive": true, "$language": "none"],
        ]
        for options in optionSets {
            for term in terms {
                let matcher = TextMatcher(TextSearch(
                    term: term, language: options["$language"]?.stringValue,
                    caseSensitive: options["$caseSensitive"] == true, diacriticSensitive: options["$diacriticSensitive"] == true))
                let expected = texts.enumerated().filter { matcher.score($0.element) > 0 }.map { "t\($0.offset)" }.sorted()
                let response = try await search(server, "Text", "body", term, options, extra: ["limit": 1000])
                #expect(response.status == 200 && names(response) == expected, "\(term) \(options): \(response.text)")
            }
        }
        #expect(try indexTable(server, "Text", "body") != nil)
    }

    @Test func searchTermsAreTextNeverFTSSyntax() async throws {
        let server = try TestServer()
        _ = try await server.createAll("Doc", [
            ["name": "syntax", "body": #"NEAR star* body:x ^caret "quoted" AND OR NOT (paren) {brace} x+y"#],
            ["name": "plain", "body": "nothing special here"],
        ])
        let long = Array(repeating: "word", count: 400).enumerated().map { "\($1)\($0)" }.joined(separator: " ")
        let hostile = [
            "\"", "\"\"", "*", "star*", "NEAR", "NEAR(star caret)", "NEAR(\"a\" \"b\", 1)", "body:x", "words:x", "^caret", "AND", "OR",
            "NOT", "(", ")", "-", "- -", "\"unbalanced", "{brace}", "x+y", "\u{0}", "caret\u{0}near", "\\", "'", "';--", "%", "_",
            "\"quoted\" -", "🙂", String(repeating: "(", count: 500), String(repeating: "\"a\" ", count: 300), long,
            "\u{FFFD}", "a\u{300}", "＊", "ｎｅａｒ",
        ]
        for term in hostile {
            for options: [String: JSON] in [[:], ["$language": "none"]] {
                let response = try await search(server, "Doc", "body", term, options, extra: ["order": "$score"])
                let matcher = TextMatcher(TextSearch(term: term, language: options["$language"]?.stringValue))
                let expected = [("syntax", #"NEAR star* body:x ^caret "quoted" AND OR NOT (paren) {brace} x+y"#), ("plain", "nothing special here")]
                    .filter { matcher.score($0.1) > 0 }.map(\.0).sorted()
                #expect(response.status == 200 && names(response) == expected, "\(term.prefix(40)) \(options): \(response.text.prefix(300))")
            }
        }
        // Words that are FTS5 keywords are found as words.
        #expect(names(try await search(server, "Doc", "body", "near", ["$language": "none"])) == ["syntax"])
        #expect(names(try await search(server, "Doc", "body", "\"caret quoted\"")) == ["syntax"])
    }

    @Test func permissionsAndOtherConstraintsStillApply() async throws {
        let server = try TestServer()
        let alice = try await server.signUpAccount("alice")
        _ = try await server.create("Diary", ["name": "public", "body": "secret garden", "n": 1], token: nil)
        _ = try await server.create("Diary", ["name": "mine", "body": "secret garden", "n": 2,
                                              "ACL": .object([alice.id: ["read": true, "write": true]])], token: alice.token)
        _ = try await server.create("Diary", ["name": "other", "body": "secret garden", "n": 3,
                                              "ACL": ["someoneElse": ["read": true]]], token: nil)
        #expect(names(try await search(server, "Diary", "body", "garden")) == ["public"])
        #expect(names(try await search(server, "Diary", "body", "garden", token: alice.token)) == ["mine", "public"])
        #expect(try await search(server, "Diary", "body", "garden", extra: ["count": 1, "limit": 0], token: alice.token).json["count"] == 2)
        #expect(try indexed(server, "Diary", "body", "garden") == 3)
        let both = try await server.request("GET", "/classes/Diary", headers: ["X-Parse-Session-Token": alice.token], query: [
            "where": #"{"body":{"$text":{"$search":{"$term":"secret"}}},"n":{"$gte":2}}"#])
        #expect(names(both) == ["mine"])
        let either = try await server.request("GET", "/classes/Diary", master: true, query: [
            "where": #"{"$or":[{"body":{"$text":{"$search":{"$term":"nothing"}}}},{"n":3}]}"#])
        #expect(names(either) == ["other"])
    }

    @Test func anImportFillsTheIndex() async throws {
        let server = try TestServer()
        _ = try await server.createAll("Book", (0..<20).map { ["name": .string("b\($0)"), "title": .string("volume \($0) of the saga")] })
        #expect(try await search(server, "Book", "title", "sagas", extra: ["count": 1, "limit": 0]).json["count"] == 20)
        let exportPath = CommandLineTests.freshPath() + ".jsonl"
        defer { unlink(exportPath) }
        #expect(try CommandLineTests.run(["export", "--data-dir", server.dataDirectory.path, "--out", exportPath]).status == 0)
        let target = URL(fileURLWithPath: CommandLineTests.freshPath())
        let imported = try CommandLineTests.run(["import", "--data-dir", target.path, exportPath])
        #expect(imported.status == 0, "\(imported.output)")
        let copy = try TestServer(dataDirectory: target)
        #expect(try indexed(copy, "Book", "title", "saga") == 20)
        #expect(try await search(copy, "Book", "title", "volume", extra: ["count": 1, "limit": 0]).json["count"] == 20)
    }
}
