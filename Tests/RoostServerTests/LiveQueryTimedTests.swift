import Foundation
import RoostCore
import Testing

/// LiveQuery behaviour that waits on the clock (TIMED_SUITES in the Makefile): trimming the change log, and
/// the deadline for a closing socket.
@Suite struct LiveQueryTimedTests {
    /// With a 1 s window, a class whose change was trimmed after `since` cannot resume (the client refreshes
    /// with `query`); a quiet class, none of whose changes were trimmed, still resumes.
    @Test func aTrimmedGapAnswersResumedFalseWhileAQuietClassResumes() async throws {
        let server = try TestServer(arguments: ["--live-query-replay-window", "1"])
        let result = try await Probe.run("trimmed", server)
        #expect(result["busy"]?["resumed"] == false, "\(result)")
        #expect(result["busy"]?["seq"] == 1)
        #expect(result["quiet"]?["resumed"] == true)
        #expect(result["after"] == [], "no replay after resumed:false")
        #expect(result["result"] == ["missed"], "query brings the missed object")
    }

    /// With at most 2 changes kept, the oldest of three is trimmed: a resume from before it cannot replay,
    /// one from it replays the other two.
    @Test func theEventCapTrimsTheOldestChanges() async throws {
        let server = try TestServer(arguments: ["--live-query-replay-events", "2"])
        let result = try await Probe.run("capped", server)
        #expect(result["tooOld"] == false, "\(result)")
        #expect(result["recent"] == true)
        #expect(result["replayed"] == [["create", 2, 2, "n1"], ["create", 2, 3, "n2"]])
    }

    /// A client that sends close while ~3.8 MB of events wait for it and never reads: its socket (the only
    /// LiveQuery slot of its address here) is dropped at the closing deadline, not kept forever.
    @Test func aClosingClientThatStopsReadingIsDroppedAtTheDeadline() async throws {
        let server = try TestServer(arguments: ["--live-query-max-connections-per-ip", "1"],
                                    environment: ["ROOST_TEST_CLOSE_TIMEOUT_MS": "1000"])
        let result = try await Probe.run("closing", server)
        #expect(result["status"] == "HTTP/1.1 101 Switching Protocols", "\(result)")
        let seconds = result["seconds"]?.numberValue ?? 99
        #expect(seconds >= 0.5 && seconds < 10, "held until the deadline, then dropped: \(seconds) s")
    }
}
