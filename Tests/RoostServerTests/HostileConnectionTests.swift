import Foundation
import RoostCore
import RoostTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What one client with only the server's address can do to it: floods of idle connections and clients
/// that send a request a byte now and then. The server refuses past its caps, ends late clients, and
/// keeps answering everyone else (loopback only; counts and times bounded). One test at a time: a flood
/// busies the loopback and the test process for everyone near it. The waits are generous: what these tests
/// catch is a server that never answers again, not a slow one on a loaded machine.
@Suite(.serialized) struct HostileConnectionTests {
    /// 5,000 connections that send nothing, three times over. libmicrohttpd 0.9.75 deadlocked a daemon
    /// thread as soon as it was handed a connection past its own limit (1,020): with two threads, the
    /// first flood stopped the server for good (every request, /health too, went unanswered).
    @Test func floodsOfIdleConnectionsNeverStopTheServer() async throws {
        guard ConnectionFlood.raiseDescriptorLimit(to: 6_000) else { return }  // Not on a machine this small.
        let server = try TestServer(arguments: ["--threads", "2", "--max-connections-per-ip", "0"])
        let port = server.port
        for round in 1...3 {
            let opened = try await onOwnThread {
                let flood = ConnectionFlood(port: port, count: 5_000)
                let opened = flood.opened
                usleep(700_000)
                flood.close()
                return opened
            }
            #expect(opened > 4_000, "round \(round): opened \(opened)")
            let health = try await onOwnThread { HostileConnectionTests.health(port) }
            #expect(health != nil, "round \(round): /health unanswered after the flood")
        }
    }

    /// Past the per-address cap a new connection gets a 503 at once; another address still gets in, and
    /// once the flood closes its connections the address is served again.
    @Test func perAddressCapRefusesCleanlyAndRecovers() async throws {
        // Held connections send nothing: a long headers deadline keeps them open however slow the machine.
        let server = try TestServer(arguments: ["--max-connections-per-ip", "20", "--headers-timeout", "600"])
        let port = server.port
        let (refused, otherHead) = try await onOwnThread {
            let held = try (0..<20).map { _ in try RawConnection(port: port) }
            usleep(300_000)  // The acceptor has counted them.
            let refused = try RawConnection(port: port).waitForClose(within: 30)
            let other = try RawConnection(port: port, from: "127.0.0.2")
            let (head, _) = try other.exchange("GET /parse/health HTTP/1.1\r\nHost: roost\r\n\r\n")
            withExtendedLifetime(held) {}
            return (refused, head)
        }
        #expect(refused?.hasPrefix("HTTP/1.1 503") == true, "\(refused ?? "still open")")
        #expect(refused?.contains(#"{"error":"too many connections"}"#) == true)
        #expect(otherHead.hasPrefix("HTTP/1.1 200"), "\(otherHead)")
        // The held connections are closed now.
        #expect(try await onOwnThread { HostileConnectionTests.eventuallyServed(port) }, "the address stayed refused after its connections closed")
    }

    @Test func totalCapRefusesEveryAddress() async throws {
        let server = try TestServer(arguments: ["--max-connections", "10", "--headers-timeout", "600"])
        let port = server.port
        let refused = try await onOwnThread {
            let held = try (0..<10).map { try RawConnection(port: port, from: "127.0.0.\($0 + 1)") }
            usleep(300_000)
            let refused = try RawConnection(port: port, from: "127.0.0.20").waitForClose(within: 30)
            withExtendedLifetime(held) {}
            return refused
        }
        #expect(refused?.hasPrefix("HTTP/1.1 503") == true, "\(refused ?? "still open")")
        #expect(try await onOwnThread { HostileConnectionTests.eventuallyServed(port) }, "the server stayed full after the connections closed")
    }

    /// Headers trickled a byte at a time: answered 408 and closed at the headers deadline, where the old
    /// server kept the connection as long as a byte came every 30 s.
    @Test func trickledHeadersEndAtTheHeadersDeadline() async throws {
        let server = try TestServer(arguments: ["--headers-timeout", "1", "--request-timeout", "3"])
        let port = server.port
        let (reply, elapsed) = try await onOwnThread { () throws -> (String?, Double) in
            let connection = try RawConnection(port: port)
            try connection.send("GET /parse/health HTTP/1.1\r\nHost: roost\r\n")
            let started = Date()
            var reply: String?
            for byte in String(repeating: "X-Slow: aaaaaaaaaa", count: 5) {
                try? connection.send(String(byte))
                reply = connection.waitForClose(within: 0.2)
                if reply != nil || Date().timeIntervalSince(started) > 10 { break }
            }
            return (reply, Date().timeIntervalSince(started))
        }
        #expect(reply?.hasPrefix("HTTP/1.1 408") == true, "\(reply ?? "still open")")
        #expect(reply?.contains(#"{"error":"request timeout"}"#) == true)
        #expect(elapsed < 8)
    }

