import Foundation
import RoostCore

/// Calls a webhook as Parse Server does: a JSON `POST` with `X-Parse-Webhook-Key`, answered with
/// `{"success": value}` or `{"error": message}`. See the REST guide, "Hooks".
struct Webhook {
    let url: String
    let key: String?
    var timeout: TimeInterval = 30

    /// The `success` value of the reply.
    /// - Throws: `ParseError` 141 with the hook's `error`, or saying why there was no usable reply; `APIError.scriptFailed`
    ///   for an `error` that is not a message.
    func call(_ body: JSON) throws -> JSON {
        guard let endpoint = URL(string: url), ["http", "https"].contains(endpoint.scheme?.lowercased() ?? "") else {
            throw ParseError(.scriptFailed, "Invalid webhook URL.")
        }
        guard let data = JSONPost.post(Array(body.encoded()), to: url, header: key.map { "X-Parse-Webhook-Key: \($0)" }, within: timeout,
                                        maxReplyBytes: Webhook.maxReplyBytes) else {
            throw ParseError(.scriptFailed, "Webhook request failed.")
        }
        guard let answer = try? JSONParser.parse(data), case .object(let members) = answer else {
            throw ParseError(.scriptFailed, "Malformed response")
        }
        if let error = members["error"], error != .null {
            // Parse's `resolveError`: a string is the message; an object gives its `message`, or else is the message.
            guard let message = error.stringValue ?? error["message"]?.stringValue else { throw APIError.scriptFailed(error) }
            throw ParseError(.scriptFailed, message)
        }
        return members["success"] ?? .null
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
