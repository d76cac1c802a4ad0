/// An HTTP request as the adapter hands it over: plain values, no MHD types.
public struct HTTPRequest: Sendable {
    public var method: String
    /// The path without the query string, still percent-encoded.
    public var path: String
    /// The query string's parameters, form-decoded (`+` is a space); the last value wins.
    public var query: [String: String]
    /// Header names are lowercased.
    public var headers: [String: String]
    public var body: [UInt8]
    /// The body went over the configured limit and was not kept.
    public var bodyTooLarge: Bool
    /// The peer's IP address (`127.0.0.1`, `::1`), empty when unknown.
    public var clientAddress: String = ""

    public init(method: String, path: String, query: [String: String] = [:], headers: [String: String] = [:],
                body: [UInt8] = [], bodyTooLarge: Bool = false) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.bodyTooLarge = bodyTooLarge
    }

    /// Splits a raw request target (`/parse/classes/A?where=%7B%7D`) into its path (still encoded)
    /// and its decoded query parameters.
    public static func splitTarget(_ target: String) -> (path: String, query: [String: String]) {
        guard let mark = target.utf8.firstIndex(of: UInt8(ascii: "?")) else { return (target, [:]) }
        let path = String(target[..<mark])
        var query: [String: String] = [:]
        for pair in target[target.utf8.index(after: mark)...].split(separator: "&") {
            let keyValue = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = percentDecode(keyValue[0], plusIsSpace: true)
            query[key] = keyValue.count > 1 ? percentDecode(keyValue[1], plusIsSpace: true) : ""
        }
        return (path, query)
    }

    static func percentDecode(_ text: Substring, plusIsSpace: Bool) -> String {
        guard text.utf8.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) else { return String(text) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "+"), plusIsSpace {
                bytes.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%") {
                guard let high = iterator.next(), let low = iterator.next(), let h = hexValue(high), let l = hexValue(low) else {
                    bytes.append(byte)
                    continue
                }
                bytes.append(h << 4 | l)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// An HTTP response to write.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: [(String, String)]
    public var body: [UInt8]
    /// Close the connection instead of answering (fault injection in tests: a reply lost after the commit).
    public var dropsConnection = false

    public init(status: Int, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}
