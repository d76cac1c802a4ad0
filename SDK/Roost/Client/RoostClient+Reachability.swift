import Foundation

extension RoostClient {
    /// Whether the server answers `GET /health` now (a quick probe; a CLI has no network monitor).
    public func isServerReachable() async -> Bool {
        (try? await transport.send("GET", "health"))?["status"] == "ok"
    }

    /// Waits for the queue to empty, at most `seconds`; returns whether it did.
    public func waitForPendingWrites(timeout seconds: TimeInterval) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await self.waitForPendingWrites()
                return true
            }
            group.addTask {
                try? await Task.sleep(nanoseconds: UInt64(seconds * 1_000_000_000))
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first || self.pendingCount == 0
        }
    }
}
