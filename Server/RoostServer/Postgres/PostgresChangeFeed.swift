import Foundation
import Synchronization

/// One node's LiveQuery feed on PostgreSQL: every node's committed changes, read from the shared change log
/// (`PostgresChangeLog`) in `seq` order and handed on in batches, with none skipped.
///
/// A thread of its own on a connection of its own (notifications come only to the session that listens): it LISTENs
/// on `roost_live`, which every commit with changes notifies, and on each notification reads the log after the last
/// `seq` it handed on. Any `seq` below one it reads is decided (see `PostgresChangeLog`), so reading up to what is
/// committed skips nothing. A notification can be lost (the connection broke, the node was busy reconnecting): the
/// feed reads the log again on every reconnect and every `pollInterval`. A feed so far behind that the log was
/// trimmed past it (`PostgresChangeLog.trimmedMark`) reports the loss to `lost` and goes on after it.
///
/// It holds its connection only while the node has subscribers (`follow`, `unfollow`): a node nobody subscribes to
/// needs no one's changes, and a connection per idle node would count against the database's `max_connections`.
final class PostgresChangeFeed: Sendable {
    /// How often the log is read without a notification.
    static let pollInterval = 1.0
    /// The most changes one read hands on.
    static let batch = 1_000
    /// The feed's connection's `application_name`.
    static let applicationName = "roost live feed"

    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    /// Whether the node has subscribers, and where a feed that was idle starts (`follow`).
    private let wanted = Mutex<(following: Bool, start: Int64?)>((false, nil))
    private let wakeUp = DispatchSemaphore(value: 0)

    /// Starts the thread.
    /// - Parameters:
    ///   - head: the last `seq` already accounted for (the feed hands on what comes after it).
    ///   - deliver: each batch of changes, in `seq` order (called on the feed's thread).
    ///   - lost: the log was trimmed up to this `seq` before the feed read it: changes up to there were not handed on.
    init(url: PostgresURL, after head: Int64, deliver: @escaping @Sendable ([ObjectChange]) -> Void,
         lost: @escaping @Sendable (Int64) -> Void) {
        let thread = Thread { [self] in
            nameCurrentThread("roost-pg-feed")
            run(url: url, after: head, deliver: deliver, lost: lost)
            finished.signal()
        }
        thread.start()
    }

    /// The node has subscribers again: changes after `head` are handed on (a feed still reading goes on from where it is:
    /// the changes before `head` it hands on are not new to anyone, who subscribed at `head` or later).
    func follow(after head: Int64) {
        wanted.withLock { $0 = (true, head) }
        wakeUp.signal()
    }

    /// The node has no subscribers: the feed lets its connection go until `follow`.
    func unfollow() {
        wanted.withLock { $0 = (false, nil) }
    }

    /// Ends the thread (within a quarter of a second, or the time a read in progress takes).
    func stop() {
        guard !stopping.exchange(true, ordering: .relaxed) else { return }
        wakeUp.signal()
        _ = finished.wait(timeout: .now() + 10)
    }

    private func run(url: PostgresURL, after head: Int64, deliver: ([ObjectChange]) -> Void, lost: (Int64) -> Void) {
        var last = head
        var connection: PostgresConnection?
        var lastRead = Date.distantPast
        /// Hands on everything committed after `last`.
        func readLog(_ db: PostgresConnection) throws {
            while true {
                let (trimmed, changes) = try PostgresChangeLog.changes(after: last, limit: Self.batch, in: db)
                if trimmed > last {
                    lost(trimmed)
                    last = trimmed
                }
                let fresh = changes.filter { $0.seq > last }
                if let newest = fresh.last {
                    deliver(fresh)
                    last = newest.seq
                }
                lastRead = Date()
                if changes.count < Self.batch { return }
            }
        }
        while !stopping.load(ordering: .relaxed) {
            let (following, start) = wanted.withLock { wanted in
                defer { wanted.start = nil }
                return wanted
            }
            guard following else {
                connection = nil
                _ = wakeUp.wait(timeout: .now() + 0.25)
                continue
            }
            if let start, connection == nil { last = start }  // Was idle: from where the first new subscriber starts.
            do {
                guard let db = connection else {
                    let db = try PostgresConnection(url: url)
                    try db.execute("SET application_name = '\(Self.applicationName)'")  // Named in pg_stat_activity.
                    try db.listen(PostgresChangeLog.channel)
                    connection = db
                    try readLog(db)  // What was committed while the feed was not listening.
                    continue
                }
                if try db.waitForNotification(timeout: 0.25) != nil {
                    // Every notification received so far is for a commit the next read sees.
                    while try db.waitForNotification(timeout: 0) != nil {}
                    try readLog(db)
                } else if Date().timeIntervalSince(lastRead) >= Self.pollInterval {
                    try readLog(db)
                }
            } catch {
                connection = nil  // Reconnects, listens and reads again.
                for _ in 0..<4 where !stopping.load(ordering: .relaxed) { Thread.sleep(forTimeInterval: 0.25) }
            }
        }
    }
}
