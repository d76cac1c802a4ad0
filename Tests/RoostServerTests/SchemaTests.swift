import Foundation
import RoostCore
import Testing

/// `/schemas` (master key only) and the schema recorded by ordinary writes.
@Suite struct SchemaTests {
    static let defaultFields: [String: JSON] = [
        "objectId": ["type": "String"], "createdAt": ["type": "Date"], "updatedAt": ["type": "Date"], "ACL": ["type": "ACL"],
    ]

    @Test func everySchemaRouteNeedsTheMasterKey() async throws {
        let server = try TestServer()
        _ = try await server.create("Game", ["score": 1])
        let routes: [(String, String, JSON?)] = [
            ("GET", "/schemas", nil), ("GET", "/schemas/Game", nil), ("POST", "/schemas/Other", ["className": "Other"]),
            ("POST", "/schemas", ["className": "Other"]), ("PUT", "/schemas/Game", ["fields": ["x": ["type": "String"]]]),
            ("DELETE", "/schemas/Game", nil),
        ]
        for (method, path, body) in routes {
            let plain = try await server.request(method, path, json: body)
            #expect(plain.status == 403, "\(method) \(path)")
            #expect(plain.json == ["error": "unauthorized: master key is required"], "\(method) \(path)")
            // A wrong master key is not an error by itself; the request just runs without master.
            let wrong = try await server.request(method, path, json: body, headers: ["X-Parse-Master-Key": "not-the-key"])
            #expect(wrong.status == 403, "\(method) \(path) with a wrong master key")
            #expect(wrong.json == ["error": "unauthorized: master key is required"], "\(method) \(path) with a wrong master key")
        }
        // Nothing changed.
        let schema = try await server.request("GET", "/schemas/Game", master: true)
        #expect(schema.json["fields"]?.objectValue?.keys.sorted() == ["ACL", "createdAt", "objectId", "score", "updatedAt"])
        #expect(try await server.request("GET", "/schemas/Other", master: true).code == 103)
    }

    @Test func firstWritesRecordFieldTypes() async throws {
        let server = try TestServer()
        _ = try await server.create("Everything", [
            "name": "x", "score": 1.5, "done": true, "when": date("2026-11-22T10:00:00.000Z"), "tags": ["a"],
            "meta": ["k": 1], "owner": pointer("Player", "p000000001"), "blob": ["__type": "Bytes", "base64": "aGk="],
            "place": ["__type": "GeoPoint", "latitude": 1, "longitude": 2], "nothing": nil,
            "counter": ["__op": "Increment", "amount": 1], "list": ["__op": "AddUnique", "objects": [1]],
        ])
        let response = try await server.request("GET", "/schemas/Everything", master: true)
        #expect(response.status == 200)
        #expect(response.json["className"] == "Everything")
        let expected = Self.defaultFields.merging([
            "name": ["type": "String"], "score": ["type": "Number"], "done": ["type": "Boolean"], "when": ["type": "Date"],
            "tags": ["type": "Array"], "meta": ["type": "Object"], "owner": ["type": "Pointer", "targetClass": "Player"],
            "blob": ["type": "Bytes"], "place": ["type": "GeoPoint"], "counter": ["type": "Number"], "list": ["type": "Array"],
        ]) { _, new in new }
        #expect(response.json["fields"] == .object(expected))
        #expect(response.json["classLevelPermissions"]?.objectValue != nil)

        _ = try await server.create("Second", ["a": 1])
        let all = try await server.request("GET", "/schemas", master: true)
        #expect(all.status == 200)
        let names = all.json["results"]?.arrayValue?.compactMap { $0["className"]?.stringValue }.sorted()
        #expect(names == ["Everything", "Second", "_Role", "_User"])  // Parse creates `_User` and `_Role` at start.
        #expect(all.json["results"]?.arrayValue?.first { $0["className"] == "Second" }?["fields"]?["a"] == ["type": "Number"])
    }

