import Foundation

/// Resolved session tokens (user, session, expiry, roles), so an authenticated request costs no extra
/// read transaction. Every write that changes sessions or roles invalidates the whole cache after it
/// commits (`Storage.write`), and a lookup records the generation it started from, so an entry read
/// from a snapshot older than an invalidation is never stored as current.
final class SessionCache: @unchecked Sendable {
    struct Entry {
        let userId: String
        let sessionId: String
        let expiresAt: Int64
        /// When the session last changed (ms): `SessionRenewal` renews one whose last change is old enough.
        let updatedAt: Int64
        let roles: [String]
    }

    private let lock = NSLock()
    private var generation: UInt64 = 0
    private var entries: [String: Entry] = [:]
    private let capacity = 10_000

    /// The cached entry for a token digest, and the generation to store a fresh lookup under.
    func lookup(_ digest: String) -> (Entry?, UInt64) {
        lock.withLock { (entries[digest], generation) }
    }

    func store(_ entry: Entry, for digest: String, generation observed: UInt64) {
        lock.withLock {
            guard observed == generation else { return }
            if entries.count >= capacity { entries.removeAll() }
            entries[digest] = entry
        }
    }

    func invalidate() {
        lock.withLock {
            generation += 1
            entries.removeAll()
        }
    }
}
