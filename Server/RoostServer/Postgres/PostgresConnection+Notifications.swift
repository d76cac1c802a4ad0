import CLibPQ
import Foundation

/// A `NOTIFY` delivered to a listening connection.
public struct PostgresNotification: Sendable, Equatable {
    public let channel: String
    public let payload: String
    /// The server process of the session that sent it (the listener's own, for a notification it sent itself).
    public let senderPID: Int32
}

/// LISTEN/NOTIFY (https://www.postgresql.org/docs/current/libpq-notify.html). A listening connection should be one
/// of its own, not a pooled one: notifications come to the session that listens, and only between transactions.
extension PostgresConnection {
    /// Starts listening on a channel (any text: it is quoted).
    public func listen(_ channel: String) throws {
        try execute("LISTEN " + Self.quoteIdentifier(channel))
    }

    public func unlisten(_ channel: String) throws {
        try execute("UNLISTEN " + Self.quoteIdentifier(channel))
    }

    /// Sends a notification (delivered when the current transaction commits, or at once outside one).
    public func notify(_ channel: String, payload: String = "") throws {
        try query("SELECT pg_notify($1, $2)", [.text(channel), .text(payload)])
    }

    /// The next notification: one already received, else waits on the socket for at most `timeout` seconds.
    /// Returns nil when none came in time.
    /// - Throws: `.connectionLost` when the connection broke while waiting (a listener must then reconnect and
    ///   re-read whatever it caches: notifications sent meanwhile are lost).
    public func waitForNotification(timeout: Double) throws -> PostgresNotification? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let notification = nextNotification() { return notification }
            let socket = PQsocket(handle)
            guard socket >= 0 else { throw lostOrFailed(message: "the connection has no socket") }
            // Polled at least once, so a timeout of 0 still reads what has arrived.
            let remaining = max(0, deadline.timeIntervalSinceNow)
            var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, Int32(min(remaining * 1000, Double(Int32.max)).rounded(.up)))
            if ready < 0 && errno != EINTR {
                throw lostOrFailed(message: "poll failed: " + String(cString: strerror(errno)))
            }
            if ready > 0 {
                try consumeInput()
            } else if remaining == 0 {
                return nextNotification()
            }
        }
    }

    /// Reads whatever the server sent (notifications, or the end of a terminated session) without blocking.
    func consumeInput() throws {
        if PQconsumeInput(handle) == 0 || !isConnected {
            throw PostgresError(.connectionLost, message: String(cString: PQerrorMessage(handle)), endpoint: endpoint)
        }
    }

    private func nextNotification() -> PostgresNotification? {
        guard let raw = PQnotifies(handle) else { return nil }
        defer { PQfreemem(raw) }
        return PostgresNotification(channel: String(cString: raw.pointee.relname), payload: String(cString: raw.pointee.extra),
                                    senderPID: raw.pointee.be_pid)
    }
}