    /// Parse lists `_Session` once sessions exist (its rows live outside `_schema` here).
    @Test func sessionsAppearAmongTheSchemas() async throws {
        let server = try TestServer(arguments: fastHashing)
        let before = try await server.request("GET", "/schemas/_Session", master: true)
        #expect(before.json == ["code": 103, "error": "Class _Session does not exist."])
        let signUp = try await server.request("POST", "/users", json: ["username": "schema-user", "password": "pw-schema-user"])
        #expect(signUp.status == 201)
        let listed = try await server.request("GET", "/schemas", master: true).json["results"]?.arrayValue ?? []
        let session = try #require(listed.first { $0["className"] == "_Session" })
        #expect(session["fields"]?["user"] == ["type": "Pointer", "targetClass": "_User"])
        #expect(session["fields"]?["sessionToken"] == ["type": "String"])
        #expect(session["fields"]?["expiresAt"] == ["type": "Date"])
        #expect(try await server.request("GET", "/schemas/_Session", master: true).json == session)
    }

    @Test func createAClassThroughSchemas() async throws {
        let server = try TestServer()
        let created = try await server.request("POST", "/schemas/Game", json: [
            "className": "Game", "fields": ["score": ["type": "Number"], "owner": ["type": "Pointer", "targetClass": "_User"]],
        ], master: true)
        #expect(created.status == 200)
        #expect(created.json["className"] == "Game")
        #expect(created.json["fields"]?["score"] == ["type": "Number"])
        #expect(created.json["fields"]?["owner"] == ["type": "Pointer", "targetClass": "_User"])
        #expect(created.json["fields"]?["objectId"] == ["type": "String"])

        let again = try await server.request("POST", "/schemas/Game", json: ["className": "Game"], master: true)
        #expect(again.status == 400)
        #expect(again.json == ["code": 103, "error": "Class Game already exists."])
        let mismatch = try await server.request("POST", "/schemas/Game2", json: ["className": "Other"], master: true)
        #expect(mismatch.status == 400)
        #expect(mismatch.code == 103)
        let viaBody = try await server.request("POST", "/schemas", json: ["className": "Board"], master: true)
        #expect(viaBody.status == 200)
        #expect(viaBody.json["className"] == "Board")
        let badName = try await server.request("POST", "/schemas/9Lives", master: true)
        #expect(badName.code == 103)

        // Declared types are enforced on ordinary writes.
        let wrongType = try await server.request("POST", "/classes/Game", json: ["score": "high"])
        #expect(wrongType.status == 400)
        #expect(wrongType.code == 111)
        #expect(try await server.request("POST", "/classes/Game", json: ["score": 3]).status == 201)
    }

    @Test func badFieldDeclarations() async throws {
        let server = try TestServer()
        let unknownType = try await server.request("POST", "/schemas/A", json: ["fields": ["x": ["type": "Integer"]]], master: true)
        #expect(unknownType.status == 400)
        #expect(unknownType.json == ["code": 111, "error": "invalid field type: Integer"])
        let noTarget = try await server.request("POST", "/schemas/A", json: ["fields": ["x": ["type": "Pointer"]]], master: true)
        #expect(noTarget.status == 400)
        #expect(noTarget.code == 135)
        let badKey = try await server.request("POST", "/schemas/A", json: ["fields": ["bad-key": ["type": "String"]]], master: true)
        #expect(badKey.code == 105)
        #expect(try await server.request("GET", "/schemas/A", master: true).code == 103)
    }

