import Glibc
import Synchronization

/// How many connections the server holds, and how long a client may take to send a request.
public struct ConnectionLimits: Sendable {
    /// Open connections in all, WebSockets included (new ones past it are refused with a 503). Twice the
    /// 10,000 idle LiveQuery subscribers the benchmark holds, so they leave as many for HTTP clients.
    public var maxConnections = 20_000
    /// Open connections from one client address (an IPv6 client: from one /64); 0 for no limit.
    public var maxConnectionsPerAddress = 1_024
    /// Seconds a connection has to deliver a request's headers, from its opening or from its previous
    /// answer (Node's `headersTimeout`). It also bounds how long a kept-alive connection may sit idle.
    public var headersTimeoutSeconds = 20
    /// Seconds a connection has to deliver a whole request, headers and body (Node's `requestTimeout`).
    public var requestTimeoutSeconds = 120
    /// Seconds a connection may go without any traffic (libmicrohttpd's connection timeout).
    public var idleTimeoutSeconds = 30
    /// Request-body bytes held at once (in memory, or on disk: `BodySpool`), in all (`BodyBudget`); a request past
    /// it gets a 503. Room for a dozen 20 MB uploads at once, and within what a 1 GB machine can spare. At least
    /// `maxBodyBytes`.
    public var maxBufferedBodyBytes = 256 * 1024 * 1024
    /// Request-body bytes held at once for one client address (an IPv6 client: its /64); 0 for no
    /// limit. Three 20 MB uploads at once; a quarter of the total, so it takes four addresses to fill that.
    public var maxBufferedBodyBytesPerAddress = 64 * 1024 * 1024

    public init() {}
}

/// Decides which new connections are taken and by which daemon, and counts them until they close.
///
/// It counts every connection it hands out, including those libmicrohttpd has queued but not started
/// yet, so no daemon ever receives more than `maxConnections` (see `roost_mhd_start_worker` for why
/// that matters). A flood from one address meets `maxConnectionsPerAddress` first, so other clients
/// still get in; when the flood ends, its connections close and their slots come back.
final class ConnectionGate: Sendable {
    /// A client address as counted: IPv4 (also IPv4-mapped IPv6) in full, IPv6 by its /64, which
    /// one client usually holds entirely.
    struct Address: Hashable {
        let high: UInt64
        let low: UInt64
    }

    private struct Counts {
        var total = 0
        var perDaemon: [Int]
        var perAddress: [Address: Int] = [:]
        var nextDaemon = 0
    }

    let limits: ConnectionLimits
    private let counts: Mutex<Counts>

    init(limits: ConnectionLimits, daemons: Int) {
        self.limits = limits
        counts = Mutex(Counts(perDaemon: Array(repeating: 0, count: daemons)))
    }

    /// The daemon to give a new connection from `address` to (the one with the fewest, ties rotating),
    /// or nil when a limit is reached (refuse it). Every admitted connection must be `released` once.
    func admit(_ address: Address?) -> Int? {
        counts.withLock { counts in
            guard counts.total < limits.maxConnections else { return nil }
            if let address, limits.maxConnectionsPerAddress > 0 {
                guard counts.perAddress[address, default: 0] < limits.maxConnectionsPerAddress else { return nil }
                counts.perAddress[address, default: 0] += 1
            }
            let daemonCount = counts.perDaemon.count
            var chosen = counts.nextDaemon
            for offset in 0..<daemonCount {
                let candidate = (counts.nextDaemon + offset) % daemonCount
                if counts.perDaemon[candidate] < counts.perDaemon[chosen] { chosen = candidate }
            }
            counts.nextDaemon = (chosen + 1) % daemonCount
            counts.perDaemon[chosen] += 1
            counts.total += 1
            return chosen
        }
    }

    /// Gives back what `admit` counted for a connection that has closed (or was never started).
    func release(_ address: Address?, daemon: Int) {
        counts.withLock { counts in
            counts.total -= 1
            counts.perDaemon[daemon] -= 1
            if let address, limits.maxConnectionsPerAddress > 0, let count = counts.perAddress[address] {
                if count <= 1 { counts.perAddress[address] = nil } else { counts.perAddress[address] = count - 1 }
            }
        }
    }

    /// Open connections in all (for tests and logs).
    var openConnections: Int { counts.withLock { $0.total } }
}

extension ConnectionGate.Address {
    /// The counted form of a peer address; nil for other families (not counted per address).
    init?(_ address: UnsafePointer<sockaddr>) {
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            let v4 = UnsafeRawPointer(address).assumingMemoryBound(to: sockaddr_in.self).pointee
            self.init(high: 0, low: 0xffff_0000_0000 | UInt64(UInt32(bigEndian: v4.sin_addr.s_addr)))
        case AF_INET6:
            let v6 = UnsafeRawPointer(address).assumingMemoryBound(to: sockaddr_in6.self).pointee
            let bytes = withUnsafeBytes(of: v6.sin6_addr) { Array($0) }
            let high = bytes[0..<8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            let low = bytes[8..<16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            if high == 0, low >> 32 == 0xffff {  // ::ffff:a.b.c.d is the IPv4 client a.b.c.d.
                self.init(high: 0, low: low)
            } else {
                self.init(high: high, low: 0)
            }
        default:
            return nil
        }
    }
}
