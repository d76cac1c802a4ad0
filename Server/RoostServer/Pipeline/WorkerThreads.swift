import Foundation

/// Threads of their own that run submitted jobs in submission order (one thread: strictly one after another).
/// Threads, not a dispatch queue: SQLite readers belong to threads (`ReaderPool`), and a queue would hop between many.
final class WorkerThreads: @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [() -> Void] = []
    private var head = 0
    private var isStopping = false
    private let finished = DispatchGroup()

    init(name: String, count: Int = 1) {
        for index in 0..<max(count, 1) {
            finished.enter()
            let thread = Thread { [self] in
                nameCurrentThread(count > 1 ? "\(name)-\(index)" : name)
                while let job = next() { job() }
                finished.leave()
            }
            thread.start()
        }
    }

    func submit(_ job: @escaping () -> Void) {
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Runs what is queued, then ends the threads.
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
            jobs.removeAll(keepingCapacity: true)  // Taken from the front by index: no shifting of the rest.
            head = 0
            if isStopping { return nil }
            condition.wait()
        }
        head += 1
        return jobs[head - 1]
    }
}
