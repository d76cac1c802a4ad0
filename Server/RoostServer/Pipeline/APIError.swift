import Foundation
import RoostCore

/// Errors that are not Parse errors but still answer the client with a fixed shape.
enum APIError: Error {
    /// 403 `{"error":"unauthorized"}`: missing or wrong application id or client key.
    case unauthorized
    /// Answered as `unauthorized`, and logged as Parse logs it: the right master key from an address that is not in
    /// `--master-key-ips` (an operator who forgot a proxy's or an admin host's address needs to see why).
    case masterKeyFromOutsideIPs(address: String)
    /// 403 `{"error":"unauthorized: master key is required"}`.
    case masterKeyRequired
    /// 413 `{"error":"request entity too large"}` (Parse's body-parser answer): the body went over `--max-body`.
    case payloadTooLarge(limit: Int)
    /// 503 `{"code":1,"error":"too many request bodies in progress"}` with `Retry-After`: the bodies held in memory at
    /// once are at their limit (`BodyBudget`). Not the request's fault, and soon over: SDKs retry a 503.
    case bodiesOverBudget
    /// 404: no such route.
    case routeNotFound(method: String, path: String)
    /// 409 `{"error":...}`: `GET /security` without `--security-check` (Parse's `SecurityRouter`, off by default).
    case securityCheckDisabled
    /// 429 `{"code":100,"error":<message>}`: over a `--rate-limit` rule's count (Parse's `handleRateLimit`).
    case rateLimited(message: String)
    /// 400 `{"code":141,"error":<value>}`: a webhook's `error` that is not a message (an object without `message`),
    /// passed on as it is, as Parse's `resolveError` does.
    case scriptFailed(JSON)
}

/// The one place that turns any thrown error into a response body and HTTP status.
/// Parse errors: 101 → 404, 1 → 500, other codes → 400. Anything unexpected is a 500 with code 1,
/// and its cause goes to the log only (the caller logs it), never to the client.
func errorResponse(for error: Error) -> (status: Int, body: JSON, isServerFault: Bool) {
    switch error {
    case let parseError as ParseError:
        let status: Int
        switch parseError.code {
        case .objectNotFound: status = 404
        case .internalServerError: status = 500
        default: status = 400
        }
        return (status, parseError.json, status == 500)
    case let apiError as APIError:
        switch apiError {
        case .unauthorized, .masterKeyFromOutsideIPs: return (403, ["error": "unauthorized"], false)
        case .masterKeyRequired: return (403, ["error": "unauthorized: master key is required"], false)
        case .payloadTooLarge:
            return (413, ["error": "request entity too large"], false)
        case .bodiesOverBudget:
            return (503, ["code": 1, "error": "too many request bodies in progress"], false)
        case .routeNotFound(let method, let path):
            return (404, ["error": .string("Cannot \(method) \(path)")], false)
        case .securityCheckDisabled:
            return (409, ["error": "Enable Parse Server option `security.enableCheck` to run security check."], false)
        case .rateLimited(let message):
            return (429, ["code": .number(Double(ParseErrorCode.connectionFailed.rawValue)), "error": .string(message)], false)
        case .scriptFailed(let value):
            return (400, ["code": .number(Double(ParseErrorCode.scriptFailed.rawValue)), "error": value], false)
        }
    case _ where isOutOfSpace(error):
        // Still a server fault (logged with its cause), but one the operator can act on: say so.
        return (500, ["code": 1, "error": "database or disk is full"], true)
    default:
        return (500, ["code": 1, "error": "Internal server error."], true)
    }
}

/// Whether `error` is the disk (or the database's file system) running out of room: SQLITE_FULL, or
/// ENOSPC from a file write (an uploaded file).
private func isOutOfSpace(_ error: Error) -> Bool {
    if let databaseError = error as? any DatabaseError { return databaseError.isDiskFull }
    if let cocoaError = error as? CocoaError, cocoaError.code == .fileWriteOutOfSpace { return true }
    if let posixError = error as? POSIXError { return posixError.code == .ENOSPC }
    let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError
    return underlying.map { $0.domain == NSPOSIXErrorDomain && $0.code == Int(ENOSPC) } ?? false
}
