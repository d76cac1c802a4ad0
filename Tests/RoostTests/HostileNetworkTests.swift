import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Roost
import RoostCore
import Testing

/// `saveEventually` behind a network that lies (a loopback proxy answering in the server's place):
/// no queued write is lost, and none lands on an object it was not meant for.
@Suite struct HostileNetworkTests {
    /// A captive portal answers `200 <html>` until the user "logs in" to it: every command is retried
    /// and delivered once, none is moved to the failed table.
    @Test(.timeLimit(.minutes(2))) func aCaptivePortalsPageIsRetriedNotRefused() async throws {
        let server = try ServerProcess()
        let portal = Counter()
        let proxy = try FaultProxy(upstreamPort: server.port) { _ in
            portal.next() <= 3 ? .respond(status: 200, headers: [("Content-Type", "text/html")],
                                          body: "<html><body>Sign in to the Wi-Fi</body></html>") : .forward
        }
        defer { proxy.stop() }
        let client = try RoostClient(.init(serverURL: proxy.url, applicationId: ServerProcess.applicationId,
                                           storageDirectory: temporaryStorage(), requestTimeout: 5))
        let counter = client.object("Portal")
        counter["n"] = 0
        try await counter.saveEventually()
        counter.increment("n")
        try await counter.saveEventually()
        let other = client.object("Portal")
        other["n"] = 10
        try await other.saveEventually()

        #expect(try await client.waitForPendingWrites(timeout: 60))
        #expect(try client.failedCommands().isEmpty)
        #expect(portal.value > 3)  // The portal did answer in the server's place.
        let stored = try await server.makeClient().query("Portal").order(byAscending: "n").find()
        #expect(stored.compactMap { $0["n"] as Int? } == [1, 10])
    }

    /// A reply that is not this request's answer — a bare `200 {"objectId": <another user's public
    /// to-do>}`, or the recorded `201` of another request (its `X-Parse-Request-Id` echoed) — is not
    /// trusted: the queued edit and delete never touch that object, and the to-do is created once.
    @Test(.timeLimit(.minutes(2)), arguments: ["bare 200", "another request's 201"])
    func aReplyForAnotherObjectIsNotTrusted(forgery: String) async throws {
        let server = try ServerProcess()
        let victim = try await createPublicTodo(on: server, requestId: "victim-request")
        let forged: FaultProxy.Action = forgery == "bare 200"
            ? .respond(status: 200, headers: [("Content-Type", "application/json")], body: #"{"objectId":"\#(victim.objectId)"}"#)
            : .respond(status: 201, headers: [("Content-Type", "application/json"), ("X-Parse-Request-Id", "victim-request")],
                       body: victim.reply)
        let creates = Counter()
        let proxy = try FaultProxy(upstreamPort: server.port) { request in
            request.method == "POST" && request.path == "/parse/classes/Todo" && creates.next() <= 2 ? forged : .forward
        }
        defer { proxy.stop() }
        let client = try RoostClient(.init(serverURL: proxy.url, applicationId: ServerProcess.applicationId,
                                           storageDirectory: temporaryStorage(), requestTimeout: 5))
        let mine = client.object("Todo")
        mine["title"] = "mine"
        try await mine.saveEventually()
        mine["done"] = true
        try await mine.saveEventually()
        let scratch = client.object("Todo")
        scratch["title"] = "scratch"
        try await scratch.saveEventually()
        try await scratch.deleteEventually()

        #expect(try await client.waitForPendingWrites(timeout: 60))
        #expect(try client.failedCommands().isEmpty)
        #expect(creates.value > 2)
        #expect(mine.objectId != nil && mine.objectId != victim.objectId)
        let todos = try await server.makeClient().query("Todo").order(byAscending: "title").find()
        #expect(todos.map { $0["title"] as String? } == ["mine", "someone else's"])
        let untouched = try #require(todos.first { $0.objectId == victim.objectId })
        #expect(untouched["done"] == false)
        #expect(todos.first { $0["title"] == "mine" }?["done"] == true)
    }

    /// A fetch answered with another object (a cache keyed on the wrong URL) fails as no answer; the
    /// local object keeps its own id, so its next save does not update the other object.
    @Test(.timeLimit(.minutes(2))) func aFetchAnsweredWithAnotherObjectIsNotTrusted() async throws {
        let server = try ServerProcess()
        let victim = try await createPublicTodo(on: server, requestId: "victim-fetch")
        let stored = try await server.makeClient().query("Todo").get(victim.objectId)
        let victimBody = JSON.object(stored.allFields.merging(["objectId": .string(victim.objectId)]) { _, id in id }).jsonText
        let proxy = try FaultProxy(upstreamPort: server.port) { request in
            request.method == "GET" && request.path.hasPrefix("/parse/classes/Todo/")
                ? .respond(status: 200, headers: [("Content-Type", "application/json")], body: victimBody) : .forward
        }
        defer { proxy.stop() }
        let client = try RoostClient(.init(serverURL: proxy.url, applicationId: ServerProcess.applicationId,
                                           storageDirectory: temporaryStorage(), requestTimeout: 5))
        let mine = client.object("Todo")
        mine["title"] = "mine"
        try await mine.save()
        let id = try #require(mine.objectId)
        await #expect(throws: RoostError.self) { try await mine.fetch() }
        await #expect(throws: RoostError.self) { _ = try await client.query("Todo").get(id) }
        #expect(mine.objectId == id)
        mine["done"] = true
        try await mine.save()
        let direct = try server.makeClient()
        #expect(try await direct.query("Todo").get(victim.objectId)["done"] == false)
        #expect(try await direct.query("Todo").get(id)["done"] == true)
    }

    /// Another user's public to-do, created with a request id; returns its id and the raw reply body.
    private func createPublicTodo(on server: ServerProcess, requestId: String) async throws -> (objectId: String, reply: String) {
        var request = URLRequest(url: server.url.appendingPathComponent("classes/Todo"))
        request.httpMethod = "POST"
        request.setValue(ServerProcess.applicationId, forHTTPHeaderField: "X-Parse-Application-Id")
        request.setValue(requestId, forHTTPHeaderField: "X-Parse-Request-Id")
        request.httpBody = Data(#"{"title":"someone else's","done":false,"ACL":{"*":{"read":true,"write":true}}}"#.utf8)
        let (data, _) = try await URLSession.shared.data(for: request)
        let reply = String(decoding: data, as: UTF8.self)
        let objectId = try #require(try JSONParser.parse(Array(data))["objectId"]?.stringValue)
        return (objectId, reply)
    }
}

/// A thread-safe count of calls.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    /// Counts one more call and returns the new count.
    func next() -> Int { lock.withLock { count += 1; return count } }

    var value: Int { lock.withLock { count } }
}

func temporaryStorage() -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("roost-device-\(UUID().uuidString)")
}
