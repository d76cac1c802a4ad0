import Foundation

/// One thread that runs jobs in the order they were submitted. A thread of its own, not a dispatch
/// queue: SQLite readers belong to threads (`ReaderPool`), and a queue would hop between many.
final class SerialWorker: @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [() -> Void] = []
    private var head = 0
    private var isStopping = false
    private let finished = DispatchSemaphore(value: 0)

    init(name: String) {
        let thread = Thread { [self] in
            nameCurrentThread(name)
            while let job = next() { job() }
            finished.signal()
        }
        thread.start()
    }

    func submit(_ job: @escaping () -> Void) {
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Runs what is queued, then ends the thread.
    func stop() {
        condition.lock()
        isStopping = true
        condition.broadcast()
        condition.unlock()
        finished.wait()
    }

    private func next() -> (() -> Void)? {
        condition.lock()
        defer { condition.unlock() }
        while head == jobs.count {
            jobs.removeAll(keepingCapacity: true)
            head = 0
            if isStopping { return nil }
            condition.wait()
        }
        head += 1
        return jobs[head - 1]
    }
}
