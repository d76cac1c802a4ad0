import Foundation
import RoostCore
import Testing

/// Parse Server's spec/AudienceRouter.spec.js over REST: `/push_audiences` (master key only, `query` answered
/// parsed) and `_Audience` through `/classes` (fixed fields).
@Suite struct AudienceRouterSpecTests {
    private func saveTwoAudiences(_ server: TestServer) async throws {
        for (name, test) in [("Android Users", "android"), ("Iphone Users", "ios")] {
            _ = try await server.create("_Audience", ["name": .string(name), "query": .string(#"{ "test": "\#(test)" }"#)])
        }
    }

    // spec: AudienceRouter.spec.js: uses find condition from request.body
    // spec: AudienceRouter.spec.js: uses find condition from request.query
    // spec: AudienceRouter.spec.js: query installations with limit = 0
    // spec: AudienceRouter.spec.js: query installations with count = 1
    // spec: AudienceRouter.spec.js: query installations with limit = 0 and count = 1
    @Test func findTakesWhereLimitAndCount() async throws {
        let server = try TestServer()
        try await saveTwoAudiences(server)
        let whereAndroid = #"{"query":"{ \"test\": \"android\" }"}"#
        let fromQuery = try await server.request("GET", "/push_audiences", master: true, query: ["where": whereAndroid])
        #expect(fromQuery.json["results"]?.arrayValue?.count == 1, "\(fromQuery.text)")
        #expect(fromQuery.json["results"]?.arrayValue?.first?["query"] == ["test": "android"])
        // A body's `where` (the JS SDK sends finds as POST with `_method: GET`).
        let fromBody = try await server.request("POST", "/push_audiences", json: ["_method": "GET", "where": ["query": #"{ "test": "android" }"#]],
                                                master: true)
        #expect(fromBody.json["results"]?.arrayValue?.count == 1, "\(fromBody.text)")
        let none = try await server.request("GET", "/push_audiences", master: true, query: ["limit": "0"])
        #expect(none.json["results"]?.arrayValue?.count == 0, "\(none.text)")
        let counted = try await server.request("GET", "/push_audiences", master: true, query: ["count": "1"])
        #expect(counted.json["results"]?.arrayValue?.count == 2 && counted.json["count"] == 2, "\(counted.text)")
        let onlyCounted = try await server.request("GET", "/push_audiences", master: true, query: ["count": "1", "limit": "0"])
        #expect(onlyCounted.json["results"]?.arrayValue?.count == 0 && onlyCounted.json["count"] == 2, "\(onlyCounted.text)")
    }

    // spec: AudienceRouter.spec.js: should create, read, update and delete audiences throw api
    // spec: AudienceRouter.spec.js: should be able to search on audiences
    @Test func audiencesAreCreatedReadUpdatedAndDeleted() async throws {
        let server = try TestServer()
        let created = try await server.request("POST", "/push_audiences", json: ["name": "My Audience", "query": #"{"deviceType":"ios"}"#],
                                               master: true)
        #expect(created.status == 201, "\(created.text)")
        let id = try #require(created.json["objectId"]?.stringValue)
        let listed = try await server.request("GET", "/push_audiences", master: true)
        #expect(listed.json["results"]?.arrayValue?.first?["name"] == "My Audience" && listed.json["results"]?.arrayValue?.first?["query"] == ["deviceType": "ios"],
                "\(listed.text)")
        let updated = try await server.request("PUT", "/push_audiences/\(id)", json: ["name": "My Audience 2"], master: true)
        #expect(updated.status == 200, "\(updated.text)")
        let read = try await server.request("GET", "/push_audiences/\(id)", master: true)
        #expect(read.json["name"] == "My Audience 2" && read.json["query"] == ["deviceType": "ios"], "\(read.text)")
        // `/classes/_Audience` answers the stored string, to the master key: to clients the class does not exist (Parse
        // keeps no schema of a volatile class in the database, where it looks one up for them), though they may save one.
        #expect(try await server.request("GET", "/classes/_Audience/\(id)", master: true).json["query"] == #"{"deviceType":"ios"}"#)
        expectError(try await server.request("GET", "/classes/_Audience/\(id)"), 101, "Object not found.")
        let counted = try await server.request("GET", "/classes/_Audience", query: ["count": "1", "limit": "0"])
        #expect(counted.json == ["results": [], "count": 0], "\(counted.text)")
        let neverUsed = try await server.request("GET", "/push_audiences", master: true, query: [
            "where": #"{"timesUsed":{"$exists":false},"lastUsed":{"$exists":false}}"#, "order": "-createdAt", "limit": "1"])
        #expect(neverUsed.json["results"]?.arrayValue?.first?["name"] == "My Audience 2", "\(neverUsed.text)")
        #expect(try await server.request("DELETE", "/push_audiences/\(id)", master: true).status == 200)
        #expect(try await server.request("GET", "/push_audiences", master: true).json["results"]?.arrayValue?.count == 0)
    }

    // spec: AudienceRouter.spec.js: should only create with master key
    // spec: AudienceRouter.spec.js: should only find with master key
    // spec: AudienceRouter.spec.js: should only get with master key
    // spec: AudienceRouter.spec.js: should only update with master key
    // spec: AudienceRouter.spec.js: should only delete with master key
    @Test func pushAudiencesTakeTheMasterKeyOnly() async throws {
        let server = try TestServer()
        let requests: [(String, String, JSON?)] = [
            ("POST", "/push_audiences", ["name": "My Audience", "query": #"{"deviceType":"ios"}"#]),
            ("GET", "/push_audiences", nil), ("GET", "/push_audiences/someId", nil),
            ("PUT", "/push_audiences/someId", ["name": "My Audience 2"]), ("DELETE", "/push_audiences/someId", nil),
        ]
        for (method, path, body) in requests {
            let refused = try await server.request(method, path, json: body)
            #expect(refused.status == 403 && refused.json == ["error": "unauthorized: master key is required"], "\(method) \(path): \(refused.text)")
        }
        #expect(try await server.request("GET", "/classes/_Audience").json["results"]?.arrayValue?.count == 0)
    }

    // spec: AudienceRouter.spec.js: should handle _Audience invalid fields via rest
    @Test func audiencesKeepTheirFixedFields() async throws {
        let server = try TestServer()
        expectError(try await server.request("POST", "/classes/_Audience", json: ["lorem": "ipsum", "_method": "POST"]), 107, "Could not add field lorem")
        expectError(try await server.request("POST", "/push_audiences", json: ["name": "A", "extra": 1], master: true), 107, "Could not add field extra")
        let id = try await server.create("_Audience", ["name": "A", "query": "{}", "timesUsed": 1, "lastUsed": ["__type": "Date", "iso": "2026-01-02T03:04:05.000Z"]])
        expectError(try await server.request("PUT", "/classes/_Audience/\(id)", json: ["lorem": "ipsum"]), 107, "Could not add field lorem")
        expectError(try await server.request("PUT", "/classes/_Audience/\(id)", json: ["name": 3]), 111)
        let schema = try await server.request("GET", "/schemas/_Audience", master: true)
        #expect(schema.json["fields"]?["query"] == ["type": "String"] && schema.json["fields"]?["lastUsed"] == ["type": "Date"], "\(schema.text)")
    }
}
