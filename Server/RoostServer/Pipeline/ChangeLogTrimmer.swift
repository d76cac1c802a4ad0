import Dispatch

/// Trims LiveQuery's change log on a timer (never per write): changes older than the window, and all but the
/// last `maxChanges`, go in batches, each its own short write so requests go on between them.
final class ChangeLogTrimmer: @unchecked Sendable {
    private let queue = DispatchQueue(label: "roost.change-log-trimmer")
    private let timer: DispatchSourceTimer

    /// Runs every tenth of the window, at least every 10 s and at most every second.
    init(storage: Storage, windowSeconds: Int, maxChanges: Int) {
        let interval = DispatchTimeInterval.seconds(min(10, max(1, windowSeconds / 10)))
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
