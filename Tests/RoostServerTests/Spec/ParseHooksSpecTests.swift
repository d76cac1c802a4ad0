import Foundation
import RoostCore
import RoostTestSupport
import Testing

/// Parse Server's spec/ParseHooks.spec.js over REST: `/hooks` with the master key (what `Parse.Hooks` sends),
/// and webhooks served by `WebhookReceiver` where the spec mounts an express route. The spec's server runs with
/// `webhookKey: 'hook'`; so does `keyed()`.
@Suite struct ParseHooksSpecTests {
    private func keyed() throws -> TestServer { try TestServer(arguments: fastHashing + ["--webhook-key", "hook"]) }

    private func hooks(_ server: TestServer, _ method: String, _ path: String, _ body: JSON? = nil) async throws -> TestResponse {
        try await server.request(method, "/hooks\(path)", json: body, master: true)
    }

    // spec: ParseHooks.spec.js: should have no hooks registered
    // spec: ParseHooks.spec.js: should have no triggers registered
    @Test func listsStartEmpty() async throws {
        let server = try keyed()
        #expect(try await hooks(server, "GET", "/functions").json == [])
        #expect(try await hooks(server, "GET", "/triggers").json == [])
    }

    // spec: ParseHooks.spec.js: should CRUD a function registration
    @Test func functionRegistrationCRUD() async throws {
        let server = try keyed()
        let created = try await hooks(server, "POST", "/functions", ["functionName": "My-Test-Function", "url": "http://someurl"])
        #expect(created.json == ["functionName": "My-Test-Function", "url": "http://someurl"])
        let found = try await hooks(server, "GET", "/functions/My-Test-Function")
        #expect(found.json["objectId"] == nil && found.json["url"] == "http://someurl")
        let updated = try await hooks(server, "PUT", "/functions/My-Test-Function", ["url": "http://anotherurl"])
        #expect(updated.json == ["functionName": "My-Test-Function", "url": "http://anotherurl"])
        #expect(try await hooks(server, "PUT", "/functions/My-Test-Function", ["__op": "Delete"]).status == 200)
        expectParseError(try await hooks(server, "GET", "/functions/My-Test-Function"), 143, "no function named: My-Test-Function is defined")
    }

    // spec: ParseHooks.spec.js: should CRUD a trigger registration
    @Test func triggerRegistrationCRUD() async throws {
        let server = try keyed()
        let created = try await hooks(server, "POST", "/triggers", ["className": "MyClass", "triggerName": "beforeDelete", "url": "http://someurl"])
        #expect(created.json == ["className": "MyClass", "triggerName": "beforeDelete", "url": "http://someurl"])
        let found = try await hooks(server, "GET", "/triggers/MyClass/beforeDelete")
        #expect(found.json["objectId"] == nil && found.json["url"] == "http://someurl")
        let updated = try await hooks(server, "PUT", "/triggers/MyClass/beforeDelete", ["url": "http://anotherurl"])
        #expect(updated.json["className"] == "MyClass" && updated.json["url"] == "http://anotherurl" && updated.json["objectId"] == nil)
        #expect(try await hooks(server, "PUT", "/triggers/MyClass/beforeDelete", ["__op": "Delete"]).status == 200)
        expectParseError(try await hooks(server, "GET", "/triggers/MyClass/beforeDelete"), 143, "class MyClass does not exist")
    }

    // spec: ParseHooks.spec.js: should fail to register hooks without Master Key
    @Test func registeringNeedsTheMasterKey() async throws {
        // The spec's server has client keys (a REST key among them), and this request sends none.
        let server = try TestServer(arguments: fastHashing + ["--rest-api-key", "rest"])
        let refused = try await server.request("POST", "/hooks/functions", json: ["url": "http://hello.word", "functionName": "SomeFunction"])
        #expect(refused.status == 403 && refused.json["error"] == "unauthorized", "\(refused.text)")
    }

    // spec: ParseHooks.spec.js: should fail trying to create two times the same function
    // spec: ParseHooks.spec.js: should fail trying to create two times the same trigger
    @Test func aHookCannotBeCreatedTwice() async throws {
        let server = try keyed()
        let function: JSON = ["functionName": "my_new_function", "url": "http://url.com"]
        #expect(try await hooks(server, "POST", "/functions", function).status == 200)
        expectParseError(try await hooks(server, "POST", "/functions", function), 143, "function name: my_new_function already exists")
        #expect(try await hooks(server, "PUT", "/functions/my_new_function", ["__op": "Delete"]).status == 200)
        let trigger: JSON = ["className": "MyClass", "triggerName": "beforeSave", "url": "http://url.com"]
        #expect(try await hooks(server, "POST", "/triggers", trigger).status == 200)
        expectParseError(try await hooks(server, "POST", "/triggers", trigger), 143, "class MyClass already has trigger beforeSave")
        #expect(try await hooks(server, "PUT", "/triggers/MyClass/beforeSave", ["__op": "Delete"]).status == 200)
    }

