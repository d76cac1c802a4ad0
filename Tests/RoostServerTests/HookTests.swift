import Foundation
import RoostCore
import RoostTestSupport
import Testing

/// `/hooks` and Cloud Functions served by webhooks (REST guide, "Hooks"), with Parse's 143 errors.
@Suite struct HookTests {
    @Test func functionWebhooksAreRegisteredAndCalled() async throws {
        let server = try TestServer(arguments: ["--webhook-key", "hook-key-123"])
        let receiver = try WebhookReceiver(reply: #"{"success":{"greeting":"hello"}}"#)
        let hook: JSON = ["functionName": "greet", "url": .string(receiver.url)]

        #expect(try await server.request("POST", "/hooks/functions", json: hook).status == 403)
        let created = try await server.request("POST", "/hooks/functions", json: hook, master: true)
        #expect(created.status == 200 && created.json == hook, "\(created.text)")
        let again = try await server.request("POST", "/hooks/functions", json: hook, master: true)
        #expect(again.json == ["code": 143, "error": "function name: greet already exits"])
        #expect(try await server.request("GET", "/hooks/functions", master: true).json == [hook])
        #expect(try await server.request("GET", "/hooks/functions/greet", master: true).json == hook)

        // A client calls the function; the webhook gets the params, the caller and the key.
        let user = try await server.request("POST", "/users", json: ["username": "caller", "password": "pw-caller"])
        let token = try #require(user.json["sessionToken"]?.stringValue)
        let called = try await server.request("POST", "/functions/greet", json: ["name": "Ada"],
                                              headers: ["X-Parse-Session-Token": token, "X-Parse-Installation-Id": "inst-9"])
        #expect(called.status == 200 && called.json == ["result": ["greeting": "hello"]], "\(called.text)")
        let request = try #require(receiver.requests.last)
        #expect(request.headers["x-parse-webhook-key"] == "hook-key-123")
        let sent = try JSONParser.parse(Array(request.body))
        #expect(sent["params"] == ["name": "Ada"])
        #expect(sent["master"] == false && sent["functionName"] == "greet" && sent["installationId"] == "inst-9")
        #expect(sent["user"]?["username"] == "caller" && sent["user"]?["objectId"] == user.json["objectId"])

        // The webhook's error is the function's (141); a reply that is not JSON is "Malformed response".
        receiver.reply(with: #"{"error":"name is required"}"#)
        #expect(try await server.request("POST", "/functions/greet", json: [:]).json == ["code": 141, "error": "name is required"])
        receiver.reply(with: "<html>")
        #expect(try await server.request("POST", "/functions/greet", json: [:]).json == ["code": 141, "error": "Malformed response"])

        // A new URL, then deletion; an unknown function is Parse's 141 again.
        let moved = try await server.request("PUT", "/hooks/functions/greet", json: ["url": "http://127.0.0.1:9/other"], master: true)
        #expect(moved.json == ["functionName": "greet", "url": "http://127.0.0.1:9/other"])
        #expect(try await server.request("PUT", "/hooks/functions/nope", json: ["url": "http://x"], master: true).json
            == ["code": 143, "error": "no function named: nope is defined"])
        #expect(try await server.request("PUT", "/hooks/functions/greet", json: ["__op": "Delete"], master: true).json == [:])
        #expect(try await server.request("GET", "/hooks/functions", master: true).json == [])
        #expect(try await server.request("POST", "/functions/greet", json: [:]).json == ["code": 141, "error": "Invalid function: \"greet\""])
        #expect(!server.log().contains("hook-key-123"))
    }

    @Test func badDeclarationsAre143() async throws {
        let server = try TestServer()
        for body: JSON in [["functionName": "f"], ["url": "http://x"], ["className": "Game", "url": "http://x"],
                           ["className": "Game", "triggerName": "beforeEverything", "url": "http://x"]] {
            let response = try await server.request("POST", "/hooks/functions", json: body, master: true)
            #expect(response.json == ["code": 143, "error": "invalid hook declaration"], "\(body.jsonText)")
        }
        let trigger = try await server.request("POST", "/hooks/triggers", json: ["className": "Game", "triggerName": "beforeSave",
                                                                               "url": "http://x"], master: true)
        #expect(trigger.json == ["code": 143, "error": "Roost runs no trigger webhooks (beforeSave); function webhooks only."])
        #expect(try await server.request("GET", "/hooks/functions/missing", master: true).json
            == ["code": 143, "error": "no function named: missing is defined"])
        #expect(try await server.request("GET", "/hooks/triggers/Game/beforeSave", master: true).json
            == ["code": 143, "error": "class Game does not exist"])
    }
}
