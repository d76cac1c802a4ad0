import Foundation
import Roost
import RoostCore
import Testing

/// Resume without loss: a network cut, a server restart (same port, same data) and a restarted program each
/// deliver every change made meanwhile exactly once, in order; a gap older than the server's replay window
/// becomes one `refreshed` event with the query's current results.
@Suite struct LiveSubscriptionResumeTests {
    typealias Recorder = LiveQueryTests.Recorder

    func summary(_ events: [LiveQueryEvent]) -> [String] {
        events.map { "\($0.kind.rawValue) \($0.object?["name"] as String? ?? "")" }
    }

    func expectIncreasingSeqs(_ events: [LiveQueryEvent]) {
        let seqs = events.compactMap(\.seq)
        #expect(seqs.count == events.count, "every event carries seq")
        #expect(zip(seqs, seqs.dropFirst()).allSatisfy { $0 < $1 }, "\(seqs)")
    }

    func save(_ client: RoostClient, _ name: String, rank: Int) async throws -> RoostObject {
        let object = client.object("Card")
        object["name"] = name
        object["rank"] = rank
        try await object.save()
        return object
    }

    @Test func aNetworkCutMissesNothingAndRepeatsNothing() async throws {
        let server = try ServerProcess()
        let relay = try TCPRelay(upstreamPort: server.port)
        let watcher = try RoostClient(.init(serverURL: relay.url, applicationId: ServerProcess.applicationId,
                                            storageDirectory: temporaryStorage(), requestTimeout: 5))
        let writer = try server.makeClient()
        let recorder = Recorder(watcher.query("Card"))
        defer { recorder.subscription.cancel() }
        #expect(await recorder.waitForSubscribed())
        let ace = try await save(writer, "ace", rank: 1)
        #expect(await recorder.waitForChanges(1).count == 1)

        relay.cut()  // The watcher's socket dies; it cannot reconnect until the network is back.
        ace["rank"] = 14
        try await ace.save()
        _ = try await save(writer, "king", rank: 13)
        try await ace.delete()
        try await Task.sleep(nanoseconds: 300_000_000)
        #expect(recorder.changes.count == 1)
        relay.restore()

        let events = await recorder.waitForChanges(4, timeout: 20)
        #expect(summary(events) == ["created ace", "updated ace", "created king", "deleted ace"])
        expectIncreasingSeqs(events)
        #expect(recorder.all.last { $0.kind == .subscribed }?.resumed == true)
        _ = try await save(writer, "queen", rank: 12)  // Live again after the replay.
        #expect(await recorder.wait { $0.contains { $0.object?["name"] == "queen" } })
        try await Task.sleep(nanoseconds: 300_000_000)
        #expect(summary(recorder.changes) == ["created ace", "updated ace", "created king", "deleted ace", "created queen"])
    }

    @Test func aServerRestartOnTheSameDataMissesNothingAndRepeatsNothing() async throws {
        let server = try ServerProcess()
        let watcher = try server.makeClient()
        let recorder = Recorder(watcher.query("Card").whereKey("rank", greaterThan: 5))
        defer { recorder.subscription.cancel() }
        #expect(await recorder.waitForSubscribed())
        let writer = try server.makeClient()
        let ten = try await save(writer, "ten", rank: 10)
        #expect(await recorder.waitForChanges(1).count == 1)

        server.stop()
        try server.start()
        // Written at once, while the watcher is still reconnecting (its backoff started when the socket died).
        ten["rank"] = 2
        try await ten.save()
        _ = try await save(writer, "jack", rank: 11)
        let events = await recorder.waitForChanges(3, timeout: 30)
        #expect(summary(events) == ["created ten", "left ten", "created jack"])
        expectIncreasingSeqs(events)
        try await Task.sleep(nanoseconds: 300_000_000)
        #expect(recorder.changes.count == 3)
    }

