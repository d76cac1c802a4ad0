import Foundation
import RoostCore
import RoostTestSupport
import Testing

/// `/hooks` and Cloud Functions served by webhooks (REST guide, "Hooks"), with Parse's 143 errors.
@Suite struct HookTests {
    @Test func functionWebhooksAreRegisteredAndCalled() async throws {
        let server = try TestServer(arguments: fastHashing + ["--webhook-key", "hook-key-123"])
        let receiver = try WebhookReceiver(reply: #"{"success":{"greeting":"hello"}}"#)
        let hook: JSON = ["functionName": "greet", "url": .string(receiver.url)]

        #expect(try await server.request("POST", "/hooks/functions", json: hook).status == 403)
        let created = try await server.request("POST", "/hooks/functions", json: hook, master: true)
        #expect(created.status == 200 && created.json == hook, "\(created.text)")
        let again = try await server.request("POST", "/hooks/functions", json: hook, master: true)
        #expect(again.json == ["code": 143, "error": "function name: greet already exists"])
        #expect(try await server.request("GET", "/hooks/functions", master: true).json == [hook])
        #expect(try await server.request("GET", "/hooks/functions/greet", master: true).json == hook)

        // A client calls the function; the webhook gets the params, the caller and the key.
        let user = try await server.request("POST", "/users", json: ["username": "caller", "password": "pw-caller"])
        let token = try #require(user.json["sessionToken"]?.stringValue)
        let called = try await server.request("POST", "/functions/greet", json: ["name": "Ada"],
                                              headers: ["X-Parse-Session-Token": token, "X-Parse-Installation-Id": "inst-9",
                                                        "X-Parse-Cloud-Context": #"{"source":"test"}"#, "X-Trace": "t-1"])
        #expect(called.status == 200 && called.json == ["result": ["greeting": "hello"]], "\(called.text)")
        let request = try #require(receiver.requests.last)
        #expect(request.headers["x-parse-webhook-key"] == "hook-key-123")
        let sent = try JSONParser.parse(Array(request.body))
        #expect(sent["params"] == ["name": "Ada"])
        #expect(sent["master"] == false && sent["functionName"] == "greet" && sent["installationId"] == "inst-9")
        #expect(sent["user"]?["username"] == "caller" && sent["user"]?["objectId"] == user.json["objectId"])
        // As Parse's Cloud Code request: the client's address, its headers (not a master key) and its context.
        #expect(sent["ip"] == "127.0.0.1" && sent["context"] == ["source": "test"], "\(sent)")
        #expect(sent["headers"]?["x-trace"] == "t-1" && sent["headers"]?["x-parse-installation-id"] == "inst-9", "\(sent)")
        let asMaster = try await server.request("POST", "/functions/greet", json: [:], master: true)
        #expect(asMaster.status == 200)
        let masterSent = try JSONParser.parse(Array(try #require(receiver.requests.last).body))
        #expect(masterSent["master"] == true && masterSent["headers"]?["x-parse-master-key"] == nil && masterSent["context"] == [:],
                "\(masterSent)")

        // The webhook's error is the function's (141); a reply that is not JSON is a success without a result, as
        // Parse reads it (more replies in `CloudCodeWebhookSpecTests.webhookRepliesAsParseReadsThem`).
        receiver.reply(with: #"{"error":"name is required"}"#)
        #expect(try await server.request("POST", "/functions/greet", json: [:]).json == ["code": 141, "error": "name is required"])
        receiver.reply(with: "<html>")
        #expect(try await server.request("POST", "/functions/greet", json: [:]).json == [:])

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

    /// A webhook that cannot be reached, or answers more than the server keeps (16 MB), fails the function with 141
    /// and the server goes on serving.
    @Test func unreachableAndOversizedWebhooksFailTheCall() async throws {
        let server = try TestServer(arguments: fastHashing)
        let receiver = try WebhookReceiver(reply: #"{"success":"#  + "\"" + String(repeating: "x", count: 17 * 1024 * 1024) + "\"}")
        _ = try await server.request("POST", "/hooks/functions", json: ["functionName": "big", "url": .string(receiver.url)], master: true)
        _ = try await server.request("POST", "/hooks/functions", json: ["functionName": "gone", "url": "http://127.0.0.1:9/gone"], master: true)
        let failed: JSON = ["code": 141, "error": "Webhook request failed."]
        #expect(try await server.request("POST", "/functions/big", json: [:]).json == failed)
        #expect(try await server.request("POST", "/functions/gone", json: [:]).json == failed)
        receiver.reply(with: #"{"success":"small"}"#)
        #expect(try await server.request("POST", "/functions/big", json: [:]).json == ["result": "small"])
    }

    @Test func badDeclarationsAre143() async throws {
        let server = try TestServer(arguments: fastHashing)
        for body: JSON in [["functionName": "f"], ["url": "http://x"], ["className": "Game", "url": "http://x"],
                           ["className": "Game", "triggerName": "beforeEverything", "url": "http://x"]] {
            let response = try await server.request("POST", "/hooks/functions", json: body, master: true)
            #expect(response.json == ["code": 143, "error": "invalid hook declaration"], "\(body.jsonText)")
        }
        let refusal: JSON = ["code": 143, "error": "Roost runs afterDelete, afterSave, beforeDelete, beforeFind, beforeSave webhooks on the app's own classes, the save and delete ones on _User and _Role, beforeLogin and afterLogin on _User, afterLogout on _Session."]
        for (className, triggerName) in [("Game", "afterFind"), ("_Installation", "beforeSave"), ("_User", "beforeFind")] {
            let trigger = try await server.request("POST", "/hooks/triggers", json: [
                "className": .string(className), "triggerName": .string(triggerName), "url": "http://x",
            ], master: true)
            #expect(trigger.json == refusal, "\(className).\(triggerName)")
        }
        #expect(try await server.request("GET", "/hooks/functions/missing", master: true).json
            == ["code": 143, "error": "no function named: missing is defined"])
        #expect(try await server.request("GET", "/hooks/triggers/Game/beforeSave", master: true).json
            == ["code": 143, "error": "class Game does not exist"])
    }

    /// Waits (up to 30 s: the whole suite can be slow) for an `after` webhook, which is told in the background.
    func waitForRequests(_ receiver: WebhookReceiver, count: Int) async throws -> [WebhookReceiver.Received] {
        for _ in 0..<300 where receiver.requests.count < count { try await Task.sleep(for: .milliseconds(100)) }
        return receiver.requests
    }

    @Test func triggerWebhooksRunAroundWrites() async throws {
        let server = try TestServer(arguments: fastHashing)
        let beforeSave = try WebhookReceiver(reply: #"{"success":{"title":"Hello","score":10,"checked":true}}"#)
        let afterSave = try WebhookReceiver(reply: #"{"success":true}"#)
        let beforeDelete = try WebhookReceiver(reply: #"{"error":"scores are forever"}"#)
        let afterDelete = try WebhookReceiver(reply: #"{"success":true}"#)
        for (name, receiver) in [("beforeSave", beforeSave), ("afterSave", afterSave), ("beforeDelete", beforeDelete), ("afterDelete", afterDelete)] {
            let hook: JSON = ["className": "GameScore", "triggerName": .string(name), "url": .string(receiver.url)]
            #expect(try await server.request("POST", "/hooks/triggers", json: hook, master: true).json == hook)
        }
        #expect(try await server.request("GET", "/hooks/triggers", master: true).json.arrayValue?.count == 4)

        // beforeSave sees the object to be saved; what it answers is saved, and the changed fields are answered.
        let created = try await server.request("POST", "/classes/GameScore", json: ["title": "hello", "score": 1])
        #expect(created.status == 201, "\(created.text)")
        #expect(created.json["title"] == "Hello" && created.json["score"] == 10 && created.json["checked"] == true)
        let id = try #require(created.json["objectId"]?.stringValue)
        let seen = try JSONParser.parse(Array(try #require(beforeSave.requests.first).body))
        #expect(seen["triggerName"] == "beforeSave" && seen["object"]?["title"] == "hello" && seen["object"]?["className"] == "GameScore")
        let stored = try await server.fetch("GameScore", id)
        #expect(stored["title"] == "Hello" && stored["score"] == 10 && stored["checked"] == true)

        // afterSave is told once committed, with the saved object.
        let told = try await waitForRequests(afterSave, count: 1)
        let after = try JSONParser.parse(Array(try #require(told.first).body))
        #expect(after["triggerName"] == "afterSave" && after["object"]?["objectId"] == .string(id) && after["object"]?["score"] == 10)

        // An update shows the hook the object as it would be, and the object before.
        beforeSave.reply(with: #"{"error":"score too high"}"#)
        let refused = try await server.request("PUT", "/classes/GameScore/\(id)", json: ["score": ["__op": "Increment", "amount": 100]])
        #expect(refused.json == ["code": 141, "error": "score too high"])
        let update = try JSONParser.parse(Array(try #require(beforeSave.requests.last).body))
        #expect(update["object"]?["score"] == 110 && update["original"]?["score"] == 10)
        #expect(try await server.fetch("GameScore", id)["score"] == 10)

        // beforeDelete refuses; once it is gone, deletes go through and afterDelete is told.
        #expect(try await server.request("DELETE", "/classes/GameScore/\(id)").json == ["code": 141, "error": "scores are forever"])
        #expect(try await server.fetch("GameScore", id)["objectId"] == .string(id))
        #expect(try await server.request("PUT", "/hooks/triggers/GameScore/beforeDelete", json: ["__op": "Delete"], master: true).json == [:])
        #expect(try await server.request("DELETE", "/classes/GameScore/\(id)").status == 200)
        let deleted = try await waitForRequests(afterDelete, count: 1)
        #expect(try JSONParser.parse(Array(try #require(deleted.first).body))["object"]?["objectId"] == .string(id))

        // Batches: items run one by one (their webhooks never hold the writer); a transaction refuses before hooks.
        beforeSave.reply(with: #"{"success":{"title":"batched"}}"#)
        let batch = try await server.request("POST", "/batch", json: ["requests": [
            ["method": "POST", "path": "/parse/classes/GameScore", "body": ["title": "a"]],
            ["method": "POST", "path": "/parse/classes/GameScore", "body": ["title": "b"]],
        ]])
        #expect(batch.json.arrayValue?.compactMap { $0["success"]?["title"] } == ["batched", "batched"], "\(batch.text)")
        let transaction = try await server.request("POST", "/batch", json: ["transaction": true, "requests": [
            ["method": "POST", "path": "/parse/classes/GameScore", "body": ["title": "c"]],
        ]])
        #expect(transaction.json["code"] == 141, "\(transaction.text)")
        #expect(try await server.find("GameScore", ["count": 1, "limit": 0]).json["count"] == 2)

        // With X-Parse-Request-Id the save and its recorded reply commit together; a retry gets the same reply.
        beforeSave.reply(with: #"{"success":{"title":"once"}}"#)
        let first = try await server.request("POST", "/classes/GameScore", json: ["title": "x"], headers: ["X-Parse-Request-Id": "req-1"])
        let retry = try await server.request("POST", "/classes/GameScore", json: ["title": "x"], headers: ["X-Parse-Request-Id": "req-1"])
        #expect(first.status == 201 && first.json["title"] == "once" && retry.json == first.json, "\(first.text)")
        #expect(try await server.find("GameScore", ["where": ["title": "once"], "count": 1, "limit": 0]).json["count"] == 1)
        let afterRetry = try await waitForRequests(afterSave, count: 4)  // The first create, two batch items, this one.
        #expect(afterRetry.count == 4)
    }

    /// A `before` hook sees objects the caller may write but not read; webhooks never run inside a batch's write.
    @Test func beforeHooksSeeWritableObjectsAndBatchesKeepOut() async throws {
        let server = try TestServer(arguments: fastHashing)
        // Without triggers a batch shares one write: webhooks are refused inside it.
        let inBatch = try await server.request("POST", "/batch", json: ["requests": [
            ["method": "POST", "path": "/parse/hooks/functions", "body": ["functionName": "f", "url": "http://127.0.0.1:9/f"]],
            ["method": "POST", "path": "/parse/functions/f", "body": [:]],
        ]], master: true)
        let refusal: JSON = ["code": 143, "error": "Webhooks cannot be used inside a batch."]
        #expect(inBatch.json.arrayValue?.compactMap { $0["error"] } == [refusal, refusal], "\(inBatch.text)")

        let user = try await server.request("POST", "/users", json: ["username": "writer", "password": "pw-writer"])
        let (userId, token) = (try #require(user.json["objectId"]?.stringValue), try #require(user.json["sessionToken"]?.stringValue))
        // As a real webhook would, it answers the whole object (here: n reset to 2, the writer's ACL kept).
        let beforeSave = try WebhookReceiver(reply: #"{"success":{"n":2,"ACL":{"\#(userId)":{"write":true}}}}"#)
        let hook: JSON = ["className": "Drop", "triggerName": "beforeSave", "url": .string(beforeSave.url)]
        #expect(try await server.request("POST", "/hooks/triggers", json: hook, master: true).status == 200)
        let created = try await server.request("POST", "/classes/Drop", json: ["n": 1, "ACL": .object([userId: ["write": true]])])
        let id = try #require(created.json["objectId"]?.stringValue)
        let updated = try await server.request("PUT", "/classes/Drop/\(id)", json: ["n": 3], headers: ["X-Parse-Session-Token": token])
        #expect(updated.status == 200 && updated.json["n"] == 2, "\(updated.text)")
        #expect(try JSONParser.parse(Array(try #require(beforeSave.requests.last).body))["object"]?["n"] == 3)
        let stranger = try await server.request("PUT", "/classes/Drop/\(id)", json: ["n": 4])
        #expect(stranger.json == ["code": 101, "error": "Object not found."])
        #expect(beforeSave.requests.count == 2)  // The create and the writer's update; not the stranger's.

        // A field deletion, which the answered object cannot show, is kept.
        let noted = try await server.request("POST", "/classes/Note", json: ["title": "a", "note": "remove me"])
        let noteId = try #require(noted.json["objectId"]?.stringValue)
        let titler = try WebhookReceiver(reply: #"{"success":{"title":"b"}}"#)
        let noteHook: JSON = ["className": "Note", "triggerName": "beforeSave", "url": .string(titler.url)]
        #expect(try await server.request("POST", "/hooks/triggers", json: noteHook, master: true).status == 200)
        #expect(try await server.request("PUT", "/classes/Note/\(noteId)", json: ["note": ["__op": "Delete"]]).status == 200)
        let note = try await server.fetch("Note", noteId)
        #expect(note["title"] == "b" && note["note"] == nil, "\(note.jsonText)")
    }
}
