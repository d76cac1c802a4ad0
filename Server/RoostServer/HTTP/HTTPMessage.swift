/// An HTTP request as the adapter hands it over: plain values, no MHD types.
public struct HTTPRequest: Sendable {
    public var method: String
    /// The path without the query string, still percent-encoded.
    public var path: String
    /// The query string's parameters, form-decoded (`+` is a space). A repeated parameter (`keys=a&keys=b`, or
    /// `keys[]=a&keys[]=b`) has its values joined by commas, as Express's list becomes text in Parse (`String(array)`).
    public var query: [String: String]
    /// The request target as sent (path and query string, still encoded): the query's parameters in their order
    /// (`queryKeys(of:)`), which `query` does not keep.
    public var target = ""
    /// Header names are lowercased.
    public var headers: [String: String]
    public var body: [UInt8]
    /// The body went over the configured limit and was not kept.
    public var bodyTooLarge: Bool
    /// The server held too many bodies to take this one (`BodyBudget`): it was not kept.
    public var bodyOverBudget = false
    /// The body, when it was written to disk as it arrived (`BodySpool`) rather than kept in `body`.
    public var spooledBody: SpooledBody?
    /// Writing the body to disk failed (the disk is full): it was not kept.
    public var bodyWriteError: (any Error)?
    /// The peer's IP address (`127.0.0.1`, `::1`), empty when unknown.
    public var clientAddress: String = ""
    /// The peer's address as per-address limits count it, from its socket address (nil when unknown).
    var countedClient: ConnectionGate.Address?

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
        var target = target
        // On the bytes: splitting a String on "&" walks it Character by Character (grapheme breaking),
        // which was ~40k instructions for a query's `where=…&order=n&limit=20` (callgrind).
        return target.withUTF8 { bytes in
            guard let mark = bytes.firstIndex(of: UInt8(ascii: "?")) else { return (String(decoding: bytes, as: UTF8.self), [:]) }
            var query: [String: String] = [:]
            forEachParameter(bytes[(mark + 1)...]) { key, valueBytes in
                let value = valueBytes.map { percentDecode(bytes: $0, plusIsSpace: true) } ?? ""
                if let earlier = query[key] { query[key] = earlier + "," + value } else { query[key] = value }
            }
            return (String(decoding: bytes[..<mark], as: UTF8.self), query)
        }
    }

    /// The query string's parameter names, decoded as `splitTarget` decodes them, in their first appearance's order.
    static func queryKeys(of target: String) -> [String] {
        var target = target
        return target.withUTF8 { bytes in
            guard let mark = bytes.firstIndex(of: UInt8(ascii: "?")) else { return [] }
            var keys: [String] = [], seen: Set<String> = []
            forEachParameter(bytes[(mark + 1)...]) { key, _ in
                if seen.insert(key).inserted { keys.append(key) }
            }
            return keys
        }
    }

    /// The `name=value` pairs whose name nests in brackets (`where[name][$in][]=x`), decoded, in order, names as sent:
    /// `splitTarget`'s dictionary drops a name's last `[]` and joins repeats, which these names need kept
    /// (`BracketParameters`).
    static func bracketedParameters(of target: String) -> [(String, String)] {
        var target = target
        return target.withUTF8 { bytes in
            guard let mark = bytes.firstIndex(of: UInt8(ascii: "?")) else { return [] }
            var pairs: [(String, String)] = []
            forEachParameter(bytes[(mark + 1)...], keepingListMarker: true) { key, valueBytes in
                // `keys[]` alone is the list form the dictionary joins; `a[b][]` nests.
                guard BracketParameters.isBracketed(key.hasSuffix("[]") ? String(key.dropLast(2)) : key) else { return }
                pairs.append((key, valueBytes.map { percentDecode(bytes: $0, plusIsSpace: true) } ?? ""))
            }
            return pairs
        }
    }

    /// Each `name=value` of a query string (the bytes after `?`) in order: the name decoded (`+` a space, qs's list
    /// form `keys[]` as `keys` unless `keepingListMarker`), the value's bytes as they are (nil without `=`). The one
    /// reading of names that `splitTarget`, `queryKeys` and `bracketedParameters` share.
    private static func forEachParameter(_ query: Slice<UnsafeBufferPointer<UInt8>>, keepingListMarker: Bool = false,
                                         _ body: (String, Slice<UnsafeBufferPointer<UInt8>>?) -> Void) {
        for pair in query.split(separator: UInt8(ascii: "&")) {
            let equals = pair.firstIndex(of: UInt8(ascii: "="))
            var key = percentDecode(bytes: pair[..<(equals ?? pair.endIndex)], plusIsSpace: true)
            if !keepingListMarker, key.count > 2, key.hasSuffix("[]") { key.removeLast(2) }
            body(key, equals.map { pair[($0 + 1)...] })
        }
    }

    static func percentDecode(_ text: Substring, plusIsSpace: Bool) -> String {
        var text = text
        return text.withUTF8 { percentDecode(bytes: $0[...], plusIsSpace: plusIsSpace) }
    }

    /// Decodes `%XX` escapes (and `+` when `plusIsSpace`); a `%` not followed by two hex digits stays as it is.
    private static func percentDecode(bytes text: Slice<UnsafeBufferPointer<UInt8>>, plusIsSpace: Bool) -> String {
        guard text.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) else {
            return String(decoding: text, as: UTF8.self)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count)
        var index = text.startIndex
        while index < text.endIndex {
            let byte = text[index]
            index += 1
            if byte == UInt8(ascii: "+"), plusIsSpace {
                bytes.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%"), text.endIndex - index >= 2,
                      let high = hexValue(text[index]), let low = hexValue(text[index + 1]) {
                bytes.append(high << 4 | low)
                index += 2
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
    /// Switch protocols: the status must be 101; once the answer's headers are sent, the socket is handed
    /// to this function (on the connection's thread, which it must not hold).
    public var upgrade: (@Sendable (UpgradedConnection) -> Void)?
    /// A body read piece by piece while it is sent, instead of `body` (a file kept in the database: never whole in memory).
    public var stream: HTTPBodyStream?

    public init(status: Int, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// A response body of a known length, produced a piece at a time as the connection can take it.
public struct HTTPBodyStream: Sendable {
    /// Bytes in all (the Content-Length).
    public let count: Int
    /// The bytes from `offset` (counted from the body's start): at least one, at most `maximum`. Called on the
    /// connection's thread, in order; throwing ends the connection (the client sees a body cut short).
    public let read: @Sendable (_ offset: Int, _ maximum: Int) throws -> [UInt8]

    public init(count: Int, read: @escaping @Sendable (_ offset: Int, _ maximum: Int) throws -> [UInt8]) {
        self.count = count
        self.read = read
    }
}
