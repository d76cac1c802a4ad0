import Foundation
import RoostCore

/// Calls a webhook as Parse Server does: a JSON `POST` with `X-Parse-Webhook-Key`, answered with
/// `{"success": value}` or `{"error": message}`. See the REST guide, "Hooks".
struct Webhook {
    let url: String
    let key: String?
    var timeout: TimeInterval = 30

    /// The `success` value of the reply, nil when it has none: Parse's `wrapToHTTPRequest` reads `success` and `error`
    /// of a JSON object and takes any other reply in time (HTML, an empty body, an array) as a success with no value.
    /// - Throws: `ParseError` 141 with the hook's `error` (when JavaScript would count it as true), for a reply with an
    ///   HTTP error status (Parse's `request` refuses those), or saying why there was no reply; `APIError.scriptFailed`
    ///   for an `error` that is not a message, and for a JSON string that is no JSON inside, as Parse's.
    func call(_ body: JSON) throws -> JSON? {
        guard let endpoint = URL(string: url), ["http", "https"].contains(endpoint.scheme?.lowercased() ?? "") else {
            throw ParseError(.scriptFailed, "Invalid webhook URL.")
        }
        guard let reply = JSONPost.post(Array(body.encoded()), to: url, header: key.map { "X-Parse-Webhook-Key: \($0)" }, within: timeout,
                                         maxReplyBytes: Webhook.maxReplyBytes) else {
            throw ParseError(.scriptFailed, "Webhook request failed.")
        }
        guard (200..<400).contains(reply.status) else { throw ParseError(.scriptFailed, "Webhook answered HTTP \(reply.status).") }
        guard var answer = try? JSONParser.parse(reply.body) else { return nil }
        if case .string(let text) = answer {  // Parse parses a string once more.
            guard let inner = try? JSONParser.parse(text) else {
                throw APIError.scriptFailed(["error": "Malformed response", "code": -1, "partialResponse": .string(String(text.prefix(100)))])
            }
            answer = inner
        }
        guard case .object(let members) = answer else { return nil }
        if let error = members["error"], error.isJavaScriptTruthy {
            // Parse's `resolveError`: a string is the message; an object gives its `message`, or else is the message.
            guard let message = error.stringValue ?? error["message"]?.stringValue else { throw APIError.scriptFailed(error) }
            throw ParseError(.scriptFailed, message)
        }
        return members["success"]
    }

    /// Who is calling, as Parse describes the caller to a webhook: `master`, `user` (the caller's
    /// `_User` object, when a session came with the request), `installationId`, `ip`, `headers` and `context`. The
    /// headers are the request's but its master key and `Authorization` (Parse passes them on; a webhook is told
    /// `master` instead).
    static func caller(_ context: RequestContext) throws -> [String: JSON] {
        let headers = (context.origin?.headers ?? [:]).filter { !["x-parse-master-key", "x-parse-maintenance-key", "authorization"].contains($0.key) }
        var fields: [String: JSON] = ["master": .bool(context.isMaster), "ip": .string(context.origin?.clientAddress ?? ""),
                                      "headers": .object(headers.mapValues { .string($0) }), "context": .object(context.origin?.cloudContext ?? [:])]
        if let installationId = context.installationId { fields["installationId"] = .string(installationId) }
        if let caller = context.user, let user = try context.read({ db in try UserStore.fetch(caller.id, in: db) }) {
            fields["user"] = UserStore.wireJSON(user, viewerId: caller.id, isMaster: false)
        }
        return fields
    }

    /// A reply larger than this fails the call (a webhook cannot fill the server's memory).
    static let maxReplyBytes = 16 * 1024 * 1024
}
