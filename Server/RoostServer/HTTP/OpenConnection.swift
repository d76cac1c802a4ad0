import CMicroHTTPD
import Foundation
import Glibc
import Synchronization

/// One open connection as its daemon thread and the `DeadlineWatcher` share it: the deadline by which
/// its client must have sent what it owes (a request's headers, or all of the request).
///
/// libmicrohttpd's own timeout only ends connections that send nothing at all; a client sending one
/// byte now and then would hold its connection, and a slot of `ConnectionGate`, forever.
final class OpenConnection: Sendable {
    let socket: Int32
    let address: ConnectionGate.Address?
    let daemon: Int
    /// Milliseconds on the monotonic clock; 0 while the server has the request (nothing is owed), or
    /// `expired` once the watcher has ended the connection. Set only through `owe(by:)`.
    private let deadline = Atomic<UInt64>(0)
    private static let expired = UInt64.max
    /// When the client began to owe the current request: the connection's opening, or the previous answer.
    private let requestSince = Atomic<UInt64>(0)
    /// Whether the current request's first line has arrived (a timed-out client then gets a 408;
    /// an idle kept-alive connection is just closed, as its client expects).
    let requestLineSeen = Atomic<Bool>(false)
    /// Upgraded (a WebSocket): its socket is another owner's now, and so is its `ConnectionGate` slot.
    let isHandedOff = Atomic<Bool>(false)

    /// Whether the client has closed its end (a read would find the end of the stream), taking none of its bytes.
    var peerHasClosed: Bool { peekOneByte() == 0 }

    /// Whether bytes have arrived that the daemon has not read yet.
    private var hasUnreadBytes: Bool { peekOneByte() > 0 }

    /// `recv` of one byte left in the socket, without waiting: 1 (a byte waits), 0 (the client closed), -1 (neither).
    private func peekOneByte() -> Int {
        var byte: UInt8 = 0
        return recv(socket, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
    }

    init(socket: Int32, address: ConnectionGate.Address?, daemon: Int) {
        self.socket = socket
        self.address = address
        self.daemon = daemon
    }

    /// A new request is owed from now (the connection has opened, or its previous request was answered):
    /// its headers within `headersTimeoutSeconds`.
    func awaitRequest(headersTimeoutSeconds: Int) {
        let now = Self.now()
        requestLineSeen.store(false, ordering: .releasing)
        graceGiven.store(false, ordering: .releasing)
        requestSince.store(now, ordering: .relaxed)
        owe(by: now + UInt64(headersTimeoutSeconds) * 1000)
    }

    /// The headers are in: the whole request is owed within `requestTimeoutSeconds` of its start. False
    /// when the watcher has already ended the connection.
    func awaitBody(requestTimeoutSeconds: Int) -> Bool {
        owe(by: requestSince.load(ordering: .relaxed) + UInt64(requestTimeoutSeconds) * 1000)
    }

    /// Sets the deadline (0: nothing owed); false when the watcher has already ended the connection,
    /// which must then be dropped.
    @discardableResult
    func owe(by newDeadline: UInt64) -> Bool {
        var current = deadline.load(ordering: .acquiring)
        while current != Self.expired {
            let (exchanged, found) = deadline.compareExchange(
                expected: current, desired: newDeadline, ordering: .acquiringAndReleasing)
            if exchanged { return true }
            current = found
        }
        return false
    }

    /// Whether the grace below was given in the current request's time (reset with each answer).
    private let graceGiven = Atomic<Bool>(false)
    static let graceMilliseconds: UInt64 = 2_000

    /// Marks the connection ended when its deadline has passed; true when this call did so (only one can).
    ///
    /// A request that has just arrived, unread, on a kept-alive connection whose time is up (its client
    /// was idle until now) gets one grace of 2 s to be read: closing it would answer a client that did
    /// nothing wrong with an empty reply. A trickling client gains nothing from it: the daemon reads
    /// what arrives at once, so only the moment of arrival finds bytes waiting, and only once.
    func expireIfLate(now: UInt64) -> Bool {
        let current = deadline.load(ordering: .acquiring)
        guard current != 0, current != Self.expired, current <= now else { return false }
        if !requestLineSeen.load(ordering: .acquiring), hasUnreadBytes, !graceGiven.exchange(true, ordering: .acquiringAndReleasing) {
            _ = deadline.compareExchange(expected: current, desired: now + Self.graceMilliseconds, ordering: .acquiringAndReleasing)
            return false
        }
        return deadline.compareExchange(expected: current, desired: Self.expired, ordering: .acquiringAndReleasing).exchanged
    }

    /// Milliseconds on a monotonic clock (the coarse one: a vDSO read, no system call).
    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC_COARSE, &time)
        return UInt64(time.tv_sec) * 1000 + UInt64(time.tv_nsec) / 1_000_000
    }
}

/// Ends the connections of clients that are late with a request (see `ConnectionLimits`): four times a
/// second it looks at every open connection, answers a late request 408 and shuts the socket down, which
/// the connection's daemon then notices and closes. It never closes a socket itself: the daemon owns it,
/// and removes a connection from `connections` (under its lock) before closing it.
final class DeadlineWatcher: Sendable {
    /// The open connections of one daemon, behind a lock of their own (daemons touch only their own).
    final class Table: Sendable {
        let open = Mutex<[ObjectIdentifier: OpenConnection]>([:])
    }

    let connections: [Table]
    private let stopped = Atomic<Bool>(false)
    private let finished = Atomic<Bool>(false)

    init(daemons: Int) {
        connections = (0..<daemons).map { _ in Table() }
    }

    func start() {
        let thread = Thread { [self] in
            nameCurrentThread("roost-deadline")
            while !stopped.load(ordering: .acquiring) {
                usleep(250_000)
                sweep(now: OpenConnection.now())
            }
            finished.store(true, ordering: .releasing)
        }
        thread.start()
    }

    func stop() {
        stopped.store(true, ordering: .releasing)
        while !finished.load(ordering: .acquiring) { usleep(10_000) }
    }

    func sweep(now: UInt64) {
        for table in connections {
            table.open.withLock { open in
                for connection in open.values where connection.expireIfLate(now: now) {
                    if connection.requestLineSeen.load(ordering: .acquiring) {
                        Self.timeoutReply.withUnsafeBytes {
                            _ = Glibc.send(connection.socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
                        }
                    }
                    Glibc.shutdown(connection.socket, Int32(SHUT_RDWR))
                }
            }
        }
    }

    private static let timeoutReply = Array((
        "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\n"
        + "Content-Length: 27\r\n\r\n{\"error\":\"request timeout\"}").utf8)
}
