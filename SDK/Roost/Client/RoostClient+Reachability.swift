import Foundation

extension RoostClient {
    /// Whether the server answers `GET /health` now (a quick probe; a CLI has no network monitor).
    public func isServerReachable() async -> Bool {
        (try? await transport.send("GET", "health"))?["status"] == "ok"
    }

    /// Waits for the queue to empty, at most `seconds`; returns whether it did.
    /// - Throws: as `waitForPendingWrites()`, when that ends first.
    public func waitForPendingWrites(timeout seconds: TimeInterval) async throws -> Bool {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                try await self.waitForPendingWrites()
                return true
            }
            group.addTask {
                try await Task.sleep(nanoseconds: UInt64(max(0, seconds) * 1_000_000_000))
                return false
            }
            // The group returns only once both children end: the wait is cancellable, so it ends at once.
            let first = try await group.next() ?? false
            group.cancelAll()
            return first || self.pendingCount == 0
        }
    }
}
