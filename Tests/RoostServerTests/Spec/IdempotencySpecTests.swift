import Foundation
import RoostCore
import RoostTestSupport
import Testing

/// Parse Server's spec/Idempotency.spec.js over REST, with the master key and `X-Parse-Request-Id` as the spec
/// sends them. The spec counts runs with an `afterSave` trigger or a Cloud function; here the objects written
/// and the calls a function webhook received are counted. Parse's spec server records every path
/// (`functions/.*`, `classes/.*`, `users`, `installations`); Roost records every write and function call.
/// Function calls and option validation are in `IdempotencyRESTSpecTests`. Cases about Cloud jobs (Roost has
/// none), the Postgres TTL function and a spied-on internal error are not carried.
@Suite struct IdempotencySpecTests {
    private let requestId = ["X-Parse-Request-Id": "abc-123"]

    private func count(_ server: TestServer, _ path: String) async throws -> Int {
        let response = try await server.request("GET", path, master: true, query: ["count": "1", "limit": "0"])
        return Int(response.json["count"]?.numberValue ?? -1)
    }

    // spec: Idempotency.spec.js: should delete request entry after TTL
    @Test func anExpiredRequestIdMayBeUsedAgain() async throws {
        let server = try TestServer(arguments: fastHashing + ["--idempotency-ttl", "1"])
        let receiver = try WebhookReceiver(reply: #"{"success":null}"#)
        _ = try await server.request("POST", "/hooks/functions", json: ["functionName": "myFunction", "url": .string(receiver.url)], master: true)
        #expect(try await server.request("POST", "/functions/myFunction", json: [:], headers: requestId, master: true).status == 200)
        try await Task.sleep(for: .milliseconds(1500))  // The spec deletes the entry; here its 1 s TTL runs out.
        #expect(try await server.request("POST", "/functions/myFunction", json: [:], headers: requestId, master: true).status == 200)
        #expect(receiver.requests.count == 2)
    }

    // spec-differs: Idempotency.spec.js: should enforce idempotency for class object creation -- the same request again (same body and caller) gets the original reply instead of 400 Duplicate request, so a client retrying a lost reply learns its objectId; the object is still created once
    @Test func anObjectIsCreatedOnce() async throws {
        let server = try TestServer(arguments: fastHashing)
        let first = try await server.request("POST", "/classes/MyClass", json: [:], headers: requestId, master: true)
        #expect(first.status == 201)
        let again = try await server.request("POST", "/classes/MyClass", json: [:], headers: requestId, master: true)
        #expect(again.status == 201 && again.json == first.json, "\(again.text)")
        #expect(try await count(server, "/classes/MyClass") == 1)
    }

    // spec: Idempotency.spec.js: should enforce idempotency for user object creation
    @Test func aUserIsSignedUpOnce() async throws {
        let server = try TestServer(arguments: fastHashing)
        let body: JSON = ["username": "user", "password": "pass"]
        #expect(try await server.request("POST", "/users", json: body, headers: requestId, master: true).status == 201)
        expectParseError(try await server.request("POST", "/users", json: body, headers: requestId, master: true), 159, "Duplicate request")
        #expect(try await count(server, "/users") == 1)
    }

    // spec-differs: Idempotency.spec.js: should enforce idempotency for installation object creation -- the same request again gets the original reply instead of 400 Duplicate request (as for any create); the installation is still created once
    @Test func anInstallationIsCreatedOnce() async throws {
        let server = try TestServer(arguments: fastHashing)
        let body: JSON = ["installationId": "1", "deviceType": "ios"]
        let first = try await server.request("POST", "/installations", json: body, headers: requestId, master: true)
        #expect(first.status == 201)
        let again = try await server.request("POST", "/installations", json: body, headers: requestId, master: true)
        #expect(again.status == 201 && again.json == first.json, "\(again.text)")
        #expect(try await count(server, "/installations") == 1)
    }

    // spec: Idempotency.spec.js: should not interfere with calls of different request ID
    @Test func differentRequestIdsAreDifferentRequests() async throws {
        let server = try TestServer(arguments: fastHashing)
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<100 {
                group.addTask {
                    try await server.request("POST", "/classes/MyClass", json: [:],
                                             headers: ["X-Parse-Request-Id": UUID().uuidString.lowercased()], master: true).status
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses == Array(repeating: 201, count: 100))
        #expect(try await count(server, "/classes/MyClass") == 100)
    }
}