    @Test func updateAddsAndDeletesFields() async throws {
        let server = try TestServer()
        let id = try await server.create("Game", ["score": 1, "title": "t"])
        let added = try await server.request("PUT", "/schemas/Game", json: ["fields": ["level": ["type": "Number"]]], master: true)
        #expect(added.status == 200)
        #expect(added.json["fields"]?["level"] == ["type": "Number"])
        #expect(added.json["fields"]?["score"] == ["type": "Number"])

        let changeType = try await server.request("PUT", "/schemas/Game", json: ["fields": ["score": ["type": "String"]]], master: true)
        #expect(changeType.status == 400)
        #expect(changeType.json == ["code": 255, "error": "Field score exists, cannot update."])

        let deleted = try await server.request("PUT", "/schemas/Game", json: ["fields": ["title": ["__op": "Delete"]]], master: true)
        #expect(deleted.status == 200)
        #expect(deleted.json["fields"]?["title"] == nil)
        // Deleting a field removes it from every object, and it may come back with another type.
        #expect(try await server.fetch("Game", id)["title"] == nil)
        #expect(try await server.fetch("Game", id)["score"] == 1)
        #expect(try await server.request("PUT", "/classes/Game/\(id)", json: ["title": 7]).status == 200)

        let missingField = try await server.request("PUT", "/schemas/Game", json: ["fields": ["nope": ["__op": "Delete"]]], master: true)
        #expect(missingField.status == 400)
        #expect(missingField.json == ["code": 255, "error": "Field nope does not exist, cannot delete."])
        let missingClass = try await server.request("PUT", "/schemas/Nope", json: ["fields": ["a": ["type": "String"]]], master: true)
        #expect(missingClass.status == 400)
        #expect(missingClass.json == ["code": 103, "error": "Class Nope does not exist."])
        let get = try await server.request("GET", "/schemas/Nope", master: true)
        #expect(get.status == 400)
        #expect(get.json == ["code": 103, "error": "Class Nope does not exist."])
    }

    @Test func dropOnlyEmptyClasses() async throws {
        let server = try TestServer()
        let ids = try await server.createAll("Game", [["score": 1], ["score": 2]])
        let refused = try await server.request("DELETE", "/schemas/Game", master: true)
        #expect(refused.status == 400)
        #expect(refused.json == ["code": 255, "error": "Class Game is not empty, contains 2 objects, cannot drop schema."])
        #expect(try await server.results("Game").count == 2)

        for id in ids { #expect(try await server.request("DELETE", "/classes/Game/\(id)").status == 200) }
        let dropped = try await server.request("DELETE", "/schemas/Game", master: true)
        #expect(dropped.status == 200)
        #expect(dropped.json == [:])
        #expect(try await server.request("GET", "/schemas/Game", master: true).code == 103)
        // Dropping a class that does not exist is not an error, as in Parse.
        let missing = try await server.request("DELETE", "/schemas/Never", master: true)
        #expect(missing.status == 200)
        #expect(missing.json == [:])
        // The class can be created again, with other types.
        #expect(try await server.request("POST", "/classes/Game", json: ["score": "now a string"]).status == 201)
    }

    @Test func clientClassCreationCanBeTurnedOff() async throws {
        let server = try TestServer(arguments: ["--no-allow-client-class-creation"])
        let refused = try await server.request("POST", "/classes/Fresh", json: ["a": 1])
        #expect(refused.status == 400)
        #expect(refused.json == ["code": 119, "error": "This user is not allowed to access non-existent class: Fresh"])
        let query = try await server.find("Fresh")
        #expect(query.status == 400)
        #expect(query.code == 119)
        let batch = try await server.request("POST", "/batch", json: [
            "requests": [["method": "POST", "path": "/parse/classes/Fresh", "body": ["a": 1]]],
        ])
        #expect(batch.json == [["error": ["code": 119, "error": "This user is not allowed to access non-existent class: Fresh"]]])
        #expect(try await server.request("GET", "/schemas/Fresh", master: true).code == 103)
        // System classes exist before their first object: querying them is not "a non-existent class".
        for path in ["/roles", "/users", "/classes/_Role"] {
            let empty = try await server.request("GET", path)
            #expect(empty.json == ["results": []], "\(path): \(empty.text)")
        }
        #expect(try await server.request("GET", "/roles/abcdefghij").code == 101)

        // With the master key the class is created; then clients may write to it and add fields.
        #expect(try await server.request("POST", "/classes/Fresh", json: ["a": 1], master: true).status == 201)
        #expect(try await server.find("Fresh", master: true).json["results"]?.arrayValue?.count == 1)
        #expect(try await server.request("POST", "/classes/Fresh", json: ["a": 2, "b": "new field"]).status == 201)
        #expect(try await server.results("Fresh").count == 2)
        // A class declared through /schemas is open to clients too.
        #expect(try await server.request("POST", "/schemas/Declared", master: true).status == 200)
        #expect(try await server.request("POST", "/classes/Declared", json: ["x": true]).status == 201)
    }
}
