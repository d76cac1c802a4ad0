import Dispatch
import Foundation
import FoundationNetworking
import RoostCore
import Synchronization

/// Calls a webhook as Parse Server does: a JSON `POST` with `X-Parse-Webhook-Key`, answered with
/// `{"success": value}` or `{"error": message}`. See the REST guide, "Hooks".
struct Webhook {
    let url: String
    let key: String?
    var timeout: TimeInterval = 30

    /// The `success` value of the reply.
    /// - Throws: `ParseError` 141 with the hook's `error`, or saying why there was no usable reply.
    func call(_ body: JSON) throws -> JSON {
        guard let endpoint = URL(string: url), ["http", "https"].contains(endpoint.scheme?.lowercased() ?? "") else {
            throw ParseError(.scriptFailed, "Invalid webhook URL.")
        }
        var request = URLRequest(url: endpoint, timeoutInterval: timeout)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        if let key { request.setValue(key, forHTTPHeaderField: "X-Parse-Webhook-Key") }
        request.httpBody = Data(body.encoded())
        let reply = Webhook.send(request, within: timeout)
        guard case .success(let data) = reply else {
            throw ParseError(.scriptFailed, "Webhook request failed.")
        }
        guard let answer = try? JSONParser.parse(Array(data)), case .object(let members) = answer else {
            throw ParseError(.scriptFailed, "Malformed response")
        }
        if let error = members["error"], error != .null {
            // Parse's `resolveError`: a string is the message; an object gives its `message`.
            throw ParseError(.scriptFailed, error.stringValue ?? error["message"]?.stringValue ?? error.jsonText)
        }
        return members["success"] ?? .null
    }

    /// Who is calling, as Parse describes the caller to a webhook: `master`, `user` (the caller's
    /// `_User` object, when a session came with the request) and `installationId`.
    static func caller(_ context: RequestContext) throws -> [String: JSON] {
        var fields: [String: JSON] = ["master": .bool(context.isMaster)]
        if let installationId = context.installationId { fields["installationId"] = .string(installationId) }
        if let caller = context.user, let user = try context.read({ db in try UserStore.fetch(caller.id, in: db) }) {
            fields["user"] = UserStore.wireJSON(user, viewerId: caller.id, isMaster: false)
        }
        return fields
    }

    /// Blocks the calling request thread until the reply, at most `timeout` in all (URLSession's own
    /// timeout restarts with every byte received, so a webhook that trickles would hold on).
    private static func send(_ request: URLRequest, within timeout: TimeInterval) -> Result<Data, Error> {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<Result<Data, Error>>(.failure(URLError(.timedOut)))
        let task = session.dataTask(with: request) { data, _, error in
            result.withLock { $0 = data.map { .success($0) } ?? .failure(error ?? URLError(.badServerResponse)) }
            done.signal()
        }
        task.resume()
        if done.wait(timeout: .now() + timeout) == .timedOut {
            task.cancel()
            return .failure(URLError(.timedOut))
        }
        return result.withLock { $0 }
    }

    private static let session = URLSession(configuration: .ephemeral)
}
