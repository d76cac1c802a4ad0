import CLibPQ
import Foundation

/// A fixed number of connections to one database, each lent to one caller at a time (libpq's rule: one thread per
/// connection at a time), made when first needed. A connection found broken — on return, or on checkout when the
/// server ended its session meanwhile (`pg_terminate_backend`, a restart) — is dropped, and a new one is made in
/// its place. Thread-safe.
///
///     let pool = try PostgresPool(url: url, size: 8)
///     let n = try pool.withConnection { try $0.query("select count(*) from t")[0].int(0) }
public final class PostgresPool: @unchecked Sendable {
    public let url: PostgresURL
    public let size: Int
    /// How long `withConnection` waits for a free connection before it throws `.timeout`.
    public let checkoutTimeout: Double

    private let condition = NSCondition()
    private var idle: [PostgresConnection] = []
    private var lent = 0
    private var opening = 0
    private var closed = false

    /// Reads the URL (connections are made on demand).
    /// - Throws: `.badURL`.
    public convenience init(url: String, size: Int, checkoutTimeout: Double = 10) throws {
        self.init(url: try PostgresURL(url), size: size, checkoutTimeout: checkoutTimeout)
    }

    public init(url: PostgresURL, size: Int, checkoutTimeout: Double = 10) {
        precondition(size > 0, "a pool needs at least one connection")
        self.url = url
        self.size = size
        self.checkoutTimeout = checkoutTimeout
    }

    /// Connections open now (idle and lent).
    public var openCount: Int { condition.withLock { idle.count + lent } }

    /// Lends a connection to `body` and takes it back, also when `body` throws. A transaction `body` left open is
    /// rolled back. Do not keep the connection past `body`.
    /// - Throws: `.timeout` when none came free in `checkoutTimeout`; connection errors; `body`'s.
    public func withConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        let connection = try checkOut()
        defer { checkIn(connection) }
        return try body(connection)
    }

    /// Closes the idle connections; lent ones close when they come back.
    public func close() {
        condition.withLock {
            closed = true
            idle.removeAll()
            condition.broadcast()
        }
    }

    private func checkOut() throws -> PostgresConnection {
        let deadline = Date().addingTimeInterval(checkoutTimeout)
        condition.lock()
        while true {
            if closed {
                condition.unlock()
                throw PostgresError(.misuse, message: "the pool is closed", endpoint: url.redacted)
            }
            if let connection = idle.popLast() {
                lent += 1
                condition.unlock()
                if Self.isHealthy(connection) { return connection }
                drop()  // The server ended it while idle: make another in its place.
                condition.lock()
                continue
            }
            if lent + opening + idle.count < size {
                opening += 1
                condition.unlock()
                do {
                    let connection = try PostgresConnection(url: url)
                    condition.withLock {
                        opening -= 1
                        lent += 1
                    }
                    return connection
                } catch {
                    condition.withLock {
                        opening -= 1
                        condition.signal()
                    }
                    throw error
                }
            }
            if !condition.wait(until: deadline) {
                condition.unlock()
                throw PostgresError(.timeout, message: "no connection of \(size) came free in \(checkoutTimeout) s",
                                    endpoint: url.redacted)
            }
        }
    }

    private func checkIn(_ connection: PostgresConnection) {
        // A read's COMMIT on its way (`commitWithoutWaiting`) is read by the connection's next user: not waited for here.
        if !connection.commitUnread {
            if connection.isConnected && !connection.isIdle { _ = try? connection.execute("ROLLBACK") }
            guard connection.isConnected && connection.isIdle else { return drop() }
        }
        condition.withLock {
            lent -= 1
            if !closed { idle.append(connection) }
            condition.signal()
        }
    }

    private func drop() {
        condition.withLock {
            lent -= 1
            condition.signal()
        }
    }

    /// An idle connection has nothing to read unless the server ended the session (its FATAL message, then EOF) or
    /// sent something unasked: non-blocking polls tell, without a round trip. libpq takes a FATAL that comes while
    /// idle for a notice and marks the connection bad only once it reads the EOF, so read until nothing is left.
    private static func isHealthy(_ connection: PostgresConnection) -> Bool {
        for _ in 0..<4 {
            guard connection.isConnected else { return false }
            var descriptor = pollfd(fd: PQsocket(connection.handle), events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 0) > 0 else { return true }
            do { try connection.consumeInput() } catch { return false }
        }
        return connection.isConnected
    }
}
