import Foundation
import RoostCore
import Testing

/// Parse Server's spec/ParseAPI.spec.js and spec/rest.spec.js: cases carried after `ParseAPISpecTests` and
/// `RestSpecTests`, checked by hand over REST first. The JS SDK's calls are written as the REST requests it sends.
@Suite struct ParseAPIRESTSpecTests {
    /// Whether `text` is a Parse date within a minute of `reference` (the server's clock, not one the client sent).
    private static func isNear(_ text: String?, _ reference: Date) -> Bool {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        guard isParseISODate(text), let text, let date = formatter.date(from: text) else { return false }
        return abs(date.timeIntervalSince(reference)) < 60
    }

    // spec: ParseAPI.spec.js: pointer reassign on nested fields is working properly (#7391)
    /// `PUT {"data.ptr": P2}` replaces the pointer inside the Object field `data` (Parse's #7391 kept the first one);
    /// a query on the key path finds the object by the new pointer, and no longer by the old one.
    @Test func nestedPointerReassignment() async throws {
        let server = try TestServer()
        let ptr1 = try await server.create("GameScore", [:])
        let ptr2 = try await server.create("GameScore", [:])
        let obj = try await server.create("GameScore", ["data": ["ptr": pointer("GameScore", ptr1)]])
        try await server.update("GameScore", obj, ["data.ptr": pointer("GameScore", ptr2)])

        #expect(try await server.fetch("GameScore", obj)["data"]?["ptr"] == pointer("GameScore", ptr2))
        let found = try await server.results("GameScore", ["where": ["data.ptr": pointer("GameScore", ptr2)]])
        #expect(found.count == 1)
        #expect(found.first?["objectId"] == .string(obj))
        #expect(found.first?["data"]?["ptr"]?["objectId"] == .string(ptr2))
        #expect(try await server.results("GameScore", ["where": ["data.ptr": pointer("GameScore", ptr1)]]).isEmpty)
    }

    // spec: ParseAPI.spec.js: test beforeDelete with locked down ACL
    /// An object whose ACL grants nobody anything (`{}`): a client's find does not see it, and its delete answers 404
    /// `{"code":101,"error":"Object not found."}` (the spec's `beforeDelete` trigger, not set up here, is never reached:
    /// the object is not found first). The master key still finds it: nothing was deleted.
    @Test func lockedDownObject() async throws {
        let server = try TestServer()
        let id = try await server.create("GameScore", ["ACL": [:]])
        #expect(try await server.results("GameScore").isEmpty)
        expectError(try await server.request("DELETE", "/classes/GameScore/\(id)"), 101, "Object not found.")
        #expect(try await server.request("GET", "/classes/GameScore/\(id)", master: true).json["objectId"] == .string(id))
    }

    /// rest.spec.js's "cannot set createdAt or updatedAt without maintenance key" (counted in MaintenanceKeySpecTests,
    /// which sends the dates with each kind of key), the dates checked against the clock here. Without the maintenance key, `createdAt` and `updatedAt` Dates in a create are ignored: the reply and the stored
    /// object carry the server's own dates (now), not the 2019 ones sent.
    @Test func clientsCannotSetTheDates() async throws {
        let server = try TestServer()
        let started = Date()
        let created = try await server.request("POST", "/classes/TestObject", json: [
            "createdAt": date("2019-01-01T00:00:00.000Z"), "updatedAt": date("2019-02-01T00:00:00.000Z"),
        ])
        #expect(created.status == 201, "\(created.text)")
        let createdAt = created.json["createdAt"]?.stringValue
        #expect(createdAt != "2019-01-01T00:00:00.000Z")
        #expect(created.json["updatedAt"]?.stringValue != "2019-02-01T00:00:00.000Z")
        #expect(Self.isNear(createdAt, started), "\(created.text)")

        let id = try #require(created.json["objectId"]?.stringValue)
        let stored = try await server.fetch("TestObject", id)
        #expect(stored["createdAt"]?.stringValue == createdAt)
        #expect(stored["updatedAt"]?.stringValue != "2019-02-01T00:00:00.000Z")
        #expect(Self.isNear(stored["updatedAt"]?.stringValue, started), "\(stored.jsonText)")
    }

    // spec: rest.spec.js: cannot get object in _GlobalConfig if not masterKey through pointer
    /// A pointer to `_GlobalConfig` (objectId 1, a number as in the spec) may be stored, but including it without the
    /// master key is refused as a get on that class would be: 400 with 119, and the master-key-only parameter stays out.
    @Test func includeThroughAGlobalConfigPointerIsRefused() async throws {
        let server = try TestServer()
        let config = try await server.request("PUT", "/config", json: [
            "params": ["privateData": "secret"], "masterKeyOnly": ["privateData": true],
        ], master: true)
        #expect(config.status == 200, "\(config.text)")
        let created = try await server.request("POST", "/classes/TestObject", json: [
            "globalConfigPointer": ["__type": "Pointer", "className": "_GlobalConfig", "objectId": 1],
        ])
        #expect(created.status == 201, "\(created.text)")
        let id = try #require(created.json["objectId"]?.stringValue)

        let included = try await server.request("GET", "/classes/TestObject/\(id)", query: ["include": "globalConfigPointer"])
        expectError(included, 119, "Clients aren't allowed to perform the get operation on the _GlobalConfig collection.")
        #expect(!included.text.contains("secret"))
    }
}
