/// CORS headers sent on every response, as Parse Server's `allowCrossDomain` sends them: its `DEFAULT_ALLOWED_HEADERS`
/// plus `--allow-headers`, and as the allowed origin (`--allow-origin`, Parse's `allowOrigin`) the request's `Origin`
/// when it is one of those allowed, else the first of them (`*` by default).
public struct CORS: Sendable {
    static let defaultAllowedHeaders = "X-Parse-Master-Key, X-Parse-REST-API-Key, X-Parse-Javascript-Key, "
        + "X-Parse-Application-Id, X-Parse-Client-Version, X-Parse-Session-Token, X-Requested-With, "
        + "X-Parse-Revocable-Session, X-Parse-Request-Id, Content-Type, Pragma, Cache-Control"

    /// The origins allowed, never empty.
    public let origins: [String]
    /// Every header but the origin, the same on every response.
    let fixedHeaders: [(String, String)]

    public init(origins: [String] = ["*"], extraAllowedHeaders: [String] = []) {
        self.origins = origins.isEmpty ? ["*"] : origins
        var fixed = [
            ("Access-Control-Allow-Methods", "GET,PUT,POST,DELETE,OPTIONS"),
            ("Access-Control-Allow-Headers", ([Self.defaultAllowedHeaders] + extraAllowedHeaders).joined(separator: ", ")),
            ("Access-Control-Expose-Headers", "X-Parse-Job-Status-Id, X-Parse-Push-Status-Id"),
        ]
        // Parse sends no Vary; with several origins the answer depends on the request's, and a shared cache must know.
        if self.origins.count > 1 { fixed.append(("Vary", "Origin")) }
        fixedHeaders = fixed
    }

    /// The `Access-Control-Allow-Origin` for a request with these (lowercased) headers (nil: no request was read).
    public func allowedOrigin(requestHeaders: [String: String]?) -> String {
        // One origin (the default `*`): no lookup.
        if origins.count > 1, let requestOrigin = requestHeaders?["origin"], origins.contains(requestOrigin) { return requestOrigin }
        return origins[0]
    }

    /// Whether `text` can be sent as a header value: no control characters (a line break would start a new header).
    public static func isHeaderSafe(_ text: String) -> Bool {
        !text.isEmpty && text.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value != 0x7F }
    }

    /// Whether `name` is an HTTP header name (RFC 9110's token).
    public static func isHeaderName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}
