import Foundation
import RoostCore
import Testing

/// Parse Server's spec/Auth.spec.js, `can use extendSessionOnUse` (`--extend-session-on-use`). Parse's case moves a
/// session's `updatedAt` back in the database; here the session length is short and the test waits past half of it.
/// Timed (TIMED_SUITES, run alone): its requests must land within windows a few seconds wide.
@Suite struct SessionExtensionSpecTests {
    private func expiresAt(_ server: RecordingServer, _ token: String) async throws -> Date? {
        let iso = try await server.send("GET", "/sessions/me", token: token).json["expiresAt"]?["iso"]?.stringValue
        let format = ISO8601DateFormatter()
        format.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return iso.flatMap { format.date(from: $0) }
    }

    private func sleep(until date: Date) async throws {
        try await Task.sleep(for: .seconds(max(0, date.timeIntervalSinceNow)))
    }

    // spec: Auth.spec.js: can use extendSessionOnUse
    /// A session used before half its length keeps its expiry; used after, it gets a new one (now plus the length)
    /// and outlives the first; without the option the same session expires.
    @Test func aSessionUsedAfterHalfItsLengthIsExtended() async throws {
        let length = 10.0
        let extending = try RecordingServer(arguments: fastHashing + ["--session-length", "10", "--extend-session-on-use"])
        let plain = try RecordingServer(arguments: fastHashing + ["--session-length", "10"])
        let user = try await extending.signUp("hello", "password"), other = try await plain.signUp("hello", "password")
        let first = try #require(try await expiresAt(extending, user.token))
        let plainExpiry = try #require(try await expiresAt(plain, other.token))
        #expect(try await expiresAt(extending, user.token) == first)  // Used before half its length: not due.

        try await sleep(until: first.addingTimeInterval(0.5 - length / 2))
        let due = try await extending.send("GET", "/users/me", token: user.token)  // Due: renewed in the background.
        #expect(due.status == 200, "\(due.status) \(due.text) at \(Date()), first expiry \(first)")
        var renewed = first
        for _ in 0..<100 where renewed == first {
            try await Task.sleep(for: .milliseconds(30))
            renewed = try await expiresAt(extending, user.token) ?? first
        }
        #expect(renewed.timeIntervalSince(first) > 4, "expiresAt \(first) -> \(renewed)")

        // Past both first expiries (and about 5 s before the renewed one).
        try await sleep(until: max(first, plainExpiry).addingTimeInterval(0.5))
        #expect(try await extending.send("GET", "/users/me", token: user.token).status == 200)
        expectError(try await plain.send("GET", "/users/me", token: other.token), 209, "Session token is expired.")
    }
}
