import RoostCore

/// `POST /batch`: up to `maxBatchSize` sub-requests answered in order as `{success}` or `{error}`.
/// All items commit together (one fsync-free WAL commit instead of one per item); each runs in its
/// own savepoint, so a failing item changes nothing. With `"transaction": true`, any failure undoes them all.
/// Once trigger webhooks exist, a plain batch runs its items as separate writes (see `Triggers`).
enum BatchRoute {
    /// - Parameter routes: the router sub-requests are checked against (the server's own, without batch).
    static func register(in router: inout Router, routes: Router, dispatch: @escaping (APIRequest, RequestContext) throws -> APIResponse) {
        router.add("POST", "batch") { request, context, _ in
            let body = try request.bodyObject()
            guard let items = body["requests"]?.arrayValue else {
                throw ParseError(.invalidJSON, "requests must be an array")
            }
            guard items.count <= context.config.maxBatchSize else {
                throw ParseError(.invalidJSON, "too many requests in one batch: \(items.count), at most \(context.config.maxBatchSize)")
            }
            let subRequests = try items.map { try subRequest($0, mountPaths: context.config.batchMountPaths, router: routes) }
            // `after` webhooks wait for the batch's commit (or that of the idempotent request around it).
            if body["transaction"]?.boolValue == true {
                return try context.write { db in
                    let shared = sharing(context, db)
                    // An item failing after its commit (`failsAfterCommit`) fails the batch: Parse aborts its transaction.
                    return APIResponse(body: .array(try subRequests.map { ["success": try run($0, shared, dispatch).committed().body] }))
                }
            }
            if try context.storage.hasTriggerHooks, context.transaction == nil {
                // Trigger webhooks must not run while the batch holds the single writer: each item is a write of its own.
                return APIResponse(body: .array(subRequests.map { subRequest in
                    outcome(context) { try run(subRequest, context, dispatch) }
                }))
            }
            // Independent items, one commit: each runs in its own savepoint, so a failure undoes only itself.
            return try context.write { db in
                let shared = sharing(context, db)
                return APIResponse(body: .array(subRequests.map { subRequest in
                    outcome(context) { try db.inSavepoint { try run(subRequest, shared, dispatch) } }
                }))
            }
        }
    }

    /// The context of items sharing the batch's transaction: `before` webhooks are refused there
    /// (they would hold the writer), `after` ones wait for the commit.
    private static func sharing(_ context: RequestContext, _ db: any SQLConnection) -> RequestContext {
        var shared = context.joining(db)
        shared.inBatchTransaction = true
        return shared
    }

    /// `{"success": …}`, or `{"error": {code, error}}` when the item failed (its writes undone, unless it
    /// fails only after they commit: `failsAfterCommit`).
    private static func outcome(_ context: RequestContext, _ item: () throws -> APIResponse) -> JSON {
        do {
            return ["success": try item().committed().body]
        } catch {
            let answer = errorResponse(for: error)
            if answer.isServerFault { context.logger.error("batch item failed: \(error)") }
            return ["error": answer.body]
        }
    }

    /// Runs one item, at most once per `requestId` when it has one.
    private static func run(_ request: APIRequest, _ context: RequestContext,
                            _ dispatch: (APIRequest, RequestContext) throws -> APIResponse) throws -> APIResponse {
        guard let requestId = request.requestId, Idempotency.applies(method: request.method, segments: request.segments) else {
            return try dispatch(request, context)
        }
        return try Idempotency.run(requestId, request: request, context: context) { try dispatch(request, $0) }
    }

    /// A sub-request. As in Parse, one unroutable item fails the whole batch before anything runs.
    private static func subRequest(_ item: JSON, mountPaths: [String], router: Router) throws -> APIRequest {
        let request = try describedRequest(item, mountPaths: mountPaths)
        // A batch's items run in one write: Apple's receipt check would hold every write while it waits.
        guard router.match(method: request.method, segments: request.segments) != nil, !ProductRoutes.validatesPurchase(request) else {
            let rawPath = HTTPRequest.splitTarget(item["path"]?.stringValue ?? "").0
            // Parse names the path without its mount.
            throw ParseError(.invalidJSON, "cannot route \(request.method) \(rawPath.dropFirst(mountPrefix(of: rawPath, among: mountPaths)?.count ?? 0))")
        }
        return request
    }

    /// The request an item of a batch's `requests` describes, whether or not a route takes it.
    static func describedRequest(_ item: JSON, mountPaths: [String]) throws -> APIRequest {
        guard case .object(let fields) = item, let path = fields["path"]?.stringValue else {
            throw ParseError(.invalidJSON, "batch request path must be a string")
        }
        guard let method = fields["method"]?.stringValue?.uppercased() else {
            throw ParseError(.invalidJSON, "batch request method must be a string")
        }
        let (rawPath, query) = HTTPRequest.splitTarget(path)
        guard let mountPath = mountPrefix(of: rawPath, among: mountPaths) else {
            throw ParseError(.invalidJSON, "cannot route batch path \(path)")
        }
        let segments = rawPath.dropFirst(mountPath.count).split(separator: "/").map { HTTPRequest.percentDecode($0, plusIsSpace: false) }
        if segments.first == "batch" { throw ParseError(.invalidJSON, "nested batch requests are not allowed") }
        var request = APIRequest(method: method, segments: segments, body: fields["body"], query: query)
        request.requestId = fields["requestId"]?.stringValue
        request.target = path
        return request
    }

    /// The longest of `mountPaths` that `path` is under.
    private static func mountPrefix(of path: String, among mountPaths: [String]) -> String? {
        mountPaths.filter { path.hasPrefix($0 + "/") }.max { $0.count < $1.count }
    }
}