    /// A body trickled a byte at a time ends at the request deadline, and nothing is stored.
    @Test func trickledBodyEndsAtTheRequestDeadline() async throws {
        let server = try TestServer(arguments: ["--headers-timeout", "1", "--request-timeout", "2"])
        let port = server.port
        let (reply, elapsed) = try await onOwnThread { () throws -> (String?, Double) in
            let connection = try RawConnection(port: port)
            try connection.send("POST /parse/classes/Slow HTTP/1.1\r\nHost: roost\r\nX-Parse-Application-Id: \(TestServer.applicationId)\r\n"
                + "Content-Type: application/json\r\nContent-Length: 200\r\n\r\n{")
            let started = Date()
            var reply: String?
            for _ in 0..<60 {
                try? connection.send(" ")
                reply = connection.waitForClose(within: 0.25)
                if reply != nil { break }
            }
            return (reply, Date().timeIntervalSince(started))
        }
        #expect(reply?.hasPrefix("HTTP/1.1 408") == true, "\(reply ?? "still open")")
        #expect(elapsed > 1.2 && elapsed < 8, "ended after \(elapsed) s")
        let stored = try await server.request("GET", "/classes/Slow", master: true)
        #expect(stored.json["results"]?.arrayValue?.isEmpty != false)
    }

    /// A connection that sends nothing is closed without a reply at the headers deadline, as is a
    /// kept-alive one after its answer; one that keeps asking in time is served throughout.
    @Test func idleConnectionsCloseQuietlyAndPromptClientsAreServed() async throws {
        let server = try TestServer(arguments: ["--headers-timeout", "2"])
        let port = server.port
        let (idleEnd, heads, keptAliveEnd) = try await onOwnThread { () throws -> (String?, [String], String?) in
            let idle = try RawConnection(port: port)
            let idleEnd = idle.waitForClose(within: 8)
            let keptAlive = try RawConnection(port: port)
            var heads: [String] = []
            for _ in 0..<4 {
                heads.append(try keptAlive.exchange("GET /parse/health HTTP/1.1\r\nHost: roost\r\n\r\n").head)
                usleep(600_000)
            }
            return (idleEnd, heads, keptAlive.waitForClose(within: 6))
        }
        #expect(idleEnd == "")
        #expect(heads.allSatisfy { $0.hasPrefix("HTTP/1.1 200") }, "\(heads)")
        #expect(keptAliveEnd == "")
    }

    /// Seconds /health took, from a second client address (so a flood's per-address cap does not apply);
    /// nil when unanswered within 60 s. Blocking: call it through `onOwnThread`.
    static func health(_ port: Int) -> Double? {
        let started = Date()
        guard let connection = try? RawConnection(port: port, from: "127.0.0.2"),
            (try? connection.send("GET /parse/health HTTP/1.1\r\nHost: roost\r\nConnection: close\r\n\r\n")) != nil,
            let reply = connection.waitForClose(within: 60), reply.hasPrefix("HTTP/1.1 200")
        else { return nil }
        return Date().timeIntervalSince(started)
    }

    /// Whether a request from 127.0.0.1 is answered 200 within 60 s (connections close asynchronously).
    /// Blocking: call it through `onOwnThread`.
    static func eventuallyServed(_ port: Int) -> Bool {
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if let connection = try? RawConnection(port: port),
                (try? connection.send("GET /parse/health HTTP/1.1\r\nHost: roost\r\nConnection: close\r\n\r\n")) != nil,
                connection.waitForClose(within: 2)?.hasPrefix("HTTP/1.1 200") == true {
                return true
            }
            usleep(200_000)
        }
        return false
    }
}

/// Many TCP connections to a port that send nothing, opened without waiting (a connect each), and
/// reset on `close()` (SO_LINGER 0: no TIME_WAIT left behind, as a flooding client would).
final class ConnectionFlood {
    private var sockets: [Int32] = []
    var opened: Int { sockets.count }

    init(port: Int, count: Int) {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        for _ in 0..<count {
            let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            guard socket >= 0 else { break }
            let status = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard status == 0 || errno == EINPROGRESS else {
                Glibc.close(socket)
                break
            }
            sockets.append(socket)
        }
    }

    func close() {
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        for socket in sockets {
            setsockopt(socket, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
            Glibc.close(socket)
        }
        sockets.removeAll()
    }

    deinit { close() }

    /// Raises this process's descriptor limit to `needed` if the hard limit allows; false when it does not.
    static func raiseDescriptorLimit(to needed: Int) -> Bool {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return false }
        if limit.rlim_cur >= rlim_t(needed) { return true }
        guard limit.rlim_max >= rlim_t(needed) else { return false }
        limit.rlim_cur = limit.rlim_max
        return setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0
    }
}
