@testable import RoostServer
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
