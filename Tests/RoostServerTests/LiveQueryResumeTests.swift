import Foundation
import RoostCore
import Testing

/// Roost's LiveQuery extension (`seq`, `since`, `resumed`, `result.seq`) and the `query` op, end to end:
/// the real binary, real WebSocket clients (`Tests/LiveQuery/websocket_probe.py`). Events are compared as
/// `[op, requestId, seq, objectId, text]`.
@Suite struct LiveQueryResumeTests {
    @Test func aClientThatResumesGetsWhatItMissedOnceInOrderThenLiveEvents() async throws {
        let server = try TestServer()
        let result = try await Probe.run("resume", server)
        let ids = result["ids"]?.arrayValue ?? []
        try #require(ids.count == 3, "\(result)")
        let (first, second, third) = (ids[0], ids[1], ids[2])
        #expect(result["firstSubscribed"]?["seq"] == 0, "a new database's log is empty")
        #expect(result["before"] == [["create", 1, 1, first, "one"]])
        // Seq 3 is the other class's create: not this subscription's, and not replayed.
        #expect(result["resumed"]?["resumed"] == true && result["resumed"]?["seq"] == 5, "\(result)")
        #expect(result["replayed"] == [["create", 1, 2, second, "two"], ["update", 1, 4, first, "one, edited"],
                                       ["delete", 1, 5, second, "two"]])
        #expect(result["live"] == [["create", 1, 6, third, "three"]], "live events follow, none sent twice")
        #expect(result["atHead"]?["resumed"] == true && result["atHead"]?["seq"] == 6)
        let atHead = result["atHeadEvents"]?.arrayValue ?? []
        #expect(atHead.count == 1 && atHead.first?["seq"] == 6 && atHead.first?["op"] == "create",
                "a resume from seq 5 replays seq 6 only: \(atHead)")
    }

    /// 200 creates from 4 threads while the client drops and resumes five times: each event arrives exactly
    /// once, in commit order, across every replay/live boundary.
    @Test func resumingDuringConcurrentWritesNeitherRepeatsNorSkips() async throws {
        let server = try TestServer()
        let result = try await Probe.run("boundary", server)
        #expect(result == ["count": 200, "distinct": 200, "reconnects": 5, "exact": true, "ordered": true])
    }

    /// The session a socket connected with is looked up again at each subscribe: once revoked (a log-out elsewhere,
    /// a password reset), a subscribe with `since` gets 209 and no replay of what that session could read.
    @Test func aSubscribeAfterTheSessionIsRevokedIsRefusedAndReplaysNothing() async throws {
        let server = try TestServer(arguments: ["--password-iterations", "1000"])
        let result = try await Probe.run("revoked_subscribe", server)
        #expect(result == ["answer": ["error", 209, false], "after": []])
    }

    @Test func anUpdateWithSinceReplaysUnderTheNewQuery() async throws {
        let server = try TestServer()
        let result = try await Probe.run("update_since", server)
        #expect(result == ["quiet": [], "answer": ["subscribed", true, 1], "replayed": [["create", 1, 1, "two"]]])
    }

    /// Replayed changes are judged with the subscriber's access, as live ones: bob's private note is not
    /// replayed to ann; the one he shared with her replays as an enter whose earlier version shows only its identity.
    @Test func aResumeReplaysOnlyWhatTheSubscriberMayRead() async throws {
        let server = try TestServer(arguments: ["--password-iterations", "1000"])
        let result = try await Probe.run("resume_access", server)
        #expect(result == ["resumed": true, "replayed": [["create", "public", false, []],
                                                         ["enter", "later shared", false, ["className", "createdAt", "objectId", "updatedAt"]]]])
    }

    @Test func aResumeWorksAcrossARestartAndSeqKeepsGrowing() async throws {
        let first = try TestServer()
        let before = try await Probe.run("restart_before", first)
        let since = try #require(before["since"]?.numberValue)
        #expect(first.stop() == 0)
        let second = try TestServer(dataDirectory: first.dataDirectory)
        let result = try await Probe.run("restart_after", second, String(Int(since)))
        #expect(result["resumed"]?["resumed"] == true, "\(result)")
        let replayed = (result["replayed"]?.arrayValue ?? []).map { $0.arrayValue ?? [] }
        let ops = replayed.map { $0.first ?? .null }, texts = replayed.map { $0.last ?? .null }
        let seqs = replayed.map { $0.count > 2 ? $0[2].numberValue ?? 0 : 0 }
        #expect(ops == ["create", "update"] && texts == ["two", "one, edited"], "\(result)")
        #expect(seqs == [since + 1, since + 2])
        let live = (result["live"]?.arrayValue ?? []).map { $0.arrayValue ?? [] }
        let liveSeq = live.first.map { $0.count > 2 ? $0[2].numberValue ?? 0 : 0 } ?? 0
        #expect(live.count == 1 && liveSeq == since + 3, "seq never goes backwards after a restart: \(live)")
        _ = second  // The first server's deinit removes the data directory: keep both until here.
    }

    @Test func aPurgeOrARemovedFieldCannotBeReplayedSoTheResumeSaysSo() async throws {
        let server = try TestServer()
        let result = try await Probe.run("purged", server)
        #expect(result == ["purge": false, "field": false, "other": true])
    }

    @Test func queryAnswersResultWithTheSubscribersViewAndTheLogsSeq() async throws {
        let server = try TestServer(arguments: ["--password-iterations", "1000"])
        let result = try await Probe.run("query", server)
        #expect(result["errors"] == [
            ["op": "error", "requestId": nil, "code": 2, "error": "Can not find this client, make sure you connect to server before querying"],
            ["op": "error", "requestId": 9, "code": 2, "error": "Subscription not found for requestId 9"],
            ["op": "error", "requestId": nil, "code": 1, "error": "Additional properties not allowed"],
        ])
        let answer = try #require(result["result"])
        #expect(answer["op"] == "result" && answer["requestId"] == 9)
        #expect(answer["seq"] == 8, "two sign-ups (a user and a session each) and four cards: the results reflect every change up to 8")
        let results = answer["results"]?.arrayValue ?? []
        #expect(results.map { $0["name"] } == ["public", "ann's"], "ann's session: n >= 1, readable by her")
        #expect(results.allSatisfy { $0["color"] == nil && $0["n"] == nil && $0["className"] == "Card" }, "keys trim the objects")
        #expect(result["anonymous"] == ["public", "small"])
    }

    @Test func limitsAndLiveClassesAnswerParseStyleErrorsAndSpareOtherClients() async throws {
        let server = try TestServer(arguments: ["--live-query-max-subscriptions", "3", "--live-query-classes", "Note,Other",
                                                "--live-query-max-connections-per-ip", "4", "--live-query-max-message", "4096"])
        let result = try await Probe.run("limits", server)
        #expect(result["answers"] == ["subscribed", "subscribed", "subscribed", ["op": "error", "requestId": 4, "code": 155]])
        #expect(result["maxError"] == "Too many subscriptions on this connection (at most 3, --live-query-max-subscriptions)")
        #expect(result["replaced"] == "subscribed", "replacing a subscription is not one more")
        #expect(result["notLive"] == ["op": "error", "requestId": 1, "code": 119])
        #expect(result["notLiveError"] == "LiveQuery is not enabled for class Secret (--live-query-classes)")
        #expect(result["otherOk"] == "subscribed")
        let events = (result["otherEvents"]?.arrayValue ?? []).map { $0.arrayValue ?? [] }
        #expect(events.count == 1 && events.first?.first == "create" && events.first?.last == "shown", "\(events)")
        #expect(result["refused"] == 429, "a fifth socket from one address is refused")
        #expect(result["oversized"] == 1009)
    }

    /// 2,000 subscribes at once from one client (100 allowed): all answered in order (100 subscribed, then 155s),
    /// while another client subscribes and gets its event.
    @Test func aFloodOfSubscribesIsAnsweredInOrderAndSparesOtherClients() async throws {
        let server = try TestServer()
        let result = try await Probe.run("subscribe_flood", server)
        #expect(result == ["answersInOrder": true, "answered": 2000, "other": ["subscribed", "create", "hello"]])
    }

    @Test func relationChangesAndUserSignUpUpdateAndDeleteSendEvents() async throws {
        let server = try TestServer(arguments: ["--password-iterations", "1000"])
        let result = try await Probe.run("write_paths", server)
        #expect(result["seen"] == [["create", 1, "reds"], ["create", 2, "cy"], ["update", 1, "reds"], ["update", 1, "reds"],
                                   ["update", 2, "cy"], ["delete", 2, "cy"]])
        #expect(result["increasing"] == true)
        #expect(result["password"] == false)
    }
}
