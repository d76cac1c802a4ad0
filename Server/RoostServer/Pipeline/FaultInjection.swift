import RoostCore

/// Test-only faults, off unless `ServerConfig` turns them on (from `ROOST_TEST_*` variables):
/// the first N writes answered with 503 or 429, and every Nth idempotent write's reply dropped
/// after its commit (the connection closes unanswered), to test clients' retries.
struct FaultInjection {
    let failFirstWrites: Int
    let failStatus: Int
    let dropEveryNthReply: Int
    private let failedWrites = RequestCounter()
    private let repliesSeen = RequestCounter()

    init(_ config: ServerConfig) {
        failFirstWrites = config.failFirstWrites
        failStatus = config.failStatus
        dropEveryNthReply = config.dropEveryNthIdempotentReply
    }

    /// An answer that replaces the request's handling, or nil to handle it.
    func refusal(for request: HTTPRequest) -> HTTPResponse? {
        guard failFirstWrites > 0, isWrite(request), failedWrites.nextNumber() <= UInt64(failFirstWrites) else { return nil }
        let body = JSON.object(["code": 1, "error": "Temporarily unavailable (test fault injection)."]).encoded()
        return HTTPResponse(status: failStatus, headers: [("Content-Type", "application/json")], body: body)
    }

    /// Marks the reply to be dropped when its turn comes.
    func apply(to response: inout HTTPResponse, for request: HTTPRequest) {
        guard dropEveryNthReply > 0, isWrite(request),
            request.headers["x-parse-request-id"] != nil || request.path.hasSuffix("/batch"),
            repliesSeen.nextNumber() % UInt64(dropEveryNthReply) == 0
        else { return }
        response.dropsConnection = true
    }

    private func isWrite(_ request: HTTPRequest) -> Bool { request.method != "GET" && request.method != "OPTIONS" }
}