    // spec: ParseHooks.spec.js: should fail trying to update a function that don't exist
    // spec: ParseHooks.spec.js: should fail trying to update a trigger that don't exist
    @Test func updatingAMissingHookIs143() async throws {
        let server = try keyed()
        let noFunction = "no function named: A_COOL_FUNCTION is defined"
        expectParseError(try await hooks(server, "PUT", "/functions/A_COOL_FUNCTION", ["url": "http://url.com"]), 143, noFunction)
        expectParseError(try await hooks(server, "GET", "/functions/A_COOL_FUNCTION"), 143, noFunction)
        let noClass = "class AClassName does not exist"
        expectParseError(try await hooks(server, "PUT", "/triggers/AClassName/beforeSave", ["url": "http://url.com"]), 143, noClass)
        expectParseError(try await hooks(server, "GET", "/triggers/AClassName/beforeSave"), 143, noClass)
    }

    // spec: ParseHooks.spec.js: should fail trying to create a malformed function
    // spec: ParseHooks.spec.js: should fail trying to create a malformed function (REST)
    @Test func aFunctionWithoutURLIsMalformed() async throws {
        let server = try keyed()
        expectParseError(try await hooks(server, "POST", "/functions", ["functionName": "SomeFunction"]), 143, "invalid hook declaration")
    }

