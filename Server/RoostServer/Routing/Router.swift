/// Maps a method and path segments to a handler. Patterns are literal segments or `:name` parameters.
struct Router {
    typealias Handler = (APIRequest, RequestContext, RouteParameters) throws -> APIResponse

    private struct Route {
        let method: String
        let pattern: [String]
        let handler: Handler
    }

    private var routes: [Route] = []

    mutating func add(_ method: String, _ path: String, _ handler: @escaping Handler) {
        let pattern = path.split(separator: "/").map(String.init)
        routes.append(Route(method: method, pattern: pattern, handler: handler))
    }

    /// The handler and parameters for a request, or `nil` when no route matches.
    func match(method: String, segments: [String]) -> (Handler, RouteParameters)? {
        for route in routes where route.method == method && route.pattern.count == segments.count {
            var parameters = RouteParameters()
            var matched = true
            for (part, segment) in zip(route.pattern, segments) {
                if part.hasPrefix(":") {
                    parameters.values[String(part.dropFirst())] = segment
                } else if part != segment {
                    matched = false
                    break
                }
            }
            if matched { return (route.handler, parameters) }
        }
        return nil
    }
}

/// The `:name` parts of a matched path.
struct RouteParameters {
    var values: [String: String] = [:]

    subscript(name: String) -> String { values[name] ?? "" }
}
