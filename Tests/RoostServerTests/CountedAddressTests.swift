import Glibc
import Testing
@testable import RoostServer

/// A client address as the per-address limits count it (`ConnectionGate.Address`, from the socket address): the HTTP
/// connection limit and LiveQuery's socket limit and replay budget all use this one key.
@Suite struct CountedAddressTests {
    private static func counted(_ text: String) -> ConnectionGate.Address? {
        var storage = sockaddr_storage()
        return withUnsafeMutablePointer(to: &storage) { pointer -> ConnectionGate.Address? in
            let raw = UnsafeMutableRawPointer(pointer)
            if text.contains(":") {
                let v6 = raw.assumingMemoryBound(to: sockaddr_in6.self)
                v6.pointee.sin6_family = sa_family_t(AF_INET6)
                guard inet_pton(AF_INET6, text, &v6.pointee.sin6_addr) == 1 else { return nil }
            } else {
                let v4 = raw.assumingMemoryBound(to: sockaddr_in.self)
                v4.pointee.sin_family = sa_family_t(AF_INET)
                guard inet_pton(AF_INET, text, &v4.pointee.sin_addr) == 1 else { return nil }
            }
            return raw.withMemoryRebound(to: sockaddr.self, capacity: 1) { ConnectionGate.Address($0) }
        }
    }

    @Test func ipv6CountsByItsSlash64AndIPv4InFull() throws {
        let first = try #require(Self.counted("2001:db8:1:2::1"))
        #expect(Self.counted("2001:db8:1:2:ffff:ffff:ffff:ffff") == first, "one /64: one client")
        #expect(Self.counted("2001:db8:1:3::1") != first, "the next /64: another client")
        #expect(Self.counted("::ffff:192.0.2.7") == Self.counted("192.0.2.7"), "an IPv4-mapped client is that IPv4 client")
        #expect(Self.counted("192.0.2.7") != Self.counted("192.0.2.8"))
        #expect(Self.counted("::1") != Self.counted("127.0.0.1"))
    }
}
