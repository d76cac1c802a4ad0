/// Maps a method and path segments to a handler. Patterns are literal segments or `:name` parameters.
///
/// Routes are grouped by method and segment count, and their patterns split once when added: the
/// first lookup per request then compares a handful of literals (a scan of every route, with a
/// dictionary insert per parameter tried, was ~10k instructions of each get-by-id; callgrind).
struct Router {
    typealias Handler = (APIRequest, RequestContext, RouteParameters) throws -> APIResponse

    private enum Part {
        case literal(String)
        case parameter(String)
    }

    private struct Route {
        let pattern: [Part]
        let handler: Handler

        func matches(_ segments: [String]) -> Bool {
            for (part, segment) in zip(pattern, segments) {
                if case .literal(let literal) = part, literal != segment { return false }
            }
            return true
        }
    }

    private struct Shape: Hashable {
        let method: String
        let segmentCount: Int
    }

    /// Each shape's routes in the order they were added: the first that matches wins.
    private var routes: [Shape: [Route]] = [:]

    mutating func add(_ method: String, _ path: String, _ handler: @escaping Handler) {
        let pattern = path.split(separator: "/").map { part -> Part in
            part.hasPrefix(":") ? .parameter(String(part.dropFirst())) : .literal(String(part))
        }
        routes[Shape(method: method, segmentCount: pattern.count), default: []].append(Route(pattern: pattern, handler: handler))
    }

    /// The handler and parameters for a request, or `nil` when no route matches.
    func match(method: String, segments: [String]) -> (Handler, RouteParameters)? {
        guard let candidates = routes[Shape(method: method, segmentCount: segments.count)],
              let route = candidates.first(where: { $0.matches(segments) }) else { return nil }
        var parameters = RouteParameters()
        for case (.parameter(let name), let segment) in zip(route.pattern, segments) { parameters.values.append((name, segment)) }
        return (route.handler, parameters)
    }
}

/// The `:name` parts of a matched path (at most three: a list is cheaper than a dictionary).
struct RouteParameters {
    fileprivate var values: [(name: String, value: String)] = []

    subscript(name: String) -> String { values.first { $0.name == name }?.value ?? "" }
}
