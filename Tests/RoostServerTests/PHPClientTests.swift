import Foundation
import RoostCore
import Testing

/// What the official PHP SDK (parse-php-sdk 2.4.0) sends, found by running its own test suite against roost: each of
/// these made its tests fail where Parse Server lets them pass.
@Suite struct PHPClientTests {
    /// PHP's `json_encode` of an empty array is `[]`: the SDK saves a new object with no fields so, alone and in a batch,
    /// and sends `indexes: []` with every schema change. Parse reads the keys of what it is given, so `[]` is `{}`.
    @Test func anEmptyArrayIsAnEmptyObject() async throws {
        let server = try TestServer()
        let created = try await server.request("POST", "/classes/TestObject", body: Data("[]".utf8))
        #expect(created.status == 201 && created.json["objectId"]?.stringValue != nil, "\(created.text)")
        let id = try #require(created.json["objectId"]?.stringValue)
        let updated = try await server.request("PUT", "/classes/TestObject/\(id)", body: Data("[]".utf8))
        #expect(updated.status == 200 && updated.json["updatedAt"]?.stringValue != nil, "\(updated.text)")
        let batch = try await server.request("POST", "/batch", body: Data(#"""
            {"requests": [{"method": "POST", "path": "/parse/classes/TestObject", "body": []},
                          {"method": "POST", "path": "/parse/classes/TestObject", "body": []}]}
            """#.utf8))
        #expect(batch.json.arrayValue?.count == 2 && batch.json.arrayValue?.allSatisfy { $0["success"]?["objectId"] != nil } == true,
                "\(batch.text)")
        let schema = try await server.request("PUT", "/schemas/TestObject", body: Data(#"""
            {"className": "TestObject", "fields": {"name": {"type": "String"}}, "indexes": []}
            """#.utf8), master: true)
        #expect(schema.status == 200 && schema.json["fields"]?["name"] == ["type": "String"], "\(schema.text)")
        // Only an empty one: an array with members is no object.
        expectError(try await server.request("POST", "/classes/TestObject", body: Data("[1]".utf8)), 107)
        expectError(try await server.request("PUT", "/schemas/TestObject", json: ["indexes": [1]], master: true), 102)
    }

    /// The SDK sends the current user's session token with every call, the master key's too. Parse checks no session
    /// once the master key is accepted, so a token gone stale (its user deleted, say) does not fail a master-key call.
    @Test func theMasterKeyIgnoresABadSessionToken() async throws {
        let server = try TestServer()
        let id = try await server.create("TestObject", ["n": 1])
        let headers = ["X-Parse-Session-Token": "r:not-a-session"]
        let found = try await server.request("GET", "/classes/TestObject", headers: headers, master: true)
        #expect(found.status == 200 && found.json["results"]?.arrayValue?.count == 1, "\(found.text)")
        let deleted = try await server.request("DELETE", "/classes/TestObject/\(id)", headers: headers, master: true)
        #expect(deleted.status == 200, "\(deleted.text)")
        // Without the master key the token is checked, as before.
        expectError(try await server.request("GET", "/classes/TestObject", headers: headers), 209, "Invalid session token")
        // A good token beside the master key still names the caller (`/users/me`).
        let account = try await server.signUpAccount("php-user")
        let me = try await server.request("GET", "/users/me", headers: ["X-Parse-Session-Token": account.token], master: true)
        #expect(me.json["objectId"]?.stringValue == account.id, "\(me.text)")
        expectError(try await server.request("GET", "/users/me", headers: headers, master: true), 209, "Invalid session token")
    }

    /// `ParseLogs::getInfoLogs` reads `method` and `url` of a request's entry, as Parse's request log entries carry them.
    @Test func aRequestsLogEntryNamesItsMethodAndURL() async throws {
        let server = try TestServer(arguments: ["--log-level", "info"])
        _ = try await server.create("TestObject", ["n": 1])
        let logs = try await server.request("GET", "/scriptlog", master: true, query: ["level": "info", "size": "100"])
        let entries = try #require(logs.json.arrayValue, "\(logs.text)")
        #expect(entries.contains { $0["method"] == "POST" && $0["url"] == "/parse/classes/TestObject" }, "\(logs.text)")
        #expect(entries.allSatisfy { ($0["method"] == nil) == ($0["url"] == nil) })
    }
}
