import RoostCore

/// `POST /batch`: up to `maxBatchSize` sub-requests answered in order as `{success}` or `{error}`;
/// with `"transaction": true` they share one transaction and any failure undoes them all.
enum BatchRoute {
    static func register(in router: inout Router, dispatch: @escaping (APIRequest, RequestContext) throws -> APIResponse) {
        router.add("POST", "batch") { request, context, _ in
            let body = try request.bodyObject()
            guard let items = body["requests"]?.arrayValue else {
                throw ParseError(.invalidJSON, "requests must be an array")
            }
            guard items.count <= context.config.maxBatchSize else {
                throw ParseError(.invalidJSON, "too many requests in one batch: \(items.count), at most \(context.config.maxBatchSize)")
            }
            let subRequests = try items.map { try subRequest($0, mountPath: context.config.mountPath) }
            if body["transaction"]?.boolValue == true {
                return try context.write { db in
                    var shared = context
                    shared.transaction = db
                    let results = try subRequests.map { subRequest -> JSON in
                        ["success": try dispatch(try subRequest.get(), shared).body]
                    }
                    return APIResponse(body: .array(results))
                }
            }
            let results = subRequests.map { subRequest -> JSON in
                do {
                    return ["success": try dispatch(try subRequest.get(), context).body]
                } catch {
                    let answer = errorResponse(for: error)
                    if answer.isServerFault { context.logger.error("batch item failed: \(error)") }
                    return ["error": answer.body]
                }
            }
            return APIResponse(body: .array(results))
        }
    }

    /// A sub-request, or the error it answers with (a bad item fails alone, not the whole batch).
    private static func subRequest(_ item: JSON, mountPath: String) throws -> Result<APIRequest, Error> {
        guard case .object(let fields) = item else { throw ParseError(.invalidJSON, "each batch request must be an object") }
        guard let method = fields["method"]?.stringValue?.uppercased(), let path = fields["path"]?.stringValue else {
            return .failure(ParseError(.invalidJSON, "each batch request needs a method and a path"))
        }
        let (decodedPath, query) = HTTPRequest.splitTarget(path)
        guard decodedPath.hasPrefix(mountPath + "/") else {
            return .failure(ParseError(.invalidJSON, "cannot route batch path \(path)"))
        }
        let segments = decodedPath.dropFirst(mountPath.count).split(separator: "/").map(String.init)
        if segments.first == "batch" { return .failure(ParseError(.invalidJSON, "cannot nest batch requests")) }
        return .success(APIRequest(method: method, segments: segments, body: fields["body"], query: query))
    }
}