    @Test func aRestartedProgramResumesFromItsStorage() async throws {
        let server = try ServerProcess()
        let storage = temporaryStorage()
        let writer = try server.makeClient()
        do {
            let first = try server.makeClient(storage: storage)
            let recorder = Recorder(first.query("Card"))
            #expect(await recorder.waitForSubscribed())
            _ = try await save(writer, "two", rank: 2)
            #expect(await recorder.waitForChanges(1).count == 1)
            recorder.subscription.cancel()
        }
        // While the program is not running.
        _ = try await save(writer, "three", rank: 3)
        _ = try await save(writer, "four", rank: 4)

        let again = try server.makeClient(storage: storage)
        let recorder = Recorder(again.query("Card"))
        defer { recorder.subscription.cancel() }
        let events = await recorder.waitForChanges(2)
        #expect(recorder.all.first?.kind == .subscribed && recorder.all.first?.resumed == true)
        #expect(summary(events) == ["created three", "created four"])
        expectIncreasingSeqs(events)
    }

    @Test func aGapOlderThanTheReplayWindowIsOneRefreshedEvent() async throws {
        let server = try ServerProcess(arguments: ["--live-query-replay-window", "1"])
        let relay = try TCPRelay(upstreamPort: server.port)
        let watcher = try RoostClient(.init(serverURL: relay.url, applicationId: ServerProcess.applicationId,
                                            storageDirectory: temporaryStorage(), requestTimeout: 5))
        let writer = try server.makeClient()
        let query = watcher.query("Card").whereKey("rank", lessThan: 10)
        let recorder = Recorder(query)
        defer { recorder.subscription.cancel() }
        #expect(await recorder.waitForSubscribed())
        let two = try await save(writer, "two", rank: 2)
        #expect(await recorder.waitForChanges(1).count == 1)
        #expect(try await query.cachePolicy(.networkOnly).find().count == 1)  // Cached, for the offline check below.

        relay.cut()
        _ = try await save(writer, "three", rank: 3)
        two["rank"] = 20
        try await two.save()
        try await Task.sleep(nanoseconds: 3_000_000_000)  // Past the 1 s window, and a trim (every second).
        relay.restore()

        let events = await recorder.waitForChanges(2, timeout: 20)
        #expect(events.last?.kind == .refreshed)
        #expect(recorder.all.last { $0.kind == .subscribed }?.resumed == false)
        #expect(events.last?.objects.compactMap { $0["name"] as String? } == ["three"])
        let cached = try await query.cachePolicy(.cacheOnly).find()
        #expect(cached.compactMap { $0["name"] as String? } == ["three"])  // The cache took the refresh.

        _ = try await save(writer, "four", rank: 4)  // Live after the refresh.
        #expect(await recorder.wait { $0.contains { $0.kind == .created && $0.object?["name"] == "four" } })
    }

    /// A subscription that sees nothing while its class is busy still moves its resume point to each resume's head, so a
    /// later resume is not refused for changes it never needed (they were trimmed from the log meanwhile).
    @Test func aQuietSubscriptionKeepsUpWithTheLogAndStaysResumable() async throws {
        let server = try ServerProcess(arguments: ["--live-query-replay-window", "6"])
        let relay = try TCPRelay(upstreamPort: server.port)
        let watcher = try RoostClient(.init(serverURL: relay.url, applicationId: ServerProcess.applicationId,
                                            storageDirectory: temporaryStorage(), requestTimeout: 5))
        let writer = try server.makeClient()
        let quiet = Recorder(watcher.query("Card").whereKey("rank", greaterThan: 100))
        let busy = Recorder(watcher.query("Ping"))
        defer { quiet.subscription.cancel(); busy.subscription.cancel() }
        #expect(await quiet.waitForSubscribed())
        #expect(await busy.waitForSubscribed())

        _ = try await save(writer, "two", rank: 2)  // A change of the class the quiet subscription does not see.
        relay.cut()
        relay.restore()  // Reconnects at once, well within the 6 s window (even on a loaded machine).
        #expect(await quiet.waitForSubscribed(count: 2))
        #expect(quiet.all.last?.resumed == true)
        _ = try await writer.object("Ping").save()  // Any later message: the quiet replay is over.
        #expect(await busy.wait { $0.contains { $0.kind == .created } })

        try await Task.sleep(nanoseconds: 8_000_000_000)  // "two" leaves the 6 s log (trimmed every second).
        relay.cut()
        relay.restore()
        #expect(await quiet.waitForSubscribed(count: 3))
        #expect(quiet.all.last?.resumed == true)
        #expect(quiet.changes.isEmpty, "\(quiet.all.map { "\($0.kind) \($0.seq ?? -1) \($0.resumed.map { "\($0)" } ?? "-")" })")
    }
}
