import Foundation
import RoostCore
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Every read has a time budget (`--query-timeout`), whatever makes it slow, and shutdown does not wait
/// for slow reads. The slow query here: a `$regex` with bounded repetitions only, which backtracks a few
/// milliseconds on each of 2,000 stored values (under PCRE2's step limit on each).
@Suite struct QueryTimeoutTests {
    static let value = String(repeating: "a", count: 60) + "bX"
    static let slowPattern = "^a{0,60}a{0,60}a{0,60}a{0,60}b$"
    /// Past PCRE2's step limit on one value: the old matcher ran it for minutes.
    static let hopelessPattern = "^a{0,60}a{0,60}a{0,60}a{0,60}a{0,60}b$"

    func seeded(_ arguments: [String], rows: Int) async throws -> TestServer {
        let server = try TestServer(arguments: arguments)
        for _ in 0..<(rows / 50) {
            let requests: [JSON] = (0..<50).map { _ in
                ["method": "POST", "path": "/parse/classes/Slow", "body": ["s": .string(Self.value)]]
            }
            let response = try await server.request("POST", "/batch", json: ["requests": .array(requests)])
            #expect(response.status == 200)
        }
        return server
    }

    func query(_ server: TestServer, _ pattern: String) async throws -> (TestResponse, Double) {
        let started = Date()
        let response = try await server.query("Slow", ["where": ["s": ["$regex": .string(pattern)]], "count": 1, "limit": 0])
        return (response, Date().timeIntervalSince(started))
    }

    @Test func aQueryPastItsBudgetIsAnswered124() async throws {
        let server = try await seeded(["--query-timeout", "0.3"], rows: 2_000)
        let (response, elapsed) = try await query(server, Self.slowPattern)
        expectParseError(response, 124, "The query took longer than the time limit (--query-timeout)")
        // Unbounded, the query runs ~6 s on an idle machine (and 124 is never its answer); a loaded one stretches both.
        #expect(elapsed < 20, "answered after \(elapsed) s")
        // The same reader serves the next query as usual.
        let quick = try await server.query("Slow", ["where": ["s": ["$regex": "bX$"]], "count": 1, "limit": 0])
        #expect(quick.json["count"] == 2_000, "\(quick.text)")
    }

    @Test func aPatternThatBacktracksWithoutEndGivesUpAt102() async throws {
        let server = try await seeded(["--query-timeout", "0"], rows: 50)
        let (response, elapsed) = try await query(server, Self.hopelessPattern)
        expectParseError(response, 102, "$regex took too long: the pattern backtracks too much on a stored value")
        #expect(elapsed < 30, "answered after \(elapsed) s")  // The old matcher took minutes; ~0.1 s here when idle.
    }

    /// SIGTERM interrupts a read in flight: the server exits within seconds, not when the query ends.
    @Test func shutdownInterruptsQueriesInFlight() async throws {
        let server = try await seeded(["--query-timeout", "0"], rows: 6_000)
        let slow = Task { try? await query(server, Self.slowPattern) }
        try await Task.sleep(for: .milliseconds(500))
        let started = Date()
        let status = server.stop()
        let elapsed = Date().timeIntervalSince(started)
        #expect(status == 0)
        #expect(elapsed < 10, "exit took \(elapsed) s")  // Waiting for the query would take 11 s or more.
        _ = await slow.value
    }
}
