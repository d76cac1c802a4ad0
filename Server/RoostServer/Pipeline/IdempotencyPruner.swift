import Dispatch

/// Deletes expired `X-Parse-Request-Id` records once a minute, through the writer.
final class IdempotencyPruner: @unchecked Sendable {
    private let queue = DispatchQueue(label: "roost.idempotency-pruner")
    private let timer: DispatchSourceTimer

    init(storage: Storage, interval: DispatchTimeInterval = .seconds(60)) {
        timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + interval, repeating: interval)
        timer.setEventHandler { _ = try? storage.write { try Idempotency.prune(in: $0) } }
        timer.resume()
    }

    func stop() {
        timer.cancel()
        queue.sync {}
    }
}
