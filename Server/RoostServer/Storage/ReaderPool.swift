import Foundation

/// One `SQLiteConnection` per thread, created on the thread's first read and closed with the pool.
///
/// The HTTP server runs a fixed set of worker threads, so this holds at most one connection per
/// worker (plus one for any other thread that reads, such as a test).
final class ReaderPool: @unchecked Sendable {
    private let path: String
    private var key = pthread_key_t()
    private let lock = NSLock()
    private var all: [SQLiteConnection] = []

    init(path: String) {
        self.path = path
        pthread_key_create(&key, nil)
    }

    /// The calling thread's reader.
    func reader() throws -> SQLiteConnection {
        if let pointer = pthread_getspecific(key) {
            return Unmanaged<SQLiteConnection>.fromOpaque(pointer).takeUnretainedValue()
        }
        let reader = try SQLiteConnection(path: path, readOnly: true, pragmas: SQLiteEngine.pragmas)
        lock.withLock { all.append(reader) }  // Keeps it alive; the thread slot holds an unretained pointer.
        pthread_setspecific(key, Unmanaged.passUnretained(reader).toOpaque())
        return reader
    }

    /// Ends the snapshots kept by the connections no read is using now (`KeptSnapshot`). Callable from any thread.
    func endIdleSnapshots() {
        lock.withLock { for reader in all { reader.keptSnapshot.endIfIdle(on: reader) } }
    }

    /// Stops every read in progress, and any later one (shutdown). Callable from any thread.
    func interruptAll() {
        lock.withLock { for reader in all { reader.interrupt() } }
    }

    /// Closes every connection. Call only once no thread reads any more (after the HTTP server stopped).
    func close() {
        lock.withLock { all.removeAll() }
        pthread_key_delete(key)
    }
}
