import RoostCore

/// Everything the SDK throws: the server said no (with Parse's code), or the server could not be reached.
public enum RoostError: Error, Equatable, CustomStringConvertible {
    /// The server answered with a Parse error. Unknown codes decode too.
    case server(code: ParseErrorCode, message: String)
    /// No answer: connection refused, timeout, DNS, TLS... The request may be retried.
    case transport(String)
    /// The server answered something that is not a Parse response.
    case invalidResponse(status: Int, body: String)
    /// The call cannot be made as asked (e.g. saving a cycle of new objects).
    case invalidArgument(String)
    /// The server refuses this client's configuration: a wrong application id (403 `unauthorized`), or a
    /// server URL with no Parse API behind it (404 on API routes). No retry helps until the app is
    /// configured right; queued `saveEventually` commands wait for that.
    case misconfigured(String)
    /// The client's files in its storage directory cannot be used (damaged, read-only, disk full).
    case localStorage(String)

    /// The Parse code, when the server answered with one.
    public var code: ParseErrorCode? {
        if case .server(let code, _) = self { return code }
        return nil
    }

    /// Whether the server was unreachable (as opposed to refusing the request).
    public var isTransport: Bool {
        if case .transport = self { return true }
        return false
    }

    /// Whether the server refused this client's configuration (see `misconfigured`).
    public var isMisconfiguration: Bool {
        if case .misconfigured = self { return true }
        return false
    }

    /// Whether the server answered and said no to this request (a Parse error or another refusal), as
    /// opposed to no usable answer (retry) or a wrong configuration (pause).
    var isRefusal: Bool {
        switch self {
        case .server, .invalidResponse: true
        case .transport, .invalidArgument, .misconfigured, .localStorage: false
        }
    }

    public var description: String {
        switch self {
        case .server(let code, let message): "Parse error \(code.rawValue): \(message)"
        case .transport(let reason): "server unreachable: \(reason)"
        case .invalidResponse(let status, let body): "unexpected response \(status): \(body.prefix(200))"
        case .invalidArgument(let reason): reason
        case .misconfigured(let reason): reason
        case .localStorage(let reason): reason
        }
    }
}
