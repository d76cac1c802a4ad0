import Foundation

/// A parsed `postgres://user:password@host:port/database?option=value` URL (also `postgresql://`), as libpq's
/// connection keywords. `?host=/socket/dir` connects through a Unix socket (then the authority may be empty:
/// `postgres://user@/db?host=/run/pg`). Other query options (`sslmode`, `connect_timeout`, `application_name`, ...)
/// pass to libpq as they are; it refuses unknown ones. https://www.postgresql.org/docs/current/libpq-connect.html
///
/// `description` and `redacted` never show the password.
public struct PostgresURL: Sendable, CustomStringConvertible {
    /// libpq keyword/value pairs, in order (the password among them).
    public let parameters: [(key: String, value: String)]

    /// Reads the URL; throws `.badURL` with a message that quotes only the redacted parts.
    public init(_ text: String) throws {
        func fail(_ why: String) -> PostgresError {
            PostgresError(.badURL, message: "bad database URL (\(why))", endpoint: PostgresURL.redact(text))
        }
        guard let schemeEnd = text.range(of: "://"),
              ["postgres", "postgresql"].contains(text[..<schemeEnd.lowerBound].lowercased())
        else { throw fail("it must start with postgres://") }
        var rest = Substring(text[schemeEnd.upperBound...])
        var query = Substring("")
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = rest[..<slash]
        let database = slash < rest.endIndex ? rest[rest.index(after: slash)...] : ""

        var parameters: [(key: String, value: String)] = []
        func add(_ key: String, _ raw: Substring) throws {
            guard !raw.isEmpty else { return }
            guard let value = String(raw).removingPercentEncoding else { throw fail("bad percent-encoding in \(key)") }
            parameters.removeAll { $0.key == key }
            parameters.append((key, value))
        }
        var hostPort = authority
        if let at = authority.lastIndex(of: "@") {
            let userInfo = authority[..<at]
            hostPort = authority[authority.index(after: at)...]
            if let colon = userInfo.firstIndex(of: ":") {
                try add("user", userInfo[..<colon])
                try add("password", userInfo[userInfo.index(after: colon)...])
            } else {
                try add("user", userInfo)
            }
        }
        if hostPort.hasPrefix("[") {  // [::1]:5432
            guard let close = hostPort.firstIndex(of: "]") else { throw fail("unclosed [ in the host") }
            try add("host", hostPort[hostPort.index(after: hostPort.startIndex)..<close])
            let after = hostPort[hostPort.index(after: close)...]
            if after.hasPrefix(":") { try add("port", after.dropFirst()) }
        } else if let colon = hostPort.lastIndex(of: ":") {
            try add("host", hostPort[..<colon])
            try add("port", hostPort[hostPort.index(after: colon)...])
        } else {
            try add("host", hostPort)
        }
        if let port = parameters.first(where: { $0.key == "port" })?.value, UInt16(port) == nil {
            throw fail("the port must be a number")
        }
        try add("dbname", database)
        for pair in query.split(separator: "&") where !pair.isEmpty {
            guard let equals = pair.firstIndex(of: "=") else { throw fail("option without a value") }
            guard let key = String(pair[..<equals]).removingPercentEncoding, !key.isEmpty else { throw fail("bad option") }
            try add(key, pair[pair.index(after: equals)...])
        }
        if !parameters.contains(where: { $0.key == "connect_timeout" }) {
            parameters.append(("connect_timeout", "10"))  // libpq's default is to wait forever.
        }
        self.parameters = parameters
    }

    public func value(_ key: String) -> String? { parameters.last { $0.key == key }?.value }

    /// The same URL with `key` set to `value`, unless the URL sets it itself (then the operator's choice stands).
    public func defaulting(_ key: String, to value: String) -> PostgresURL {
        guard self.value(key) == nil else { return self }
        return PostgresURL(parameters: parameters + [(key, value)])
    }

    private init(parameters: [(key: String, value: String)]) { self.parameters = parameters }

    /// `user@host:port/database` (or the socket directory as the host): how errors and logs name the server.
    public var redacted: String {
        let user = value("user").map { $0 + "@" } ?? ""
        let host = value("host") ?? "localhost"
        let port = value("port").map { ":" + $0 } ?? ""
        return "\(user)\(host)\(port)/\(value("dbname") ?? "")"
    }

    public var description: String { "postgres://" + redacted }

    /// A URL text with any password replaced by `***`, for messages about a URL that did not parse.
    static func redact(_ text: String) -> String {
        guard let schemeEnd = text.range(of: "://") else { return "(unreadable URL)" }
        let rest = text[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        var cleaned = String(rest)
        if let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") {
            cleaned = String(authority[..<colon]) + ":***" + String(rest[at...])
        }
        // A password given as an option, too.
        cleaned = cleaned.replacingOccurrences(of: #"([?&]password=)[^&]*"#, with: "$1***", options: .regularExpression)
        return String(text[..<schemeEnd.upperBound]) + cleaned
    }
}
