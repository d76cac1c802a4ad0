import Foundation
import RoostCore
import RoostTestSupport

/// A webhook whose reply is computed from the JSON posted to it (and may call the server back), standing in for the
/// body of a Parse Cloud Code trigger or function in the spec suites carried through webhooks.
final class ScriptedWebhook: Sendable {
    struct Reply: Sendable {
        var status = 200
        var body: String

        static func success(_ value: JSON) -> Reply { Reply(body: JSON.object(["success": value]).jsonText) }
        static func error(_ value: JSON) -> Reply { Reply(body: JSON.object(["error": value]).jsonText) }
        static func raw(_ text: String, status: Int = 200) -> Reply { Reply(status: status, body: text) }
        /// `{"success": object}`: the posted `object` with `changes` applied, as a JS `request.object.set(...)` leaves it.
        static func echo(_ posted: JSON, _ changes: [String: JSON]) -> Reply {
            var object = posted["object"]?.objectValue ?? [:]
            object.merge(changes) { $1 }
            return success(.object(object))
        }
    }

    private let receiver: WebhookReceiver
    var url: String { receiver.url }
    /// The bodies posted so far, in order.
    var requests: [JSON] { receiver.requests.map { (try? JSONParser.parse(Array($0.body))) ?? .null } }

    /// A reply that throws is a 500, as an exception in a Cloud Code function would be.
    init(_ answer: @escaping @Sendable (JSON) async throws -> Reply) throws {
        receiver = try WebhookReceiver { received in
            let posted = (try? JSONParser.parse(Array(received.body))) ?? .null
            let reply = (try? await answer(posted)) ?? Reply(status: 500, body: "webhook handler failed")
            return WebhookReceiver.Reply(status: reply.status, body: Data(reply.body.utf8))
        }
    }
}

/// Holds a webhook's reply until the test opens it (the webhook's reply runs on a thread of its own, which may block).
final class WebhookGate: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    func wait() { semaphore.wait() }
    func open() { semaphore.signal() }
}

extension TestServer {
    /// `POST /hooks/triggers`: `url` is called for `triggerName` on `className`; throws when the server refuses it.
    func addTrigger(_ className: String, _ triggerName: String, url: String) async throws {
        let response = try await request("POST", "/hooks/triggers", json: [
            "className": .string(className), "triggerName": .string(triggerName), "url": .string(url),
        ], master: true)
        guard response.status == 200 else { throw TestServerError.unexpected(response.status, response.text) }
    }

    /// `POST /hooks/functions`: `url` answers the function `name`; throws when the server refuses it.
    func addFunction(_ name: String, url: String) async throws {
        let response = try await request("POST", "/hooks/functions", json: ["functionName": .string(name), "url": .string(url)], master: true)
        guard response.status == 200 else { throw TestServerError.unexpected(response.status, response.text) }
    }
}
