import Foundation
import RoostCore
import Testing

/// Percent-encodes a path segment completely, so hostile names reach the server as they are.
private func segment(_ name: String) -> String {
    name.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? name
}

/// Bad class and key names, and SQL metacharacters in names and values.
@Suite struct BadNameTests {
    static let badClassNames = [
        "1abc", "a-b", "a b", "_Custom", "a.b", "ä", "a;DROP TABLE _schema", #"a"b"#, "a'b",
        "Robert'); DROP TABLE _schema;--", "c1\" OR 1=1 --", "%", "*",
    ]

    @Test(arguments: badClassNames)
    func badClassNamesAre103(name: String) async throws {
        let sentinel = try await Sentinel()
        let server = sentinel.server
        let path = "/classes/\(segment(name))"
        let responses = [
            try await server.request("POST", path, json: ["a": 1]),
            try await server.request("GET", path),
            try await server.request("GET", path + "/abc"),
            try await server.request("PUT", path + "/abc", json: ["a": 1]),
            try await server.request("DELETE", path + "/abc"),
            try await server.request("POST", path, json: ["a": 1], master: true),
        ]
        for response in responses {
            #expect(response.status == 400)
            #expect(response.code == 103)
        }
        try await sentinel.expectIntact()
        let schemas = try await server.request("GET", "/schemas", master: true)
        #expect(schemas.json["results"]?.arrayValue?.compactMap { $0["className"]?.stringValue }.sorted() == ["Keep", "Probe", "_Role", "_User"])
    }

    static let badKeyNames = [
        "1abc", "a-b", "a b", "$set", "_private", "length", "className", "a'b", #"a"b"#, "key;DROP TABLE _schema",
        "x') OR 1=1 --", "ä", "", "a$b",
    ]

    @Test(arguments: badKeyNames)
    func badKeyNamesAre105(key: String) async throws {
        let sentinel = try await Sentinel()
        let body: JSON = .object([key: 1, "title": "changed"])
        for response in try await sentinel.sendBoth(body.encoded()) {
            #expect(response.status == 400)
            #expect(response.code == 105)
        }
        try await sentinel.expectIntact()
        let schema = try await sentinel.server.request("GET", "/schemas/Keep", master: true)
        #expect(schema.json["fields"]?[key] == nil)
    }

    @Test(arguments: ["objectId", "id"])
    func objectIdInACreateBodyIs105(key: String) async throws {
        let sentinel = try await Sentinel()
        let response = try await sentinel.server.request("POST", "/classes/Keep", json: [key: "abcdefghij", "title": "x"])
        #expect(response.status == 400)
        #expect(response.json == ["code": 105, "error": .string("\(key) is an invalid field name.")])
        try await sentinel.expectIntact()
    }

    static let hostileValues = [
        "'; DROP TABLE _schema; --", "Robert'); DROP TABLE Students;--", "\" OR 1=1 --", "' OR '1'='1",
        "%_\\", "$.title", "json_extract(data, '$')", "\\u0000", "nul \u{0} inside", "🙂 ' \" ` ; -- /* */",
        String(repeating: "'", count: 100),
    ]

