import Foundation
import Synchronization

/// What a node keeps in memory about the database, by kind: resolved sessions with their roles (`SessionCache`),
/// class schemas (`SchemaCache`) and trigger webhooks (`TriggerHookCache`).
struct CachedState: OptionSet, Sendable {
    let rawValue: Int
    static let sessions = CachedState(rawValue: 1)
    static let schemas = CachedState(rawValue: 2)
    static let hooks = CachedState(rawValue: 4)
    static let all: CachedState = [.sessions, .schemas, .hooks]

    private static let words: [(CachedState, String)] = [(.sessions, "sessions"), (.schemas, "schemas"), (.hooks, "hooks")]

    /// What the write transaction behind `state` changed.
    init(changedBy state: WriteState) {
        var kinds: CachedState = []
        if state.changedAuthentication { kinds.insert(.sessions) }
        if state.changedSchema { kinds.insert(.schemas) }
        if state.changedHooks { kinds.insert(.hooks) }
        self = kinds
    }

    init(rawValue: Int) { self.rawValue = rawValue }

    /// "sessions,hooks" (a notification's payload), and back; a word it does not know invalidates everything.
    var text: String { Self.words.filter { contains($0.0) }.map(\.1).joined(separator: ",") }

    init(text: Substring) {
        var kinds: CachedState = []
        for word in text.split(separator: ",") {
            guard let kind = Self.words.first(where: { $0.1 == word })?.0 else { kinds = .all; break }
            kinds.insert(kind)
        }
        self = kinds
    }
}

/// Keeps the caches of every roost node serving one PostgreSQL database in step: a write that changes something
/// cached sends `pg_notify` inside its transaction (`announce`), which PostgreSQL delivers exactly when it commits
/// (never for one rolled back); each node listens on a connection of its own and drops what changed (its own writes
/// it has already dropped, in `Storage.write` and `HookRoutes`). A lost connection loses what was sent meanwhile: the
/// listener drops everything, reconnects with backoff, and drops everything again once listening (the fallback: re-read).
final class CacheInvalidation: @unchecked Sendable {  // `connection`: made in init, then the listener thread's alone.
    static let channel = "roost_cache_invalidation"
    /// The listener's `application_name` is this followed by the process id (how an operator or a test finds it).
    static let applicationName = "roost cache listener "

    /// This node, in every payload it sends: its own notifications are skipped.
    private let node = UUID().uuidString
    private let url: PostgresURL
    private let invalidate: @Sendable (CachedState) -> Void
    /// The listening connection; nil while reconnecting.
    private var connection: PostgresConnection?
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    /// How long the listener waits on its socket before it looks at `stopping` again (how long `stop` can take).
    private static let pollSeconds = 0.2
    private static let firstBackoff = 0.05, maxBackoff = 2.0

    /// Connects and listens before returning (a node never serves without it), then listens on a thread of its own.
    init(url: PostgresURL, invalidate: @escaping @Sendable (CachedState) -> Void) throws {
        self.url = url
        self.invalidate = invalidate
        connection = try Self.listening(url)
        let thread = Thread { [self] in run() }
        thread.name = "roost cache listener"
        thread.start()
    }

    /// Inside a write transaction, before its commit: tells every node what it changed (nothing when nothing cached changed).
    func announce(_ state: WriteState, on connection: PostgresConnection) throws {
        let changed = CachedState(changedBy: state)
        guard !changed.isEmpty else { return }
        try connection.notify(Self.channel, payload: node + " " + changed.text)
    }

    /// Stops the listener and closes its connection (within `pollSeconds`).
    func stop() {
        guard !stopping.exchange(true, ordering: .relaxed) else { return }
        finished.wait()
    }

    private func run() {
        var backoff = Self.firstBackoff
        while !stopping.load(ordering: .relaxed) {
            do {
                if connection == nil {
                    connection = try Self.listening(url)
                    invalidate(.all)  // Listening again: anything cached while it was not may be stale.
                    backoff = Self.firstBackoff
                }
                if let notification = try connection?.waitForNotification(timeout: Self.pollSeconds) { received(notification) }
            } catch {
                connection = nil
                invalidate(.all)
                pause(backoff)
                backoff = min(backoff * 2, Self.maxBackoff)
            }
        }
        connection = nil  // Closes it.
        finished.signal()
    }

    private func received(_ notification: PostgresNotification) {
        let parts = notification.payload.split(separator: " ", maxSplits: 1)
        guard parts.first.map(String.init) != node else { return }
        invalidate(parts.count == 2 ? CachedState(text: parts[1]) : .all)
    }

    /// Sleeps `seconds`, waking early when stopping.
    private func pause(_ seconds: Double) {
        let until = Date().addingTimeInterval(seconds)
        while !stopping.load(ordering: .relaxed), until.timeIntervalSinceNow > 0 {
            Thread.sleep(forTimeInterval: min(Self.pollSeconds, until.timeIntervalSinceNow))
        }
    }

    private static func listening(_ url: PostgresURL) throws -> PostgresConnection {
        // TCP keepalives: a listener whose network path died (no FIN, no RST) notices within ~25 s, not the
        // kernel's ~2 h, and reconnects; until then it cannot know what changed. (Not used on a Unix socket.)
        let url = url.defaulting("keepalives_idle", to: "10").defaulting("keepalives_interval", to: "5")
            .defaulting("keepalives_count", to: "3")
        let connection = try PostgresConnection(url: url)
        try connection.query("SELECT set_config('application_name', $1, false)", [.text(applicationName + String(getpid()))])
        try connection.listen(channel)
        return connection
    }
}
