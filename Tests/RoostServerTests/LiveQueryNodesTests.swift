import Foundation
import RoostCore
import Testing

/// LiveQuery across nodes: two servers on one PostgreSQL database (`TestServer(sharingDatabaseWith:)`). Every node's commits reach
/// every node's subscribers through the shared change log (`PostgresChangeLog`, `PostgresChangeFeed`), in `seq` order,
/// which is commit order. Timed (events within seconds): in the Makefile's POSTGRES_TIMED_SUITES.
@Suite(.serialized) struct LiveQueryNodesTests {
    /// A socket on `server`, subscribed to every `Tally` (`since`: a resume).
    private func subscribed(_ server: TestServer, since: Int64? = nil) async throws -> (socket: LiveSocket, answer: JSON) {
        let socket = try LiveSocket(server)
        #expect(try await socket.connect()?["op"] == "connected")
        var message: [String: JSON] = ["op": "subscribe", "requestId": 1, "query": ["className": "Tally", "where": [:]]]
        if let since { message["since"] = .number(Double(since)) }
        try socket.send(.object(message))
        let answer = try #require(try await socket.next())
        try #require(answer["op"] == "subscribed", "\(answer)")
        return (socket, answer)
    }

    /// `count` events after seq `after` (fewer when none comes for 10 s), as `[op, objectId, n, seq]`.
    private func events(_ count: Int, from socket: LiveSocket, after: Double = 0) async throws -> [[JSON]] {
        var events: [[JSON]] = []
        while events.count < count, let event = try await socket.next() {
            guard (event["seq"]?.numberValue ?? 0) > after else { continue }
            events.append([event["op"] ?? .null, event["object"]?["objectId"] ?? .null, event["object"]?["n"] ?? .null, event["seq"] ?? .null])
        }
        return events
    }

    /// One object's life, written alternately through both nodes: create, three updates, delete.
    private func life(of worker: Int, _ round: Int, on nodes: [TestServer]) async throws -> String {
        let first = nodes[(worker + round) % 2]
        let id = try await first.create("Tally", ["worker": .number(Double(worker)), "n": 0])
        for n in 1...3 {
            let node = nodes[(worker + round + n) % 2]
            let answer = try await node.update("Tally", id, ["n": .number(Double(n))])
            try #require(answer.status == 200, "\(answer.text)")
        }
        let gone = try await nodes[(worker + round + 1) % 2].request("DELETE", "/classes/Tally/\(id)")
        try #require(gone.status == 200, "\(gone.text)")
        return id
    }

