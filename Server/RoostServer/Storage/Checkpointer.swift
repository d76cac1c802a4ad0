import Dispatch

/// Moves the WAL into the database file in the background, once a second.
///
/// SQLite's automatic checkpoint runs inside the commit that crosses the threshold, so one
/// request in a thousand paid for copying pages and an fsync (a p99 spike). The writer turns it
/// off (`wal_autocheckpoint=0`) and this timer runs a PASSIVE checkpoint on its own connection,
/// which never blocks the writer or the readers.
final class Checkpointer: @unchecked Sendable {
    private let queue = DispatchQueue(label: "roost.checkpointer")
    private let timer: DispatchSourceTimer
    private let connection: SQLiteConnection

    init(path: String, interval: DispatchTimeInterval = .milliseconds(100)) throws {
        connection = try SQLiteConnection(path: path, readOnly: false, pragmas: Storage.pragmas)
        timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + interval, repeating: interval)
        timer.setEventHandler { [connection] in
            _ = try? connection.fetchRows("PRAGMA wal_checkpoint(PASSIVE)", [], cacheable: true)
        }
        timer.resume()
    }

    /// Stops the timer and waits for a checkpoint in progress.
    func stop() {
        timer.cancel()
        queue.sync {}
    }
}
