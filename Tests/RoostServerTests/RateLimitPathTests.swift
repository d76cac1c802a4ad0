@testable import RoostServer
import Foundation
import Synchronization
import Testing

/// `--rate-limit`'s path patterns, as Parse's `path-to-regexp` reads the usual ones (the limits themselves are
/// `RateLimitSpecTests`).
@Suite struct RateLimitPathTests {
    private func matches(_ pattern: String, _ path: String) throws -> Bool { try RateLimitPath(pattern).matches(path) }

    @Test func wildcardsSegmentsCaseAndTrailingSlash() throws {
        #expect(try matches("*", "/anything/at/all"))
        #expect(try matches("/classes/*", "/classes/Test"))
        #expect(try matches("/classes/*", "/classes/Test/abc"))
        #expect(try !matches("/classes/*", "/classesX/Test"))
        #expect(try !matches("/classes/*", "/functions/test"))
        #expect(try matches("/classes/Test", "/classes/test/"))
        #expect(try !matches("/classes/Test", "/classes/Test/abc"))
        #expect(try matches("/classes/:className", "/classes/Test"))
        #expect(try !matches("/classes/:className", "/classes/Test/abc"))
        #expect(try !matches("/classes/:className", "/classes/"))
        #expect(try matches("/classes/:className/*", "/classes/Test/abc"))
        #expect(try matches("/*/Test/*", "/classes/Test/abc"))
        #expect(try !matches("/*/Test/*", "/classes/Other/abc"))
        #expect(try matches("/login", "/LOGIN"))
    }

    @Test func otherPathToRegexpSyntaxIsRefused() {
        for pattern in ["/classes/(.*)", "/users/:id?", "/a+", "/[ab]"] {
            #expect(throws: RateLimitPath.Unsupported.self, "\(pattern)") { try RateLimitPath(pattern) }
        }
    }

    /// A hostile path against a pattern that would backtrack (`*a*a*a*b`) is matched in one pass per part.
    @Test func longPathsAreMatchedInLinearTime() throws {
        let pattern = try RateLimitPath("*a*a*a*a*a*b")
        let path = "/" + String(repeating: "a", count: 20_000)  // Longer than a request line may be.
        let clock = ContinuousClock()
        let elapsed = clock.measure { #expect(!pattern.matches(path)) }
        #expect(elapsed < .seconds(2), "\(elapsed)")
    }
}

/// One `--rate-limit` rule's counts, on their own: a flood of callers (addresses, sessions) keeps at most
/// `maximumCallers` counts, dropping those whose window ended first.
@Suite struct RateLimitCountsTests {
    private func rule() throws -> RateLimitRule {
        try RateLimitRule(["requestPath": "*", "requestTimeWindow": 1000, "requestCount": 1])
    }

    @Test func aFloodOfCallersStaysBounded() throws {
        let rule = try rule()
        let second: UInt64 = 1_000_000_000
        for caller in 0..<RateLimitRule.maximumCallers { try rule.count(key: "ip:\(caller)", now: 0) }
        #expect(rule.trackedCallers == RateLimitRule.maximumCallers)
        #expect(throws: APIError.self) { try rule.count(key: "ip:7", now: 1) }  // Still counted: limited.
        // Full, with every window still open: all dropped, the newcomer counted.
        try rule.count(key: "ip:new", now: 2)
        #expect(rule.trackedCallers == 1)
        // Full again, most windows ended by the next newcomer: only those go, the open one stays counted.
        for caller in 0..<(RateLimitRule.maximumCallers - 2) { try rule.count(key: "ip:\(caller)", now: 3) }
        try rule.count(key: "ip:fresh", now: 3 + 3 * second / 2)
        #expect(rule.trackedCallers == RateLimitRule.maximumCallers)
        try rule.count(key: "ip:late", now: 3 + 2 * second)
        #expect(rule.trackedCallers == 2)
        #expect(throws: APIError.self) { try rule.count(key: "ip:fresh", now: 3 + 2 * second) }
    }

    /// Requests racing on one caller's window: exactly `requestCount` get through.
    @Test func racingRequestsAreCountedOnce() throws {
        let rule = try RateLimitRule(["requestPath": "*", "requestTimeWindow": 60000, "requestCount": 100])
        let passed = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<250 where (try? rule.count(key: "ip:one", now: 1)) != nil { passed.withLock { $0 += 1 } }
        }
        #expect(passed.withLock { $0 } == 100)
    }
}
