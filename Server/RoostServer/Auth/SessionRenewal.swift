import Dispatch
import Foundation
import Logging
import RoostCore

/// Parse's `extendSessionOnUse`: a session used when more than half its length has passed since it last changed gets a
/// new expiry (now plus the session length), so an app in use keeps its user signed in. The write happens in the
/// background, after the request, once per session however many requests use it meanwhile (Parse waits 500 ms for the
/// same reason); a renewal that fails is tried again at the session's next use.
final class SessionRenewal: @unchecked Sendable {
    private let storage: Storage
    private let sessionLengthSeconds: Int
    private let logger: Logger
    private let queue = DispatchQueue(label: "roost-session-renewal", qos: .utility)
    private let lock = NSLock()
    private var pending: Set<String> = []
    /// A flood of stale sessions queues at most this many renewals; the others are renewed at a later use.
    private let capacity = 1_000

    init(storage: Storage, sessionLengthSeconds: Int, logger: Logger) {
        self.storage = storage
        self.sessionLengthSeconds = sessionLengthSeconds
        self.logger = logger
    }

    /// Whether a session last changed at `updatedAt` (ms) is due, as Parse's `shouldUpdateSessionExpiry`.
    func isDue(updatedAt: Int64, now: Int64) -> Bool {
        updatedAt <= now - Int64(sessionLengthSeconds) * 500
    }

    /// Renews the session in the background unless it is already waiting to be.
    func renew(sessionId: String) {
        let queued = lock.withLock {
            guard pending.count < capacity else { return false }
            return pending.insert(sessionId).inserted
        }
        guard queued else { return }
        queue.async { [self] in
            defer { lock.withLock { _ = pending.remove(sessionId) } }
            do {
                try storage.write { db in
                    let now = ParseDate.now().millisecondsSince1970
                    // Another request or node may have renewed it, or it was revoked, meanwhile.
                    guard let session = try SessionStore.find(objectId: sessionId, in: db),
                        isDue(updatedAt: session.updatedAt.millisecondsSince1970, now: now),
                        session.expiresAt < SessionRecord.neverExpires
                    else { return }
                    let expiresAt = ParseDate(millisecondsSince1970: now + Int64(sessionLengthSeconds) * 1000)
                    _ = try SessionStore.update(session, userId: session.userId, expiresAt: expiresAt, createdWith: session.createdWith,
                                                fields: session.fields, in: db)
                }
            } catch {
                logger.warning("could not extend session \(sessionId): \(error)")
            }
        }
    }
}
