import Foundation
import RoostCore
import Testing

/// Parse Server's spec/InstallationsRouter.spec.js over REST: `GET /installations` with the master key, its `where`
/// from the body (the JS SDK's POST with `_method`) or from the URL, `limit=0` and `count=1`.
@Suite struct InstallationsRouterSpecTests {
    private func serverWithTwoDevices() async throws -> TestServer {
        let server = try TestServer()
        for (id, type) in [("12345678-abcd-abcd-abcd-123456789abc", "android"), ("12345678-abcd-abcd-abcd-123456789abd", "ios")] {
            let created = try await server.request("POST", "/installations", json: ["installationId": .string(id), "deviceType": .string(type)])
            #expect(created.status == 201, "\(created.text)")
        }
        return server
    }

    // spec: InstallationsRouter.spec.js: uses find condition from request.body
    // spec: InstallationsRouter.spec.js: uses find condition from request.query
    @Test func theWhereComesFromTheBodyOrTheURL() async throws {
        let server = try await serverWithTwoDevices()
        let fromBody = try await server.request("POST", "/installations", json: ["_method": "GET", "where": ["deviceType": "android"]],
                                                master: true)
        #expect(fromBody.json["results"]?.arrayValue?.count == 1, "\(fromBody.text)")
        #expect(fromBody.json["results"]?.arrayValue?.first?["deviceType"] == "android")
        let fromURL = try await server.request("GET", "/installations", master: true, query: ["where": #"{"deviceType":"android"}"#])
        #expect(fromURL.json["results"]?.arrayValue?.count == 1, "\(fromURL.text)")
    }

    // spec: InstallationsRouter.spec.js: query installations with limit = 0
    // spec: InstallationsRouter.spec.js: query installations with count = 1
    // spec: InstallationsRouter.spec.js: query installations with limit = 0 and count = 1
    @Test func limitAndCount() async throws {
        let server = try await serverWithTwoDevices()
        let none = try await server.request("GET", "/installations", master: true, query: ["limit": "0"])
        #expect(none.json == ["results": []], "\(none.text)")
        let counted = try await server.request("GET", "/installations", master: true, query: ["count": "1"])
        #expect(counted.json["results"]?.arrayValue?.count == 2)
        #expect(counted.json["count"] == 2)  // Exact on both backends (Parse on PostgreSQL answers an estimate).
        let onlyCount = try await server.request("GET", "/installations", master: true, query: ["limit": "0", "count": "1"])
        #expect(onlyCount.json == ["results": [], "count": 2], "\(onlyCount.text)")
    }
}

/// Parse Server's spec/features.spec.js: `GET /serverInfo`.
@Suite struct FeaturesSpecTests {
    // spec: features.spec.js: should return the serverInfo
    // spec: features.spec.js: requires the master key to get features
    @Test func serverInfoNeedsTheMasterKey() async throws {
        let server = try TestServer()
        let info = try await server.request("GET", "/serverInfo", master: true)
        #expect(info.status == 200)
        #expect(info.json["features"]?.objectValue != nil, "\(info.text)")
        #expect(info.json["parseServerVersion"]?.stringValue != nil)
        let refused = try await server.request("GET", "/serverInfo")
        #expect(refused.status == 403)
        #expect(refused.json["error"] == "unauthorized: master key is required", "\(refused.text)")
    }
}
