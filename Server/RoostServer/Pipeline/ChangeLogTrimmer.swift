import Dispatch

/// Trims LiveQuery's change log on a timer (never per write): changes older than the window, and all but the
/// last `maxChanges`, go in batches, each its own short write so requests go on between them.
final class ChangeLogTrimmer: @unchecked Sendable {
    private let queue = DispatchQueue(label: "roost.change-log-trimmer")
    private let timer: DispatchSourceTimer

    /// Runs every second: with nothing to drop, a tick is two indexed reads in an empty transaction.
    init(storage: Storage, windowSeconds: Int, maxChanges: Int, interval: DispatchTimeInterval = .seconds(1)) {
        timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + interval, repeating: interval)
        timer.setEventHandler {
            for _ in 0..<100 {  // A full batch means more may be due.
                guard let dropped = try? storage.trimChangeLog(windowSeconds: windowSeconds, maxChanges: maxChanges),
                      dropped >= ChangeLog.trimBatch else { return }
            }
        }
        timer.resume()
    }

    func stop() {
        timer.cancel()
        queue.sync {}
    }
}