    /// 6 writers, 3 on each node, 15 objects each (450 writes): a subscriber on each node gets every write once, in one
    /// order (the same on both), with `seq` increasing, each object's events in the order they were written; and those
    /// seqs are exactly the log's.
    @Test func concurrentWritesOnBothNodesReachSubscribersOnBothInOneOrderNoneLost() async throws {
        let a = try TestServer(onPostgres: true)
        let b = try TestServer(sharingDatabaseWith: a)
        // The class exists before the race (creating it from two nodes at once is the schema's matter, not this suite's).
        _ = try await a.create("Tally", ["n": 0])
        let db = try #require(a.postgres).connect()
        func logged() throws -> [Double] {
            try db.query("SELECT seq FROM _live_change WHERE className = 'Tally' ORDER BY seq").rows.compactMap { try $0.int(0) }.map(Double.init)
        }
        let before = try #require(try logged().last)
        let (onA, _) = try await subscribed(a)
        let (onB, _) = try await subscribed(b)
        let started = Date()
        let ids = try await withThrowingTaskGroup(of: [String].self) { group in
            for worker in 0..<6 {
                group.addTask {
                    var ids: [String] = []
                    for round in 0..<15 { ids.append(try await life(of: worker, round, on: [a, b])) }
                    return ids
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        let written = Date().timeIntervalSince(started)
        let expected = ids.count * 5
        // (The create before the race reaches a subscriber whose node had not read it when it subscribed.)
        let seenOnB = try await events(expected, from: onB, after: before)
        let seenOnA = try await events(expected, from: onA, after: before)
        let more = try await onB.drain() + onA.drain()
        #expect(more.isEmpty, "nothing more: \(more)")
        #expect(seenOnB.count == expected && seenOnA.count == expected, "\(seenOnB.count), \(seenOnA.count) of \(expected)")
        #expect(seenOnA == seenOnB, "both nodes deliver the same events in the same order")
        let seqs = seenOnB.compactMap { $0[3].numberValue }
        #expect(zip(seqs, seqs.dropFirst()).allSatisfy { $0 < $1 }, "seq increases")
        for id in ids {
            let own = seenOnB.filter { $0[1].stringValue == id }.map { [$0[0], $0[2]] }
            #expect(own == [["create", 0], ["update", 1], ["update", 2], ["update", 3], ["delete", 3]], "\(id): \(own)")
        }
        #expect(try logged().filter { $0 > before } == seqs, "every logged change was delivered, and nothing else")
        print("LiveQueryNodesTests: \(expected) writes from 2 nodes in \(String(format: "%.2f", written)) s")
    }

    /// A client that drops from node A and resumes on node B (with the `seq` A gave it) gets what was written meanwhile
    /// on either node, once and in order, then live events; a resume straight after A's last event is not refused for
    /// being ahead of B's feed.
    @Test func aResumeOnTheOtherNodeReplaysWhatWasMissed() async throws {
        let a = try TestServer(onPostgres: true)
        let b = try TestServer(sharingDatabaseWith: a)
        var onA: LiveSocket? = try await subscribed(a).socket
        let first = try await b.create("Tally", ["n": 1])
        let seen = try await events(1, from: try #require(onA))
        let since = try #require(seen.first?[3].numberValue.map { Int64($0) })
        // Ahead of nothing: straight to B, at once.
        let (_, atOnce) = try await subscribed(b, since: since)
        #expect(atOnce["resumed"] == true, "\(atOnce)")
        onA = nil  // Its socket closes.
        #expect(onA == nil)
        _ = try await a.update("Tally", first, ["n": 2])
        let second = try await b.create("Tally", ["n": 10])
        _ = try await b.request("DELETE", "/classes/Tally/\(first)")
        let (resumed, answer) = try await subscribed(b, since: since)
        #expect(answer["resumed"] == true, "\(answer)")
        let replayed = try await events(3, from: resumed)
        #expect(replayed.map { [$0[0], $0[1], $0[2]] } == [["update", .string(first), 2], ["create", .string(second), 10],
                                                           ["delete", .string(first), 2]], "\(replayed)")
        let seqs = replayed.compactMap { $0[3].numberValue }
        #expect(seqs.count == 3 && seqs[0] > Double(since) && seqs[0] < seqs[1] && seqs[1] < seqs[2])
        _ = try await a.update("Tally", second, ["n": 11])
        let live = try await events(1, from: resumed)
        #expect(live.map { [$0[0], $0[2]] } == [["update", 11]] && (live.first?[3].numberValue ?? 0) > (seqs.last ?? 0), "\(live)")
    }

    /// A node whose feed fell behind the log's trimming (stopped with SIGSTOP while the other node wrote and trimmed to the
    /// last 10 changes) cannot hand on what was dropped: it closes its subscribers with 1011, their resume answers
    /// `resumed: false`, and live events go on.
    @Test func aNodeThatFellBehindTheTrimmedLogSendsItsClientsToRefresh() async throws {
        let a = try TestServer(arguments: ["--live-query-replay-events", "10"], onPostgres: true)
        let b = try TestServer(arguments: ["--live-query-replay-events", "10"], sharingDatabaseWith: a)
        let (onB, _) = try await subscribed(b)
        _ = try await a.create("Tally", ["n": 0])
        let since = try #require(try await events(1, from: onB).first?[3].numberValue.map { Int64($0) })
        kill(b.process.pid, SIGSTOP)
        for n in 1...30 { _ = try await a.create("Tally", ["n": JSON.number(Double(n))]) }
        let db = try #require(a.postgres).connect()
        var trimmed: Int64 = 0
        for _ in 0..<50 where trimmed <= since {
            try await Task.sleep(for: .milliseconds(100))
            trimmed = Int64(try db.query("SELECT seq FROM _live_trim WHERE className = '#log'").rows.first.flatMap { try $0.int(0) } ?? 0)
        }
        kill(b.process.pid, SIGCONT)
        #expect(trimmed > since, "node A trimmed the log past node B's feed")
        #expect(try await onB.closeCode() == 1011)
        let (resumed, answer) = try await subscribed(b, since: since)
        #expect(answer["resumed"] == false, "\(answer)")
        _ = try await a.create("Tally", ["n": 100])
        #expect(try await events(1, from: resumed).first?[2] == 100)
    }

    /// The feeds' sessions are ended (as by a PostgreSQL restart or a proxy dropping connections) before three writes:
    /// the notifications sent meanwhile are lost, and the feeds reconnect and read the log again, so the events still
    /// come, in order, on both nodes.
    @Test func eventsSurviveTheFeedsLosingTheirConnections() async throws {
        let a = try TestServer(onPostgres: true)
        let b = try TestServer(sharingDatabaseWith: a)
        let (onA, _) = try await subscribed(a)
        let (onB, _) = try await subscribed(b)
        let id = try await a.create("Tally", ["n": 0])
        let admin = try #require(a.postgres).connect()
        let ended = try admin.query("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'roost live feed' "
                                    + "AND datname = current_database()")
        #expect(try ended.rows.first?.int(0) == 2, "both feeds' connections")
        // Written while the feeds are reconnecting (they wait a second first).
        for n in 1...3 {
            let answer = try await (n % 2 == 0 ? a : b).update("Tally", id, ["n": JSON.number(Double(n))])
            #expect(answer.status == 200, "\(answer.text)")
        }
        for socket in [onA, onB] {
            let seen = try await events(4, from: socket)
            #expect(seen.map { [$0[0], $0[2]] } == [["create", 0], ["update", 1], ["update", 2], ["update", 3]], "\(seen)")
        }
    }
}
