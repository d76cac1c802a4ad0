import Foundation

/// Runs blocking work (socket reads, sleeps) on a thread of its own and returns its result. On Swift's
/// cooperative pool (one thread per CPU) it would stall every other test's tasks meanwhile, and their
/// timing checks would fail on a 2-core machine. Assert on the result afterwards, in the test's task.
public func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
}
