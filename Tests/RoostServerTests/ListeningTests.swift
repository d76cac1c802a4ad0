import Foundation
import RoostCore
@testable import RoostServer
import RoostTestSupport
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `AddressRange`: the addresses and CIDR ranges of `--master-key-ips`.
@Suite struct AddressRangeTests {
    @Test(arguments: [
        ("127.0.0.0/8", "127.0.0.1", true), ("127.0.0.0/8", "127.255.0.9", true), ("127.0.0.0/8", "128.0.0.1", false),
        ("127.0.0.0/8", "::ffff:127.0.0.1", true), ("10.1.2.3", "10.1.2.3", true), ("10.1.2.3", "10.1.2.4", false),
        ("10.1.2.3/32", "::ffff:10.1.2.3", true), ("192.168.1.0/24", "192.168.1.77", true), ("192.168.1.0/24", "192.168.2.1", false),
        ("172.16.0.0/12", "172.31.255.255", true), ("172.16.0.0/12", "172.32.0.0", false), ("10.0.0.0/7", "11.255.0.1", true),
        ("::1", "::1", true), ("::1", "::2", false), ("::1", "127.0.0.1", false), ("::1/128", "0:0:0:0:0:0:0:1", true),
        ("fd00::/8", "fd12:3456::1", true), ("fd00::/8", "fe80::1", false), ("fe80::/10", "fe80::1%eth0", true),
        ("2001:db8::/32", "2001:db8:ffff::1", true), ("2001:db8::/32", "2001:db9::1", false),
        ("::ffff:10.0.0.0/104", "10.9.9.9", true), ("::ffff:10.0.0.0/104", "11.0.0.1", false),
        ("0.0.0.0/0", "203.0.113.5", true), ("0.0.0.0/0", "2001:db8::1", true), ("::/0", "10.0.0.1", true),
        ("10.0.0.0/8", "not-an-address", false), ("10.0.0.0/8", "", false),
    ])
    func matches(range: String, address: String, expected: Bool) throws {
        let parsed = try #require(AddressRange(range))
        #expect(parsed.contains(address) == expected, "\(range) ∋ \(address)")
    }

    @Test(arguments: ["", "localhost", "127.0.0.1/33", "::1/129", "10.0.0.0/", "10.0.0.0/-1", "10.0.0.0/8/8", "10.0.0.256",
                      "1.2.3.4.5", "10.0.0.0/ 8", "fe80::1%eth0", "0.0.0.0/+0", "127.0.0.0/8a", "*"])
    func refusesWhatIsNeitherAnAddressNorARange(text: String) {
        #expect(AddressRange(text) == nil)
    }

    @Test func aListNamesItsBadEntry() throws {
        #expect(try AddressRange.list(" 127.0.0.1, ::1,").map(\.description) == ["127.0.0.1", "::1"])
        #expect(throws: AddressRange.InvalidEntry(entry: "10.0.0.0/40")) { try AddressRange.list("127.0.0.1,10.0.0.0/40") }
    }
}

/// How the server listens and whom it takes the master key from.
@Suite struct ListeningTests {
    @Test func masterKeyIPsTakeRanges() async throws {
        let inRange = try TestServer(arguments: ["--master-key-ips", "127.0.0.0/8"])
        #expect(try await inRange.request("GET", "/schemas", master: true).status == 200)
        let outOfRange = try TestServer(arguments: ["--master-key-ips", "10.0.0.0/8, fd00::/8"])
        let refused = try await outOfRange.request("GET", "/schemas", master: true)
        #expect(refused.status == 403 && refused.json == ["error": "unauthorized"])
    }

    /// An entry that is neither an address nor a range stops the server at start, naming it (it used to
    /// be ignored silently, leaving the master key refused from everywhere but the listed addresses).
    @Test(arguments: [(["--master-key-ips", "127.0.0.1,10.0.0.0/33"], [:], "10.0.0.0/33", "--master-key-ips"),
                      ([], ["ROOST_MASTER_KEY_IPS": "localhost"], "localhost", "ROOST_MASTER_KEY_IPS")])
    func aBadEntryStopsTheServer(arguments: [String], environment: [String: String], entry: String, source: String) throws {
        let attempt = try StartAttempt(["--master-key", TestServer.masterKey] + arguments, environment: environment)
        #expect(!attempt.started, "the server started with \(entry) in \(source)")
        #expect(attempt.status != 0)
        #expect(attempt.log.contains(entry) && attempt.log.contains(source), "\(attempt.log)")
    }

    /// `--host ::` listens on IPv6 and IPv4 alike (it used to take IPv6 only); IPv4 peers arrive as
    /// `::ffff:a.b.c.d` and still match the default master key addresses.
    @Test func theUnspecifiedIPv6AddressIsDualStack() async throws {
        let server = try TestServer(arguments: ["--host", "::"])
        #expect(try await server.request("GET", "/health", appId: false).status == 200)  // Over 127.0.0.1.
        #expect(try await server.request("GET", "/schemas", master: true).status == 200)
        #expect(ListeningTests.healthOverIPv6Loopback(port: server.port).hasPrefix("HTTP/1.1 200"))
    }

    /// The first bytes of the reply to `GET /parse/health` sent to `[::1]:port` ("" when it cannot connect).
    static func healthOverIPv6Loopback(port: Int) -> String {
        let socket = Glibc.socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return "" }
        defer { close(socket) }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_port = in_port_t(UInt16(port).bigEndian)
        address.sin6_addr = in6addr_loopback
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
        }
        guard connected == 0 else { return "" }
        let request = Array("GET /parse/health HTTP/1.1\r\nHost: roost\r\nConnection: close\r\n\r\n".utf8)
        guard send(socket, request, request.count, 0) == request.count else { return "" }
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = recv(socket, &buffer, buffer.count, 0)
        return count > 0 ? String(decoding: buffer[..<count], as: UTF8.self) : ""
    }
}
