import Foundation

/// A signal one thread waits for with a deadline; a signal sent while nobody waits is kept for the next wait.
final class Wakeup: @unchecked Sendable {
    private let condition = NSCondition()
    private var signalled = false

    func signal() {
        condition.lock()
        signalled = true
        condition.signal()
        condition.unlock()
    }

    /// Returns when signalled (now, if a signal came since the last wait) or at `deadline`.
    func wait(until deadline: Date) {
        condition.lock()
        while !signalled, condition.wait(until: deadline) {}
        signalled = false
        condition.unlock()
    }
}
