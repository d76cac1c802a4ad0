import Foundation
import RoostCore
import Testing

/// A server holding one known object, to check that a bad request changed nothing and the server still serves.
struct Sentinel {
    let server: TestServer
    let className = "Keep"
    let objectId: String
    let original: JSON

    init(arguments: [String] = []) async throws {
        server = try TestServer(arguments: arguments)
        objectId = try await server.create(className, [
            "title": "original", "n": 1, "when": date("2026-11-22T10:00:00.000Z"), "tags": ["a"],
            "owner": pointer("Player", "p000000001"), "meta": ["k": "v"],
        ])
        original = try await server.fetch(className, objectId)
    }

    var path: String { "/classes/\(className)/\(objectId)" }

    /// Sends `body` as raw bytes to both the create and the update endpoint of the sentinel's class;
    /// returns both responses.
    func sendBoth(_ body: [UInt8], headers: [String: String] = [:]) async throws -> [TestResponse] {
        [
            try await server.request("POST", "/classes/\(className)", body: Data(body), headers: headers),
            try await server.request("PUT", path, body: Data(body), headers: headers),
        ]
    }

    /// Records an issue unless the server still answers and the sentinel object is exactly as it was,
    /// alone in its class.
    func expectIntact(sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let health = try await server.request("GET", "/health", appId: false)
        #expect(health.json == ["status": "ok"], sourceLocation: sourceLocation)
        let fetched = try await server.fetch(className, objectId)
        #expect(fetched == original, sourceLocation: sourceLocation)
        let count = try await server.find(className, ["count": 1, "limit": 0])
        #expect(count.json == ["results": [], "count": 1], sourceLocation: sourceLocation)
        // New writes still work.
        let probe = try await server.request("POST", "/classes/Probe", json: ["ok": true])
        #expect(probe.status == 201, sourceLocation: sourceLocation)
    }
}