    @Test func sqlMetacharactersInValuesAreStoredVerbatim() async throws {
        let sentinel = try await Sentinel()
        let server = sentinel.server
        var ids: [String: String] = [:]
        // PostgreSQL's jsonb cannot hold U+0000: there, a value with it is refused with 107 and nothing is stored.
        let values = TestServer.onPostgres ? Self.hostileValues.filter { !$0.contains("\u{0}") } : Self.hostileValues
        if TestServer.onPostgres {
            let refused = try await server.request("POST", "/classes/Hostile", json: ["text": "nul \u{0} inside"])
            #expect(refused.status == 400)
            #expect(refused.json["code"] == 107)
        }
        for value in values {
            let nested: JSON = ["it's": .string(value), "a\"b": [.string(value)], "DROP TABLE x; --": 1]
            ids[value] = try await server.create("Hostile", ["text": .string(value), "nested": nested, "list": [.string(value)]])
        }
        for value in values {
            let id = try #require(ids[value])
            let fetched = try await server.fetch("Hostile", id)
            #expect(fetched["text"] == .string(value), Comment(rawValue: value.debugDescription))
            #expect(fetched["nested"] == ["it's": .string(value), "a\"b": [.string(value)], "DROP TABLE x; --": 1])
            #expect(fetched["list"] == [.string(value)])
            // Equality, array containment and $in find exactly that object.
            let text: JSON = .string(value)
            let label = Comment(rawValue: value.debugDescription)
            let equal = try await server.results("Hostile", ["where": ["text": text]]).compactMap { $0["objectId"]?.stringValue }
            #expect(equal == [id], label)
            let contains = try await server.results("Hostile", ["where": ["list": text]]).compactMap { $0["objectId"]?.stringValue }
            #expect(contains == [id], label)
            let member = try await server.results("Hostile", ["where": ["text": ["$in": [text]]]]).compactMap { $0["objectId"]?.stringValue }
            #expect(member == [id], label)
            let others = try await server.results("Hostile", ["where": ["text": ["$ne": text]]]).count
            #expect(others == values.count - 1, label)
        }
        // Hostile values in updates and in the URL's object id.
        let first = try #require(ids[Self.hostileValues[0]])
        let update = try await server.request("PUT", "/classes/Hostile/\(first)", json: ["text": "' OR 1=1; --"])
        #expect(update.status == 200)
        #expect(try await server.fetch("Hostile", first)["text"] == "' OR 1=1; --")
        for id in ["' OR '1'='1", "x\" OR 1=1 --", "%", "*"] {
            let get = try await server.request("GET", "/classes/Hostile/\(segment(id))")
            #expect(get.status == 404)
            #expect(get.code == 101)
            let delete = try await server.request("DELETE", "/classes/Hostile/\(segment(id))")
            #expect(delete.status == 404)
        }
        #expect(try await server.results("Hostile", ["limit": 1000]).count == values.count)
        try await sentinel.expectIntact()
    }

    @Test func sqlMetacharactersInQueryNamesAreRefused() async throws {
        let sentinel = try await Sentinel()
        let server = sentinel.server
        for key in ["title') OR 1=1 --", "title\" OR \"1\"=\"1", "a;DROP TABLE _schema", "title.x' OR '1", "$.title"] {
            let whereKey = try await server.find("Keep", ["where": .object([key: "x"])])
            #expect(whereKey.status == 400, "where key \(key)")
            #expect(whereKey.code == 105, "where key \(key)")
            let order = try await server.find("Keep", ["order": .string(key)])
            #expect(order.status == 400, "order \(key)")
            #expect(order.code == 105, "order \(key)")
        }
        // `keys` only selects output fields: odd names select nothing, they never reach SQL.
        let keys = try await server.find("Keep", ["keys": "title,x') OR 1=1 --"])
        #expect(keys.status == 200)
        #expect(keys.json["results"]?.arrayValue?.first?["title"] == "original")
        try await sentinel.expectIntact()
    }

    @Test func sqlMetacharactersInSchemaNamesAreRefused() async throws {
        let sentinel = try await Sentinel()
        let server = sentinel.server
        let badField = try await server.request("PUT", "/schemas/Keep", json: ["fields": ["x'); DROP TABLE _schema; --": ["type": "String"]]],
                                                master: true)
        #expect(badField.status == 400)
        #expect(badField.code == 105)
        let deleteField = try await server.request("PUT", "/schemas/Keep", json: ["fields": ["title') --": ["__op": "Delete"]]],
                                                   master: true)
        #expect(deleteField.status == 400)
        let badClass = try await server.request("POST", "/schemas/\(segment("K'; DROP TABLE _schema"))", master: true)
        #expect(badClass.status == 400)
        #expect(badClass.code == 103)
        let dropBad = try await server.request("DELETE", "/schemas/\(segment("Keep'--"))", master: true)
        #expect(dropBad.status == 400)
        #expect(dropBad.code == 103)
        try await sentinel.expectIntact()
    }
}