    // spec: ParseHooks.spec.js: should create hooks and properly preload them
    @Test func hooksAreLoadedAgainAfterARestart() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("roost-test-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try TestServer(dataDirectory: directory)
        for i in 0..<5 {
            #expect(try await hooks(first, "POST", "/triggers", ["className": .string("MyClass\(i)"), "triggerName": "beforeSave",
                                                                  "url": .string("http://url.com/beforeSave/\(i)")]).status == 200)
            #expect(try await hooks(first, "POST", "/functions", ["functionName": .string("AFunction\(i)"),
                                                                   "url": .string("http://url.com/function\(i)")]).status == 200)
        }
        first.stop()
        let second = try TestServer(dataDirectory: directory)
        for i in 0..<5 {
            #expect(try await hooks(second, "GET", "/triggers/MyClass\(i)/beforeSave").json["url"] == .string("http://url.com/beforeSave/\(i)"))
            #expect(try await hooks(second, "GET", "/functions/AFunction\(i)").json["url"] == .string("http://url.com/function\(i)"))
        }
        withExtendedLifetime(first) {}  // Its deinit would remove the directory the second server runs on.
    }

    // spec: ParseHooks.spec.js: should run the function on the test server
    // spec: ParseHooks.spec.js: should provide X-Parse-Webhook-Key when defined
    @Test func aFunctionWebhookAnswersTheCallWithTheKeySent() async throws {
        let server = try keyed()
        let receiver = try WebhookReceiver(reply: #"{"success":"OK!"}"#)
        #expect(try await hooks(server, "POST", "/functions", ["functionName": "SOME_TEST_FUNCTION", "url": .string(receiver.url)]).status == 200)
        let called = try await server.request("POST", "/functions/SOME_TEST_FUNCTION", json: [:])
        #expect(called.status == 200 && called.json == ["result": "OK!"], "\(called.text)")
        #expect(receiver.requests.last?.headers["x-parse-webhook-key"] == "hook")
    }

    // spec: ParseHooks.spec.js: should run the function on the test server (error handling)
    @Test func aWebhooksErrorObjectIsTheFunctionsError() async throws {
        let server = try keyed()
        let receiver = try WebhookReceiver(reply: #"{"error":{"code":1337,"error":"hacking that one!"}}"#)
        _ = try await hooks(server, "POST", "/functions", ["functionName": "SOME_TEST_FUNCTION", "url": .string(receiver.url)])
        let called = try await server.request("POST", "/functions/SOME_TEST_FUNCTION", json: [:])
        #expect(called.status == 400)
        #expect(called.json == ["code": 141, "error": ["code": 1337, "error": "hacking that one!"]], "\(called.text)")
    }

    // spec: ParseHooks.spec.js: should not pass X-Parse-Webhook-Key if not provided
    @Test func withoutAWebhookKeyNoneIsSent() async throws {
        let server = try TestServer(arguments: fastHashing)
        // The spec's route refuses a request without the key, as this reply does.
        let receiver = try WebhookReceiver(reply: #"{"error":"incorrect key provided"}"#)
        _ = try await hooks(server, "POST", "/functions", ["functionName": "SOME_TEST_FUNCTION", "url": .string(receiver.url)])
        let called = try await server.request("POST", "/functions/SOME_TEST_FUNCTION", json: [:])
        expectParseError(called, 141, "incorrect key provided")
        #expect(receiver.requests.count == 1 && receiver.requests.last?.headers["x-parse-webhook-key"] == nil)
    }

    // spec: ParseHooks.spec.js: should run the beforeSave hook on the test server
    @Test func aBeforeSaveWebhookChangesTheSavedObject() async throws {
        let server = try keyed()
        let receiver = try WebhookReceiver(reply: #"{"success":{"className":"SomeRandomObject","hello":"world"}}"#)
        _ = try await hooks(server, "POST", "/triggers", ["className": "SomeRandomObject", "triggerName": "beforeSave", "url": .string(receiver.url)])
        let id = try await server.create("SomeRandomObject", [:])
        #expect(receiver.requests.count == 1)
        #expect(try await server.fetch("SomeRandomObject", id)["hello"] == "world")
    }

    // spec: ParseHooks.spec.js: beforeSave hooks should correctly handle responses containing entire object
    @Test func aBeforeSaveWebhookMayAnswerTheWholeObject() async throws {
        let server = try keyed()
        let receiver = try WebhookReceiver(reply: #"{"success":{"hello":"world"}}"#)
        _ = try await hooks(server, "POST", "/triggers", ["className": "SomeRandomObject2", "triggerName": "beforeSave", "url": .string(receiver.url)])
        let id = try await server.create("SomeRandomObject2", [:])
        var whole = try await server.fetch("SomeRandomObject2", id).objectValue ?? [:]
        whole["hello"] = "world"
        // The JS SDK's `Parse.Object.toJSON()`: the object's own fields, its id and both dates included.
        receiver.reply(with: JSON.object(["success": .object(whole)]).jsonText)
        let saved = try await server.request("PUT", "/classes/SomeRandomObject2/\(id)", json: [:])
        #expect(saved.status == 200, "\(saved.text)")
        #expect(try await server.fetch("SomeRandomObject2", id)["hello"] == "world")
    }

    // spec: ParseHooks.spec.js: should run the afterSave hook on the test server
    @Test func anAfterSaveWebhookIsCalledOnce() async throws {
        let server = try keyed()
        let receiver = try WebhookReceiver(reply: #"{"success":{}}"#)
        _ = try await hooks(server, "POST", "/triggers", ["className": "SomeRandomObject", "triggerName": "afterSave", "url": .string(receiver.url)])
        let id = try await server.create("SomeRandomObject", [:])
        // After hooks are told in the background: up to 30 s (the whole suite can be slow).
        for _ in 0..<300 where receiver.requests.isEmpty { try await Task.sleep(for: .milliseconds(100)) }
        try await Task.sleep(for: .milliseconds(300))
        #expect(receiver.requests.count == 1)
        let sent = try JSONParser.parse(Array(receiver.requests.first?.body ?? Data()))
        #expect(sent["triggerName"] == "afterSave" && sent["object"]?["objectId"] == .string(id))
    }

    // spec: ParseHooks.spec.js: should not crash server and return error on invalid Cloud Function name
    // spec: ParseHooks.spec.js: should not crash server and return error on invalid Cloud Job name
    @Test func oddFunctionAndJobNamesAreRefused() async throws {
        let server = try keyed()
        let names = ["test'%3bdeclare%20@q%20varchar(99)%3bset%20@q%3d'%5c%5cxxxxxxxxxxxxxxx.yyyyy'%2b'fy.com%5cxus'%3b%20exec%20master.dbo.xp_dirtree%20@q%3b--%20",
                     "test.function.name"]
        for name in names {
            // The JS SDK puts the name in the path as it is.
            let function = try await server.request("POST", "/functions/\(name)", json: [:])
            #expect(function.code == 141 && function.json["error"]?.stringValue?.contains("Invalid function") == true, "\(function.text)")
            // `Parse.Cloud.startJob` posts the name in the body, with the master key.
            let job = try await server.request("POST", "/jobs", json: ["jobName": .string(name)], master: true)
            #expect(job.json["error"]?.stringValue?.contains("Invalid job") == true, "\(job.text)")
        }
    }
}
