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

    public var description: String {
        switch self {
        case .server(let code, let message): "Parse error \(code.rawValue): \(message)"
        case .transport(let reason): "server unreachable: \(reason)"
        case .invalidResponse(let status, let body): "unexpected response \(status): \(body.prefix(200))"
        case .invalidArgument(let reason): reason
        }
    }
}
