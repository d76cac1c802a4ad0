import Foundation

/// Lets writes run side by side (`together`), or one alone (`alone`: nothing else through the gate runs meanwhile);
/// a write waiting to run alone goes before those that come after it. Used where writes that keep undoing each other
/// (PostgreSQL's serialization failures) must take turns: `WriteBatcher`'s groups, and `PostgresEngine`'s
/// transactions once one has failed a few times.
///
/// A thread already inside the gate passes through it again at once (a write that runs another within it): it
/// would otherwise wait, alone, for itself to leave.
final class WriterGate: @unchecked Sendable {  // Its state only under `condition`.
    private let condition = NSCondition()
    private var running = 0, waitingAlone = 0, isAlone = false
    private var inside: [pthread_t] = []  // The threads in the gate: at most the node's writing threads.

    func together<T>(_ body: () throws -> T) rethrows -> T {
        let thread = pthread_self()
        let entered = condition.withLock { () -> Bool in
            if inside.contains(where: { pthread_equal($0, thread) != 0 }) { return false }
            while isAlone || waitingAlone > 0 { condition.wait() }
            running += 1
            inside.append(thread)
            return true
        }
        guard entered else { return try body() }
        defer { condition.withLock { running -= 1; leave(thread); condition.broadcast() } }
        return try body()
    }

    func alone<T>(_ body: () throws -> T) rethrows -> T {
        let thread = pthread_self()
        let entered = condition.withLock { () -> Bool in
            if inside.contains(where: { pthread_equal($0, thread) != 0 }) { return false }
            waitingAlone += 1
            while isAlone || running > 0 { condition.wait() }
            waitingAlone -= 1
            isAlone = true
            inside.append(thread)
            return true
        }
        guard entered else { return try body() }
        defer { condition.withLock { isAlone = false; leave(thread); condition.broadcast() } }
        return try body()
    }

    /// Whether the calling thread is inside the gate already (its write runs within another).
    var isEnteredByCurrentThread: Bool {
        let thread = pthread_self()
        return condition.withLock { inside.contains { pthread_equal($0, thread) != 0 } }
    }

    private func leave(_ thread: pthread_t) {
        if let index = inside.firstIndex(where: { pthread_equal($0, thread) != 0 }) { inside.remove(at: index) }
    }
}
