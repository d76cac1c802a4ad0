import CSQLite
import Synchronization

/// How long a read connection's statements may run: SQLite's progress handler and the slow SQL
/// functions (`$regex`) ask it every so often, and a statement past its deadline stops with
/// SQLITE_INTERRUPT, which `Storage.read` answers as Parse's 124 timeout. Shutdown stops every read
/// at once the same way (`stopAll`).
final class QueryBudget: @unchecked Sendable {
    /// Monotonic milliseconds; 0 when nothing is timed. Only the connection's thread sets it; atomic because the
    /// progress check may run on another thread, in a statement that ends a kept snapshot (`KeptSnapshot.endIfIdle`).
    private let deadlineStorage = Atomic<UInt64>(0)
    private var deadline: UInt64 {
        get { deadlineStorage.load(ordering: .relaxed) }
        set { deadlineStorage.store(newValue, ordering: .relaxed) }
    }
    /// Set by `stop()` from another thread (shutdown): everything stops.
    private let stopped = Atomic<Bool>(false)
    /// Set when a `$regex` gave up on a value (see `CompiledRegex`), to tell the client why.
    var regexGaveUp = false

    /// Starts timing unless a deadline is already running (a read inside a read); returns whether it did.
    func begin(milliseconds: UInt64) -> Bool {
        guard deadline == 0, milliseconds > 0 else { return false }
        deadline = OpenConnection.now() + milliseconds
        regexGaveUp = false
        return true
    }

    func end() { deadline = 0 }

    func stop() { stopped.store(true, ordering: .releasing) }

    /// Whether the running statement must stop now.
    var isExhausted: Bool {
        if stopped.load(ordering: .acquiring) { return true }
        return deadline != 0 && OpenConnection.now() >= deadline
    }

    /// Installs the check on `handle`, every 1,000 virtual-machine steps (a few microseconds apart).
    /// See https://sqlite.org/c3ref/progress_handler.html
    func install(on handle: OpaquePointer) {
        sqlite3_progress_handler(handle, 1000, progressCheck, Unmanaged.passUnretained(self).toOpaque())
    }
}

private let progressCheck: @convention(c) (UnsafeMutableRawPointer?) -> Int32 = { pointer in
    guard let pointer else { return 0 }
    return Unmanaged<QueryBudget>.fromOpaque(pointer).takeUnretainedValue().isExhausted ? 1 : 0
}
