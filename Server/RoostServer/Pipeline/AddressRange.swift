import Foundation

/// An address or a CIDR range (`10.0.0.0/8`, `fd00::/8`), IPv4 or IPv6, as `--master-key-ips` lists them.
///
/// Addresses are compared in their 16-byte IPv6 form, IPv4 ones mapped (`::ffff:a.b.c.d`): an IPv4
/// range also matches a peer of a dual-stack socket, which reports IPv4 clients that way.
/// `0.0.0.0/0` matches every address, IPv6 too (it has always meant "any" here).
public struct AddressRange: Sendable, Equatable, CustomStringConvertible {
    private let network: [UInt8]
    private let prefixLength: Int
    public let description: String

    /// Every address, IPv4 and IPv6.
    public static let any = AddressRange(network: [UInt8](repeating: 0, count: 16), prefixLength: 0, description: "0.0.0.0/0")

    private init(network: [UInt8], prefixLength: Int, description: String) {
        self.network = network
        self.prefixLength = prefixLength
        self.description = description
    }

    /// Parses `a.b.c.d`, `a.b.c.d/n` (n ≤ 32), an IPv6 address or `ipv6/n` (n ≤ 128); nil for anything else.
    public init?(_ text: String) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed == "0.0.0.0/0" {
            self = .any
            return
        }
        let parts = trimmed.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2, let (bytes, isIPv4) = AddressRange.bytes(of: String(parts[0])) else { return nil }
        let width = isIPv4 ? 32 : 128
        var bits = width
        if parts.count == 2 {
            guard !parts[1].isEmpty, parts[1].count <= 3, parts[1].allSatisfy({ $0.isASCII && $0.isNumber }),
                let length = Int(parts[1]), length <= width
            else { return nil }
            bits = length
        }
        let prefixLength = bits + (128 - width)
        self.init(network: AddressRange.masked(bytes, prefixLength), prefixLength: prefixLength, description: trimmed)
    }

    /// Whether `address` (a peer address as the socket reports it) is in this range; false when it does not parse.
    public func contains(_ address: String) -> Bool {
        if prefixLength == 0 { return true }
        // A link-local peer may carry its zone (`fe80::1%eth0`).
        let plain = address.split(separator: "%", maxSplits: 1).first.map(String.init) ?? address
        guard let (bytes, _) = AddressRange.bytes(of: plain) else { return false }
        return AddressRange.masked(bytes, prefixLength) == network
    }

    /// The 16-byte form of an address (IPv4 mapped), and whether it was written as IPv4.
    private static func bytes(of text: String) -> ([UInt8], Bool)? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            let raw = withUnsafeBytes(of: &v4) { Array($0) }  // Network order.
            return ([UInt8](repeating: 0, count: 10) + [0xFF, 0xFF] + raw, true)
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            return (withUnsafeBytes(of: &v6) { Array($0) }, false)
        }
        return nil
    }

    private static func masked(_ bytes: [UInt8], _ prefixLength: Int) -> [UInt8] {
        bytes.enumerated().map { index, byte in
            let kept = min(max(prefixLength - index * 8, 0), 8)
            return kept == 8 ? byte : byte & ~(0xFF >> UInt8(kept))
        }
    }

    /// Parses a comma-separated list (`--master-key-ips`); empty entries are skipped.
    /// - Throws: `InvalidEntry` naming the first entry that is neither an address nor a range.
    public static func list(_ text: String) throws -> [AddressRange] {
        try text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.map {
            guard let range = AddressRange($0) else { throw InvalidEntry(entry: $0) }
            return range
        }
    }

    public struct InvalidEntry: Error, Equatable {
        public let entry: String
    }
}
