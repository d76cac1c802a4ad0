import Foundation
import RoostCore
import Testing
@testable import RoostServer

/// `roost_number(data, 'key')` answers what `json_extract(data, '$.key')` answers, compared in SQLite itself on
/// objects whose other members would trip a naive reader (the key inside strings and nested objects, escapes).
@Suite struct TopLevelNumberTests {
    @Test func answersAsJSONExtractDoes() throws {
        let documents = [
            #"{"n":42}"#, #"{"n":-7,"m":1}"#, #"{"n":4.25}"#, #"{"n":1e3}"#, #"{"n":-2.5E-3}"#, #"{"n":0}"#, #"{"n":-0}"#,
            #"{"n":9223372036854775807}"#, #"{"n":92233720368547758070}"#, #"{"n":null}"#, #"{}"#, #"{"m":5}"#,
            #"{"a":"n","n":3}"#, #"{"a":"\"n\":9","n":4}"#, #"{"a":{"n":8},"n":5}"#, #"{"a":[{"n":8},"]"],"n":6}"#,
            #"{"nn":1,"n":7}"#, #"{"\u006e":11,"n":12}"#, #"{ "a" : [1, 2] , "n" : 13 }"#, #"{"a":true,"b":false,"c":null,"n":14}"#,
            #"{"n":"text"}"#, #"{"n":true}"#, #"{"n":{"x":1}}"#, #"{"n":[1,2]}"#, #"{"a":"é\\","n":15}"#,
        ]
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("top-level-number-\(UUID().uuidString).sqlite").path
        defer { unlink(path) }
        #expect(FileManager.default.createFile(atPath: path, contents: nil))  // An empty file is an empty database.
        let db = try SQLiteConnection(path: path, readOnly: false, pragmas: "")
        try db.execute("CREATE TABLE t (data TEXT NOT NULL)", cacheable: false)
        for document in documents { try db.execute("INSERT INTO t (data) VALUES (?)", [.text(document)]) }
        let rows = try db.fetchRows("SELECT data, json_extract(data, '$.n'), roost_number(data, 'n') FROM t", [], cacheable: false)
        #expect(rows.count == documents.count)
        for row in rows {
            #expect(row[1] == row[2], "\(row[0].text ?? "")")
        }
        // And in a filter and an order, as the query compiler uses it.
        let extracted = try db.fetchRows("SELECT data FROM t WHERE json_extract(data, '$.n') < 10 ORDER BY json_extract(data, '$.n'), data", [], cacheable: false)
        let read = try db.fetchRows("SELECT data FROM t WHERE roost_number(data, 'n') < 10 ORDER BY roost_number(data, 'n'), data", [], cacheable: false)
        #expect(extracted == read)
    }
}
