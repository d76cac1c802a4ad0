import Foundation
import RoostCore
import Testing

/// Parse Server's spec/batch.spec.js, REST-observable cases. The spec's `makeBatchRoutingPathFunction` unit cases
/// (server/public URL combinations) are carried only where a request shows them: items name paths under the mount.
@Suite struct BatchSpecTests {
    private static func creates(_ className: String, _ values: [JSON]) -> [JSON] {
        values.map { ["method": "POST", "path": .string("/parse/classes/\(className)"), "body": ["key": $0]] }
    }

    private static func keys(_ server: TestServer, _ className: String) async throws -> [String] {
        try await server.results(className).compactMap { $0["key"]?.stringValue }.sorted()
    }

    // spec: batch.spec.js: should return the proper url
    // spec: batch.spec.js: should handle a batch request without transaction
    // spec: batch.spec.js: should handle a batch request with transaction = false
    // spec: batch.spec.js: should handle a batch request with transaction = true
    @Test func batchesCreateEachItem() async throws {
        let server = try TestServer()
        for (index, transaction) in [nil, JSON.bool(false), JSON.bool(true)].enumerated() {
            let className = "MyObject\(index)"
            var body: [String: JSON] = ["requests": .array(Self.creates(className, ["value1", "value2"]))]
            body["transaction"] = transaction
            let response = try await server.request("POST", "/batch", json: .object(body),
                                                    headers: ["X-Parse-REST-API-Key": "rest", "X-Parse-Installation-Id": "yolo"])
            #expect(response.status == 200, "\(response.text)")
            let items = response.json.arrayValue ?? []
            #expect(items.count == 2)
            #expect(items.allSatisfy { $0["success"]?["objectId"]?.stringValue != nil && isParseISODate($0["success"]?["createdAt"]?.stringValue) })
            #expect(try await Self.keys(server, className) == ["value1", "value2"])
        }
    }

    // spec: batch.spec.js: should not save anything when one operation fails in a transaction
    @Test func aFailingItemUndoesTheTransaction() async throws {
        let server = try TestServer()
        let first = try await server.create("MyObject", ["key": "stringField"])
        #expect(try await server.request("DELETE", "/classes/MyObject/\(first)").status == 200)
        let values: [JSON] = (0..<9).flatMap { _ in [JSON.string("value1"), JSON.number(10)] }
        let response = try await server.request("POST", "/batch", json: [
            "requests": .array(Self.creates("MyObject", values)), "transaction": true,
        ])
        #expect(response.status >= 400, "\(response.text)")
        #expect(try await server.results("MyObject").isEmpty)

        let after = try await server.request("POST", "/batch", json: [
            "requests": .array(Self.creates("MyObject", ["value1", "value2"])), "transaction": true,
        ])
        #expect(after.status == 200)
        #expect(try await Self.keys(server, "MyObject") == ["value1", "value2"])
    }

    /// Parse's `makeRoutablePath`: an item path outside the API's mount cannot be routed (107).
    @Test func itemPathsMustBeUnderTheMount() async throws {
        let server = try TestServer()
        let response = try await server.request("POST", "/batch", json: ["requests": [
            ["method": "POST", "path": "/other/classes/MyObject", "body": ["key": "x"]],
        ]])
        expectError(response, 107, "cannot route batch path /other/classes/MyObject")
        let notArray = try await server.request("POST", "/batch", json: ["requests": "nope"])
        expectError(notArray, 107, "requests must be an array")
    }

    // spec: batch.spec.js: should return the proper url given a public url-only path
    // spec: batch.spec.js: should return the proper url with different public/local mount
    /// With a public server URL whose path is not the mount, an item's path may start with either (Parse's
    /// `makeBatchRoutingPathFunction`): the JS SDK builds them from the URL it was given.
    @Test func itemPathsMayStartWithThePublicServerURLsPath() async throws {
        let server = try TestServer(arguments: ["--public-server-url", "https://domain.com/something/really/long"])
        let batch = try await server.request("POST", "/batch", json: ["requests": [
            ["method": "POST", "path": "/something/really/long/classes/Object", "body": ["a": 1]],
            ["method": "POST", "path": "/parse/classes/Object", "body": ["a": 2]],
        ]])
        #expect(batch.json.arrayValue?.compactMap { $0["success"]?["objectId"] }.count == 2, "\(batch.text)")
        expectError(try await server.request("POST", "/batch", json: ["requests": [
            ["method": "POST", "path": "/something/classes/Object", "body": ["a": 3]],
        ]]), 107, "cannot route batch path /something/classes/Object")
        #expect(try await server.request("GET", "/classes/Object?count=1&limit=0").json["count"] == 2)
    }
}
