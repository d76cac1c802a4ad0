import Foundation
import RoostCore
import Testing

/// Parse Server's trigger and function cases carried through webhooks: spec/CloudCode.spec.js from
/// `describe('cloud functions')` to the end (the trigger describe blocks Roost can run: beforeSave, afterSave,
/// beforeDelete, afterDelete, and Cloud Code's context), plus the trigger and function cases of spec/ParseAPI.spec.js
/// and spec/schemas.spec.js. Roost has no JavaScript Cloud Code; Parse Server runs a webhook
/// (`HooksController.wrapToHTTPRequest`) through the same trigger machinery as a JS trigger. Each test registers a
/// `ComputedWebhook` whose reply, computed from what it is posted, does what the spec's JS body did, then sends what
/// the JS SDK sends and asserts what the spec asserts.
///
/// How a webhook says what a JS trigger does (HooksController.wrapToHTTPRequest, RestWrite.runBeforeSaveTrigger):
/// - "change nothing": `{}` (no `success`: Parse saves the data as asked). A `beforeSave` webhook's `success` object
///   replaces the data to save, so `request.object.set(k, v)` is the posted object with `k` changed, and
///   `set(k, undefined)` is the posted object without `k`.
/// - `throw 'message'` / `throw new Error('message')`: `{"error": "message"}` (141).
/// - `after` hooks answer `{"success": true}`; Roost tells them in the background once the write is committed (the
///   README; Parse waits for them before answering), so the tests wait for them.
/// - The JS SDK's `context` option travels as `_context` in its body form (`_ApplicationId` in the body, no headers).
@Suite struct CloudCodeTriggerWebhookSpecTests {
    // MARK: - Helpers

    private func makeServer(_ extra: [String] = []) throws -> TestServer { try TestServer(arguments: fastHashing + extra) }

    private func trigger(_ server: TestServer, _ className: String, _ triggerName: String, _ hook: ComputedWebhook) async throws {
        try await server.addTrigger(className, triggerName, url: hook.url)
    }

    /// `PUT /hooks/triggers/<C>/<trigger>`: the trigger now calls `hook` (the spec registers a new JS trigger).
    private func retrigger(_ server: TestServer, _ className: String, _ triggerName: String, _ hook: ComputedWebhook) async throws {
        let response = try await server.request("PUT", "/hooks/triggers/\(className)/\(triggerName)", json: ["url": .string(hook.url)],
                                                master: true)
        guard response.status == 200 else { throw TestServerError.unexpected(response.status, response.text) }
    }

    private func function(_ server: TestServer, _ name: String, _ hook: ComputedWebhook) async throws {
        try await server.addFunction(name, url: hook.url)
    }

    /// A request in the JS SDK's body form: `POST` with `_method`, `_ApplicationId` and `_context` in the body, no headers.
    private func sdk(_ server: TestServer, _ method: String, _ path: String, _ fields: [String: JSON] = [:],
                     context: JSON? = nil) async throws -> TestResponse {
        var body = fields
        body["_ApplicationId"] = .string(TestServer.applicationId)
        if method != "POST" { body["_method"] = .string(method) }
        if let context { body["_context"] = context }
        return try await server.request("POST", path, json: .object(body), appId: false)
    }

    /// Waits (up to 30 s, the whole suite can be slow) for `count` requests to `hook`: `after` webhooks are told in the background.
    @discardableResult
    private func waitFor(_ hook: ComputedWebhook, count: Int) async throws -> [JSON] {
        for _ in 0..<300 where hook.requests.count < count { try await Task.sleep(for: .milliseconds(100)) }
        return hook.requests
    }

    /// The `context` each request to `hook` carried.
    private func contexts(_ hook: ComputedWebhook) -> [JSON] { hook.requests.map { $0["context"] ?? .null } }

    /// A `beforeSave` and an `afterSave` webhook on `className`, changing nothing.
    private func saveHooks(_ server: TestServer, _ className: String) async throws -> (before: ComputedWebhook, after: ComputedWebhook) {
        let before = try ComputedWebhook(replying: [:]), after = try ComputedWebhook(replying: ["success": true])
        try await trigger(server, className, "beforeSave", before)
        try await trigger(server, className, "afterSave", after)
        return (before, after)
    }

    /// A `beforeDelete` and an `afterDelete` webhook on `className`, changing nothing.
    private func deleteHooks(_ server: TestServer, _ className: String) async throws -> (before: ComputedWebhook, after: ComputedWebhook) {
        let before = try ComputedWebhook(replying: [:]), after = try ComputedWebhook(replying: ["success": true])
        try await trigger(server, className, "beforeDelete", before)
        try await trigger(server, className, "afterDelete", after)
        return (before, after)
    }

    // MARK: - Cloud functions (CloudCode.spec.js 'cloud functions', ParseAPI.spec.js)

    // spec: CloudCode.spec.js: Should have request ip
    @Test func aFunctionWebhookIsToldTheCallersAddress() async throws {
        let server = try makeServer()
        let hook = try ComputedWebhook(replying: ["success": "success"])
        try await function(server, "myFunction", hook)
        let called = try await server.request("POST", "/functions/myFunction", json: [:])
        #expect(called.status == 200 && called.json == ["result": "success"], "\(called.text)")
        #expect(hook.requests.last?["ip"]?.stringValue?.isEmpty == false, "\(hook.requests)")
    }

    // spec: CloudCode.spec.js: should have access to context when cloud function is called.
    @Test func aFunctionWebhookGetsTheSDKsContext() async throws {
        let server = try makeServer()
        let hook = try ComputedWebhook { posted in posted["context"]?["a"] == "a" ? ["success": [:]] : ["error": "no context"] }
        try await function(server, "contextTest", hook)
        let called = try await sdk(server, "POST", "/functions/contextTest", context: ["a": "a"])
        #expect(called.status == 200 && called.json == ["result": [:]], "\(called.text)")
        #expect(hook.requests.last?["context"] == ["a": "a"] && hook.requests.last?["params"] == [:])
    }

    // spec: ParseAPI.spec.js: test cloud function error handling
    // spec: ParseAPI.spec.js: test cloud function error handling with standard error code
    @Test func aFunctionsErrorIsScriptFailedWithItsMessage() async throws {
        let server = try makeServer()
        // `throw new Error('noway')`: a webhook answers its error.
        try await function(server, "willFail", try ComputedWebhook(replying: ["error": "noway"]))
        expectParseError(try await server.request("POST", "/functions/willFail", json: [:]), 141, "noway")
    }

    // spec: ParseAPI.spec.js: test cloud function query parameters
    @Test func aFunctionsParamsTakeTheURLParametersOverTheBody() async throws {
        let server = try makeServer()
        try await function(server, "echoParams", try ComputedWebhook { posted in ["success": posted["params"] ?? .null] })
        // Parse's FunctionsRouter: `Object.assign({}, req.body, req.query)`; URL parameters are strings.
        let called = try await server.request("POST", "/functions/echoParams", body: Data(#"{"foo":"bar", "other": 1}"#.utf8),
                                              query: ["option": "1", "other": "2"])
        #expect(called.status == 200, "\(called.text)")
        let result = called.json["result"]
        #expect(result?["option"] == "1", "\(called.text)")
        #expect(result?["other"] == "2", "\(called.text)")
        #expect(result?["foo"] == "bar", "\(called.text)")
    }

    // spec: ParseAPI.spec.js: test cloud function query parameters with array of pointers
    @Test func aFunctionGetsAnArrayOfPointersAsSent() async throws {
        let server = try makeServer()
        try await function(server, "echoParams", try ComputedWebhook { posted in ["success": posted["params"] ?? .null] })
        let called = try await server.request("POST", "/functions/echoParams",
                                              body: Data(#"{"arr": [{ "__type": "Pointer", "className": "PointerTest" }]}"#.utf8))
        #expect(called.status == 200, "\(called.text)")
        #expect(called.json["result"]?["arr"]?.arrayValue?.count == 1, "\(called.text)")
    }

    // spec: ParseAPI.spec.js: can handle null params in cloud functions (regression test for #1742)
    @Test func aFunctionGetsANullParam() async throws {
        let server = try makeServer()
        let hook = try ComputedWebhook { posted in
            posted["params"]?["nullParam"] == JSON.null ? ["success": "yay"] : ["error": "nullParam is not null"]
        }
        try await function(server, "func", hook)
        let called = try await server.request("POST", "/functions/func", json: ["nullParam": .null])
        #expect(called.status == 200 && called.json == ["result": "yay"], "\(called.text)")
    }

    /// Partly ParseAPI.spec.js "can handle date params in cloud functions (#2214)": the spec checks that the JS
    /// function sees `params.date` with `__type: 'Date'` and its `iso` (FunctionsRouter makes it a `Date` carrying
    /// both). A webhook is posted `JSON.stringify` of that, in which Parse's `Date` is its ISO string; Roost posts the
    /// encoded date. Either way the call succeeds and the webhook gets the instant.
    @Test func aFunctionGetsADateParam() async throws {
        let server = try makeServer()
        let hook = try ComputedWebhook(replying: ["success": "yay"])
        try await function(server, "dateFunc", hook)
        let iso = "2016-05-22T09:00:00.000Z"
        let called = try await server.request("POST", "/functions/dateFunc", json: ["date": date(iso)])
        #expect(called.status == 200 && called.json == ["result": "yay"], "\(called.text)")
        let seen = try #require(hook.requests.last?["params"]?["date"])
        #expect(seen == date(iso) || seen == .string(iso), "\(seen.jsonText)")
    }

    // MARK: - What a trigger webhook is told (CloudCode.spec.js 'beforeSave hooks' ... 'afterDelete hooks')

    // spec: CloudCode.spec.js: should have request headers
    // spec: CloudCode.spec.js: should have request ip
    @Test func aBeforeSaveWebhookIsToldTheHeadersAndAddress() async throws {
        let server = try makeServer()
        let hook = try ComputedWebhook(replying: [:])
        try await trigger(server, "MyObject", "beforeSave", hook)
        #expect(try await server.request("POST", "/classes/MyObject", json: [:]).status == 201)
        let told = try #require(hook.requests.first)
        #expect(told["headers"]?.objectValue != nil && told["headers"]?["x-parse-application-id"] == .string(TestServer.applicationId),
                "\(told.jsonText)")
        #expect(told["ip"]?.stringValue?.isEmpty == false, "\(told.jsonText)")
    }

    // spec: CloudCode.spec.js: should have request headers
    // spec: CloudCode.spec.js: should have request ip
    @Test func anAfterSaveWebhookIsToldTheHeadersAndAddress() async throws {
        let server = try makeServer()
        let hook = try ComputedWebhook(replying: ["success": true])
        try await trigger(server, "MyObject", "afterSave", hook)
        #expect(try await server.request("POST", "/classes/MyObject", json: [:]).status == 201)
        let told = try #require(try await waitFor(hook, count: 1).first)
        #expect(told["headers"]?.objectValue != nil && told["headers"]?["x-parse-application-id"] == .string(TestServer.applicationId),
                "\(told.jsonText)")
        #expect(told["ip"]?.stringValue?.isEmpty == false, "\(told.jsonText)")
    }

    // spec: CloudCode.spec.js: should have request headers
    // spec: CloudCode.spec.js: should have request ip
    @Test func aBeforeDeleteWebhookIsToldTheHeadersAndAddress() async throws {
        let server = try makeServer()
        let hook = try ComputedWebhook(replying: [:])
        try await trigger(server, "MyObject", "beforeDelete", hook)
        let id = try await server.create("MyObject", [:])
        #expect(try await server.request("DELETE", "/classes/MyObject/\(id)").status == 200)
        let told = try #require(hook.requests.first)
        #expect(told["headers"]?.objectValue != nil && told["headers"]?["x-parse-application-id"] == .string(TestServer.applicationId),
                "\(told.jsonText)")
        #expect(told["ip"]?.stringValue?.isEmpty == false, "\(told.jsonText)")
    }

    // spec: CloudCode.spec.js: should have request headers
    // spec: CloudCode.spec.js: should have request ip
    @Test func anAfterDeleteWebhookIsToldTheHeadersAndAddress() async throws {
        let server = try makeServer()
        let hook = try ComputedWebhook(replying: ["success": true])
        try await trigger(server, "MyObject", "afterDelete", hook)
        let id = try await server.create("MyObject", [:])
        #expect(try await server.request("DELETE", "/classes/MyObject/\(id)").status == 200)
        let told = try #require(try await waitFor(hook, count: 1).first)
        #expect(told["headers"]?.objectValue != nil && told["headers"]?["x-parse-application-id"] == .string(TestServer.applicationId),
                "\(told.jsonText)")
        #expect(told["ip"]?.stringValue?.isEmpty == false, "\(told.jsonText)")
    }

    // spec: CloudCode.spec.js: should respect custom object ids (#6733)
    @Test func aBeforeSaveWebhookSeesACustomObjectId() async throws {
        let server = try makeServer(["--allow-custom-object-id"])
        let hook = try ComputedWebhook(replying: [:])
        try await trigger(server, "TestObject", "beforeSave", hook)
        let created = try await server.request("POST", "/classes/TestObject", json: ["objectId": "test_6733", "foo": "bar"])
        #expect(created.status == 201 && created.json["objectId"] == "test_6733", "\(created.text)")
        // Parse builds `request.object` from the data to save, objectId included (`req.object.id`).
        let told = try #require(hook.requests.first)
        #expect(told["object"]?["objectId"] == "test_6733", "\(told.jsonText)")
        let found = try await server.results("TestObject", ["where": ["objectId": "test_6733"]])
        #expect(found.count == 1 && found.first?["foo"] == "bar", "\(found)")
    }

    // spec: ParseAPI.spec.js: test beforeSave/afterSave get installationId
    @Test func saveWebhooksGetTheInstallationId() async throws {
        let server = try makeServer()
        let (before, after) = try await saveHooks(server, "GameScore")
        let created = try await server.request("POST", "/classes/GameScore", json: ["a": "b"], headers: ["X-Parse-Installation-Id": "yolo"])
        #expect(created.status == 201, "\(created.text)")
        // beforeSave first (before the reply), then afterSave.
        #expect(before.requests.count == 1 && before.requests.first?["installationId"] == "yolo", "\(before.requests)")
        let told = try await waitFor(after, count: 1)
        #expect(told.count == 1 && told.first?["installationId"] == "yolo", "\(told)")
    }

    // spec: ParseAPI.spec.js: test beforeDelete/afterDelete get installationId
    @Test func deleteWebhooksGetTheInstallationId() async throws {
        let server = try makeServer()
        let (before, after) = try await deleteHooks(server, "GameScore")
        let headers = ["X-Parse-Installation-Id": "yolo"]
        let created = try await server.request("POST", "/classes/GameScore", json: ["a": "b"], headers: headers)
        let id = try #require(created.json["objectId"]?.stringValue)
        #expect(try await server.request("DELETE", "/classes/GameScore/\(id)", headers: headers).status == 200)
        #expect(before.requests.count == 1 && before.requests.first?["installationId"] == "yolo", "\(before.requests)")
        let told = try await waitFor(after, count: 1)
        #expect(told.count == 1 && told.first?["installationId"] == "yolo", "\(told)")
    }

    // MARK: - beforeSave (ParseAPI.spec.js, schemas.spec.js)

    // spec: ParseAPI.spec.js: object is set on create and update
    // spec: ParseAPI.spec.js: original object is set on update
    @Test func aBeforeSaveWebhookSeesTheObjectAndTheOriginal() async throws {
        let server = try makeServer()
        let hook = try ComputedWebhook(replying: [:])
        try await trigger(server, "GameScore", "beforeSave", hook)
        let id = try await server.create("GameScore", ["foo": "bar", "fooAgain": "barAgain"])
        // The JS SDK sends only what changed.
        #expect(try await server.request("PUT", "/classes/GameScore/\(id)", json: ["foo": "baz"]).status == 200)
        let told = hook.requests
        #expect(told.count == 2, "\(told)")
        guard told.count == 2 else { return }
        // Create: no id, no dates, no original.
        let created = told[0]["object"]
        #expect(created?["foo"] == "bar" && created?["fooAgain"] == "barAgain", "\(told[0].jsonText)")
        #expect(created?["objectId"] == nil && created?["createdAt"] == nil && created?["updatedAt"] == nil, "\(told[0].jsonText)")
        #expect(told[0]["original"] == nil, "\(told[0].jsonText)")
        // Update: the object as it would be saved, and the original.
        let updated = told[1]["object"], original = told[1]["original"]
        #expect(updated?["foo"] == "baz" && updated?["fooAgain"] == "barAgain", "\(told[1].jsonText)")
        #expect(updated?["objectId"] == .string(id) && updated?["createdAt"] != nil && updated?["updatedAt"] != nil, "\(told[1].jsonText)")
        #expect(original?["foo"] == "bar" && original?["fooAgain"] == "barAgain", "\(told[1].jsonText)")
        #expect(original?["objectId"] == .string(id) && original?["createdAt"] != nil && original?["updatedAt"] != nil, "\(told[1].jsonText)")
    }

    // spec: ParseAPI.spec.js: works when object is passed to success
    @Test func aBeforeSaveWebhooksObjectIsSavedAndAnswered() async throws {
        let server = try makeServer()
        let hook = try ComputedWebhook { posted in ComputedWebhook.echo(posted, ["foo": "bar"]) }
        try await trigger(server, "GameScore", "beforeSave", hook)
        let created = try await server.request("POST", "/classes/GameScore", json: ["foo": "baz"])
        #expect(created.status == 201 && created.json["foo"] == "bar", "\(created.text)")  // What the SDK reads back.
        #expect(hook.requests.count == 1)
        let id = try #require(created.json["objectId"]?.stringValue)
        #expect(try await server.fetch("GameScore", id)["foo"] == "bar")
    }

    // spec: ParseAPI.spec.js: test beforeSave set object acl success
    @Test func aBeforeSaveWebhookSetsTheACL() async throws {
        let server = try makeServer()
        let acl: JSON = ["*": ["read": true]]  // `new Parse.ACL({'*': {read: true, write: false}})`, as the SDK writes it.
        try await trigger(server, "BeforeSaveAddACL", "beforeSave", try ComputedWebhook { posted in ComputedWebhook.echo(posted, ["ACL": acl]) })
        let id = try await server.create("BeforeSaveAddACL", ["lol": true])
        let again = try await server.fetch("BeforeSaveAddACL", id)
        #expect(again["lol"] == true && again["ACL"] == acl, "\(again.jsonText)")
    }

    // spec: ParseAPI.spec.js: beforeSave receives ACL
    // spec: ParseAPI.spec.js: afterSave receives ACL
    @Test func saveWebhooksSeeTheACL() async throws {
        let server = try makeServer()
        let (before, after) = try await saveHooks(server, "GameScore")
        let id = try await server.create("GameScore", ["ACL": ["*": ["read": true, "write": true]]])
        // `acl.setPublicReadAccess(false)`: the SDK sends the whole ACL.
        #expect(try await server.request("PUT", "/classes/GameScore/\(id)", json: ["ACL": ["*": ["write": true]]]).status == 200)
        let afterTold = try await waitFor(after, count: 2)
        for (name, told) in [("beforeSave", before.requests), ("afterSave", afterTold)] {
            #expect(told.count == 2, "\(name): \(told)")
            guard told.count == 2 else { continue }
            let first = told[0]["object"]?["ACL"]?["*"], second = told[1]["object"]?["ACL"]?["*"]
            #expect(first?["read"] == true && first?["write"] == true, "\(name): \(told[0].jsonText)")
            #expect(second?["read"] != true && second?["write"] == true, "\(name): \(told[1].jsonText)")
        }
    }

    // spec: ParseAPI.spec.js: pointer mutation properly saves object
    @Test func aBeforeSaveWebhookMayChangeThePointedObject() async throws {
        let server = try makeServer()
        let childId = try await server.create("Child", [:])
        // `child.set('a', 'b'); return child.save()`: the webhook saves the child over REST, then changes nothing.
        let hook = try ComputedWebhook { posted in
            let pointed = posted["object"]?["child"]?["objectId"]?.stringValue ?? "missing"
            let saved = try await server.request("PUT", "/classes/Child/\(pointed)", json: ["a": "b"])
            return saved.status == 200 ? [:] : ["error": .string("child save failed: \(saved.text)")]
        }
        try await trigger(server, "GameScore", "beforeSave", hook)
        let id = try await server.create("GameScore", ["foo": "bar", "child": pointer("Child", childId)])
        let again = try await server.request("GET", "/classes/GameScore/\(id)", query: ["include": "child"])
        #expect(again.json["foo"] == "bar", "\(again.text)")
        #expect(again.json["child"]?["className"] == "Child" && again.json["child"]?["a"] == "b", "\(again.text)")
    }

    // spec: ParseAPI.spec.js: pointer reassign is working properly (#1288)
    @Test func aPointerSetByBeforeSaveStays() async throws {
        let server = try makeServer()
        // Without `point`, the hook saves a TestObject1 and points to it; with one, it changes nothing.
        let hook = try ComputedWebhook { posted in
            if posted["object"]?["point"] != nil { return [:] }
            let made = try await server.request("POST", "/classes/TestObject1", json: ["key1": 1])
            guard let madeId = made.json["objectId"]?.stringValue else { return ["error": .string(made.text)] }
            return ComputedWebhook.echo(posted, ["point": pointer("TestObject1", madeId)])
        }
        try await trigger(server, "GameScore", "beforeSave", hook)
        let created = try await server.request("POST", "/classes/GameScore", json: ["foo": "bar"])
        #expect(created.status == 201, "\(created.text)")
        let pointId = try #require(created.json["point"]?["objectId"]?.stringValue, "\(created.text)")
        let id = try #require(created.json["objectId"]?.stringValue)
        let updated = try await server.request("PUT", "/classes/GameScore/\(id)", json: ["foo": "baz"])
        #expect(updated.status == 200, "\(updated.text)")
        // The SDK keeps its `point` unless the reply names another.
        #expect(updated.json["point"] == nil || updated.json["point"]?["objectId"] == .string(pointId), "\(updated.text)")
        let again = try await server.fetch("GameScore", id)
        #expect(again["point"]?["objectId"] == .string(pointId) && again["foo"] == "baz", "\(again.jsonText)")
    }

    // spec: ParseAPI.spec.js: should not update schema beforeSave #2672
    @Test func aRefusedSaveAddsNoField() async throws {
        let server = try makeServer()
        let hook = try ComputedWebhook { posted in
            posted["object"]?["secret"] != nil ? ["error": "cannot set secret here"] : [:]
        }
        try await trigger(server, "MyObject", "beforeSave", hook)
        let id = try await server.create("MyObject", ["key": "value"])
        let refused = try await server.request("PUT", "/classes/MyObject/\(id)", json: ["secret": "should not update schema"])
        expectParseError(refused, 141, "cannot set secret here")
        let schema = try await server.request("GET", "/schemas/MyObject", master: true)
        #expect(schema.status == 200 && schema.json["fields"]?["key"] != nil, "\(schema.text)")
        #expect(schema.json["fields"]?["secret"] == nil, "\(schema.text)")
    }

    // spec: ParseAPI.spec.js: should response should not change with triggers
    @Test func triggersThatChangeNothingLeaveTheRepliesAlone() async throws {
        let server = try makeServer()
        let (_, after) = try await saveHooks(server, "GameScore")
        let headers = ["X-Parse-Installation-Id": "yolo"]
        let childId = try await server.create("Child", [:])
        let created = try await server.request("POST", "/classes/GameScore", json: [
            "a": "hello", "c": 1, "d": ["1"], "e": ["1"], "f": ["1", "2"],
            "point": geoPoint(37.4848, -122.1483), "array": ["obj1", "obj2"], "objects": ["a": "b"], "string": "abc", "bool": true,
            "number": 1, "date": date("2024-05-01T10:00:00.000Z"), "pointer": pointer("Child", childId),
        ], headers: headers)
        #expect(created.status == 201 && keySet(created.json) == ["createdAt", "objectId"], "\(created.text)")
        let id = try #require(created.json["objectId"]?.stringValue)
        let response = try await server.request("PUT", "/classes/GameScore/\(id)", json: [
            "a": "b", "c": ["__op": "Increment", "amount": 2], "d": ["__op": "Add", "objects": ["2"]],
            "e": ["__op": "AddUnique", "objects": ["1", "2"]], "f": ["__op": "Remove", "objects": ["2"]],
            "selfThing": pointer("GameScore", id),
        ], headers: headers)
        let body = response.json
        #expect(response.status == 200 && keySet(body) == ["c", "d", "e", "f", "updatedAt"], "\(response.text)")
        #expect(body["a"] == nil && body["selfThing"] == nil && body["c"] == 3)
        #expect(Set(body["d"]?.arrayValue ?? []) == ["1", "2"] && body["d"]?.arrayValue?.count == 2, "\(response.text)")
        #expect(Set(body["e"]?.arrayValue ?? []) == ["1", "2"] && body["e"]?.arrayValue?.count == 2, "\(response.text)")
        #expect(body["f"] == ["1"], "\(response.text)")
        try await waitFor(after, count: 2)
    }

    // spec: schemas.spec.js: should validate required fields and set default values after before save trigger
    @Test func requiredFieldsAndDefaultsFollowTheBeforeSaveWebhook() async throws {
        let server = try makeServer()
        let className = "NewClassForBeforeSaveTest"
        let declared = try await server.request("POST", "/schemas", json: [
            "className": .string(className),
            "fields": [
                "foo1": ["type": "String"],
                "foo2": ["type": "String", "required": true],
                "foo3": ["type": "String", "required": true, "defaultValue": "some default value 3"],
                "foo4": ["type": "String", "defaultValue": "some default value 4"],
            ],
        ], master: true)
        #expect(declared.status == 200, "\(declared.text)")

        // The hook sets all four: the save answers them (the SDK reads them back from the reply).
        try await trigger(server, className, "beforeSave", try ComputedWebhook { posted in
            ComputedWebhook.echo(posted, ["foo1": "some value 1", "foo2": "some value 2", "foo3": "some value 3", "foo4": "some value 4"])
        })
        var saved = try await server.request("POST", "/classes/\(className)", json: [:])
        #expect(saved.status == 201, "\(saved.text)")
        for n in 1...4 { #expect(saved.json["foo\(n)"] == .string("some value \(n)"), "\(saved.text)") }

        // It sets foo1 and foo2: the defaults fill foo3 and foo4.
        try await retrigger(server, className, "beforeSave", try ComputedWebhook { posted in
            ComputedWebhook.echo(posted, ["foo1": "some value 1", "foo2": "some value 2"])
        })
        saved = try await server.request("POST", "/classes/\(className)", json: [:])
        #expect(saved.status == 201, "\(saved.text)")
        #expect(saved.json["foo1"] == "some value 1" && saved.json["foo2"] == "some value 2", "\(saved.text)")
        #expect(saved.json["foo3"] == "some default value 3" && saved.json["foo4"] == "some default value 4", "\(saved.text)")

        // `set('foo3', undefined)` (left out of the answer) and `unset('foo4')`: the defaults again, over the client's values.
        try await retrigger(server, className, "beforeSave", try ComputedWebhook { posted in
            ComputedWebhook.echo(posted, ["foo1": "some value 1", "foo2": "some value 2", "foo4": ["__op": "Delete"]], removing: ["foo3"])
        })
        saved = try await server.request("POST", "/classes/\(className)", json: ["foo3": "some value 3", "foo4": "some value 4"])
        #expect(saved.status == 201, "\(saved.text)")
        #expect(saved.json["foo1"] == "some value 1" && saved.json["foo2"] == "some value 2", "\(saved.text)")
        #expect(saved.json["foo3"] == "some default value 3" && saved.json["foo4"] == "some default value 4", "\(saved.text)")

        // foo2 left out (`set('foo2', undefined)`), then unset: it is required and has no default.
        try await retrigger(server, className, "beforeSave", try ComputedWebhook { posted in
            ComputedWebhook.echo(posted, ["foo1": "some value 1", "foo4": ["__op": "Delete"]], removing: ["foo2", "foo3"])
        })
        let full: JSON = ["foo2": "some value 2", "foo3": "some value 3", "foo4": "some value 4"]
        expectParseError(try await server.request("POST", "/classes/\(className)", json: full), 142, "foo2 is required")
        try await retrigger(server, className, "beforeSave", try ComputedWebhook { posted in
            ComputedWebhook.echo(posted, ["foo1": "some value 1", "foo2": ["__op": "Delete"], "foo4": ["__op": "Delete"]], removing: ["foo3"])
        })
        expectParseError(try await server.request("POST", "/classes/\(className)", json: full), 142, "foo2 is required")
    }

    // spec: schemas.spec.js: unset field in beforeSave should not stop object creation
    @Test func aFieldTheWebhookDropsNeedsNoAddField() async throws {
        let server = try makeServer()
        let locked = try await server.request("POST", "/schemas/AnObject", json: ["classLevelPermissions": [
            "get": ["*": true], "find": ["*": true], "create": ["*": true], "update": ["*": true], "delete": ["*": true], "addField": [:],
        ]], master: true)
        #expect(locked.status == 200, "\(locked.text)")
        let hook = try ComputedWebhook { posted in ComputedWebhook.echo(posted, [:], removing: ["undesiredField"]) }
        try await trigger(server, "AnObject", "beforeSave", hook)
        #expect(try await server.request("POST", "/classes/AnObject", json: ["desiredField": "createMe"], master: true).status == 201)
        let second = try await server.request("POST", "/classes/AnObject", json: [
            "desiredField": "This value should be kept", "undesiredField": "This value should be IGNORED",
        ])
        #expect(second.status == 201, "\(second.text)")
        let found = try await server.results("AnObject")
        #expect(found.count == 2, "\(found)")
        #expect(found.allSatisfy { $0["desiredField"] != nil && $0["undesiredField"] == nil }, "\(found)")
        #expect(hook.requests.count == 2)
    }

    // MARK: - afterSave (ParseAPI.spec.js)

    // spec: ParseAPI.spec.js: test afterSave get full object on create and update
    // spec: ParseAPI.spec.js: test afterSave get original object on update
    @Test func anAfterSaveWebhookGetsTheFullObjectAndTheOriginal() async throws {
        let server = try makeServer()
        let hook = try ComputedWebhook(replying: ["success": true])
        try await trigger(server, "GameScore", "afterSave", hook)
        let id = try await server.create("GameScore", ["foo": "bar", "fooAgain": "barAgain"])
        _ = try await waitFor(hook, count: 1)  // Told in order: the create's before the update's.
        #expect(try await server.request("PUT", "/classes/GameScore/\(id)", json: ["foo": "baz"]).status == 200)
        let told = try await waitFor(hook, count: 2)
        #expect(told.count == 2, "\(told)")
        guard told.count == 2 else { return }
        for (index, foo) in [(0, "bar"), (1, "baz")] {
            let object = told[index]["object"]
            #expect(object?["objectId"] == .string(id) && object?["createdAt"] != nil && object?["updatedAt"] != nil, "\(told[index].jsonText)")
            #expect(object?["fooAgain"] == "barAgain" && object?["foo"] == .string(foo), "\(told[index].jsonText)")
        }
        #expect(told[0]["original"] == nil, "\(told[0].jsonText)")
        let original = told[1]["original"]
        #expect(original?["objectId"] == .string(id) && original?["createdAt"] != nil && original?["updatedAt"] != nil, "\(told[1].jsonText)")
        #expect(original?["fooAgain"] == "barAgain" && original?["foo"] == "bar", "\(told[1].jsonText)")
    }

    // spec: ParseAPI.spec.js: test afterSave get full original object even req auth can not query it
    @Test func anAfterSaveWebhookGetsAnOriginalTheCallerCannotRead() async throws {
        let server = try makeServer()
        let hook = try ComputedWebhook(replying: ["success": true])
        try await trigger(server, "GameScore", "afterSave", hook)
        // Public write, no public read: the updating caller cannot query it.
        let id = try await server.create("GameScore", ["foo": "bar", "fooAgain": "barAgain", "ACL": ["*": ["write": true]]])
        _ = try await waitFor(hook, count: 1)
        #expect(try await server.request("PUT", "/classes/GameScore/\(id)", json: ["foo": "baz"]).status == 200)
        let told = try await waitFor(hook, count: 2)
        #expect(told.count == 2, "\(told)")
        guard told.count == 2 else { return }
        #expect(told[1]["object"]?["foo"] == "baz", "\(told[1].jsonText)")
        let original = told[1]["original"]
        #expect(original?["fooAgain"] == "barAgain" && original?["foo"] == "bar", "\(told[1].jsonText)")
        #expect(original?["objectId"] == .string(id) && original?["createdAt"] != nil && original?["updatedAt"] != nil, "\(told[1].jsonText)")
    }

    // spec: ParseAPI.spec.js: afterSave flattens custom operations
    @Test func anAfterSaveWebhookGetsOperationsApplied() async throws {
        let server = try makeServer()
        let hook = try ComputedWebhook(replying: ["success": true])
        try await trigger(server, "GameScore", "afterSave", hook)
        let id = try await server.create("GameScore", ["yolo": ["__op": "Increment", "amount": 1]])
        _ = try await waitFor(hook, count: 1)
        #expect(try await server.request("PUT", "/classes/GameScore/\(id)", json: ["yolo": ["__op": "Increment", "amount": 1]]).status == 200)
        let told = try await waitFor(hook, count: 2)
        #expect(told.count == 2, "\(told)")
        guard told.count == 2 else { return }
        #expect(told[0]["object"]?["yolo"] == 1, "\(told[0].jsonText)")
        #expect(told[1]["object"]?["yolo"] == 2 && told[1]["original"]?["yolo"] == 1, "\(told[1].jsonText)")
    }

    // MARK: - Context (CloudCode.spec.js 'afterFind hooks' and 'afterLogin hook' blocks, their save and delete cases)

    /// A save the server refuses for its context (107) runs neither save webhook.
    private func expectContextRefused(headers: [String: String], body: [String: JSON], appId: Bool,
                                      sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let server = try makeServer()
        let (before, after) = try await saveHooks(server, "TestObject")
        let refused = try await server.request("POST", "/classes/TestObject", json: .object(body), headers: headers, appId: appId)
        expectParseError(refused, 107, "Invalid object for context.", sourceLocation: sourceLocation)
        try await Task.sleep(for: .milliseconds(300))  // An afterSave would be told by now.
        #expect(before.requests.isEmpty && after.requests.isEmpty, sourceLocation: sourceLocation)
    }

    // spec: CloudCode.spec.js: should throw error if context header is malformed
    @Test func aContextHeaderThatIsNotJSONIsRefused() async throws {
        try await expectContextRefused(headers: ["X-Parse-Cloud-Context": "key"], body: ["foo": "bar"], appId: true)
    }

    // spec: CloudCode.spec.js: should throw error if context header is string "1"
    @Test func aContextHeaderThatIsNotAnObjectIsRefused() async throws {
        try await expectContextRefused(headers: ["X-Parse-Cloud-Context": "1"], body: ["foo": "bar"], appId: true)
    }

    // spec: CloudCode.spec.js: should throw error if context body is malformed
    @Test func aBodyContextThatIsNotJSONIsRefused() async throws {
        try await expectContextRefused(headers: ["X-Parse-Cloud-Context": #"{"key":"value","otherKey":1}"#],
                                       body: ["foo": "bar", "_ApplicationId": .string(TestServer.applicationId), "_context": "key"],
                                       appId: false)
    }

    // spec: CloudCode.spec.js: should throw error if context body is string "true"
    @Test func aBodyContextThatIsNotAnObjectIsRefused() async throws {
        try await expectContextRefused(headers: ["X-Parse-Cloud-Context": #"{"key":"value","otherKey":1}"#],
                                       body: ["foo": "bar", "_ApplicationId": .string(TestServer.applicationId), "_context": "true"],
                                       appId: false)
    }

    // spec: CloudCode.spec.js: should expose context in beforeSave/afterSave via header
    @Test func saveWebhooksGetTheContextHeader() async throws {
        let server = try makeServer()
        let (before, after) = try await saveHooks(server, "TestObject")
        let created = try await server.request("POST", "/classes/TestObject", json: ["foo": "bar"],
                                               headers: ["X-Parse-Cloud-Context": #"{"key":"value","otherKey":1}"#])
        #expect(created.status == 201, "\(created.text)")
        try await waitFor(after, count: 1)
        for hook in [before, after] {
            #expect(hook.requests.count == 1, "\(hook.requests)")
            #expect(hook.requests.first?["object"]?["foo"] == "bar" && hook.requests.first?["context"] == ["key": "value", "otherKey": 1],
                    "\(hook.requests)")
        }
    }

    // spec: CloudCode.spec.js: should override header context with body context in beforeSave/afterSave
    @Test func aBodyContextWinsOverTheHeader() async throws {
        let server = try makeServer()
        let (before, after) = try await saveHooks(server, "TestObject")
        let created = try await server.request("POST", "/classes/TestObject", json: [
            "foo": "bar", "_ApplicationId": .string(TestServer.applicationId), "_context": #"{"key":"hello","otherKey":10}"#,
        ], headers: ["X-Parse-Cloud-Context": #"{"key":"value","otherKey":1}"#], appId: false)
        #expect(created.status == 201, "\(created.text)")
        try await waitFor(after, count: 1)
        for hook in [before, after] {
            #expect(hook.requests.count == 1, "\(hook.requests)")
            #expect(hook.requests.first?["object"]?["foo"] == "bar" && hook.requests.first?["context"] == ["key": "hello", "otherKey": 10],
                    "\(hook.requests)")
        }
    }

    // spec: CloudCode.spec.js: context options should override _context object property when saving a new object
    @Test func theSDKsContextIsNotAField() async throws {
        let server = try makeServer()
        let (before, after) = try await saveHooks(server, "TestObject")
        // `obj.set('_context', {hello: 'world'})` then `save(null, {context: {a: 'a'}})`: the SDK's body has one `_context`.
        let created = try await sdk(server, "POST", "/classes/TestObject", context: ["a": "a"])
        #expect(created.status == 201, "\(created.text)")
        try await waitFor(after, count: 1)
        for hook in [before, after] {
            let told = try #require(hook.requests.first)
            #expect(told["context"] == ["a": "a"] && told["_context"] == nil, "\(told.jsonText)")
            #expect(told["object"]?["_context"] == nil && told["object"]?["context"] == nil, "\(told.jsonText)")
        }
    }

    // spec: CloudCode.spec.js: should have access to context when saving a new object
    @Test func saveWebhooksGetTheContextOfACreate() async throws {
        let server = try makeServer()
        let (before, after) = try await saveHooks(server, "TestObject")
        #expect(try await sdk(server, "POST", "/classes/TestObject", context: ["a": "a"]).status == 201)
        try await waitFor(after, count: 1)
        #expect(contexts(before) == [["a": "a"]] && contexts(after) == [["a": "a"]], "\(before.requests) \(after.requests)")
    }

    // spec: CloudCode.spec.js: should have access to context when saving an existing object
    @Test func saveWebhooksGetTheContextOfAnUpdate() async throws {
        let server = try makeServer()
        let id = try await server.create("TestObject", [:])
        let (before, after) = try await saveHooks(server, "TestObject")
        #expect(try await sdk(server, "PUT", "/classes/TestObject/\(id)", context: ["a": "a"]).status == 200)
        try await waitFor(after, count: 1)
        #expect(contexts(before) == [["a": "a"]] && contexts(after) == [["a": "a"]], "\(before.requests) \(after.requests)")
    }

    // spec: CloudCode.spec.js: should have access to context when saving a new object in a trigger
    @Test func aSaveMadeByAnAfterSaveWebhookCarriesItsContext() async throws {
        let server = try makeServer()
        let (before, after) = try await saveHooks(server, "TestObject")
        // TriggerObject's afterSave saves a TestObject with a context, as the JS SDK would in Cloud Code.
        let saver = try ComputedWebhook { _ in
            let body: JSON = ["_ApplicationId": .string(TestServer.applicationId), "_context": ["a": "a"]]
            let saved = try await server.request("POST", "/classes/TestObject", json: body, appId: false)
            return saved.status == 201 ? ["success": true] : ["error": .string(saved.text)]
        }
        try await trigger(server, "TriggerObject", "afterSave", saver)
        #expect(try await server.request("POST", "/classes/TriggerObject", json: [:]).status == 201)
        try await waitFor(after, count: 1)
        #expect(contexts(before) == [["a": "a"]] && contexts(after) == [["a": "a"]], "\(before.requests) \(after.requests)")
    }

    // spec: CloudCode.spec.js: should have access to context when cascade-saving objects
    @Test func aCascadeSaveCarriesTheContextToEveryObject() async throws {
        let server = try makeServer()
        let first = try await saveHooks(server, "TestObject"), second = try await saveHooks(server, "TestObject2")
        // The SDK saves the unsaved child in a batch, then the parent; both with the context.
        let batch = try await sdk(server, "POST", "/batch", ["requests": [["method": "POST", "path": "/parse/classes/TestObject2", "body": [:]]]],
                                  context: ["a": "a"])
        let childId = try #require(batch.json.arrayValue?.first?["success"]?["objectId"]?.stringValue, "\(batch.text)")
        let parent = try await sdk(server, "POST", "/classes/TestObject", ["obj2": pointer("TestObject2", childId)], context: ["a": "a"])
        #expect(parent.status == 201, "\(parent.text)")
        try await waitFor(first.after, count: 1)
        try await waitFor(second.after, count: 1)
        for hook in [first.before, first.after, second.before, second.after] {
            #expect(contexts(hook) == [["a": "a"]], "\(hook.requests)")
        }
    }

    // spec: CloudCode.spec.js: should have access to context as saveAll argument
    @Test func aBatchOfSavesCarriesTheContextToEachItem() async throws {
        let server = try makeServer()
        let (before, after) = try await saveHooks(server, "TestObject")
        let item: JSON = ["method": "POST", "path": "/parse/classes/TestObject", "body": [:]]
        let batch = try await sdk(server, "POST", "/batch", ["requests": [item, item]], context: ["a": "a"])
        #expect(batch.json.arrayValue?.compactMap { $0["success"] }.count == 2, "\(batch.text)")
        try await waitFor(after, count: 2)
        #expect(contexts(before) == [["a": "a"], ["a": "a"]] && contexts(after) == [["a": "a"], ["a": "a"]],
                "\(before.requests) \(after.requests)")
    }

    // spec: CloudCode.spec.js: should have access to context as destroyAll argument
    @Test func aBatchOfDeletesCarriesTheContextToEachItem() async throws {
        let server = try makeServer()
        let firstId = try await server.create("TestObject", [:])
        let secondId = try await server.create("TestObject", [:])
        let ids = [firstId, secondId]
        let (before, after) = try await deleteHooks(server, "TestObject")
        let requests: [JSON] = ids.map { ["method": "DELETE", "path": .string("/parse/classes/TestObject/\($0)")] }
        let batch = try await sdk(server, "POST", "/batch", ["requests": .array(requests)], context: ["a": "a"])
        #expect(batch.json.arrayValue?.compactMap { $0["success"] }.count == 2, "\(batch.text)")
        try await waitFor(after, count: 2)
        #expect(contexts(before) == [["a": "a"], ["a": "a"]] && contexts(after) == [["a": "a"], ["a": "a"]],
                "\(before.requests) \(after.requests)")
    }

    // spec: CloudCode.spec.js: should have access to context as destroy a object
    @Test func deleteWebhooksGetTheContext() async throws {
        let server = try makeServer()
        let id = try await server.create("TestObject", [:])
        let (before, after) = try await deleteHooks(server, "TestObject")
        #expect(try await sdk(server, "DELETE", "/classes/TestObject/\(id)", context: ["a": "a"]).status == 200)
        try await waitFor(after, count: 1)
        #expect(contexts(before) == [["a": "a"]] && contexts(after) == [["a": "a"]], "\(before.requests) \(after.requests)")
    }
}

/// A webhook whose reply is given as its JSON body (status 200), computed from what it is posted, as a JS trigger's body
/// looks at its `request`; `answer` may call the server back over REST.
private final class ComputedWebhook: Sendable {
    private let webhook: ScriptedWebhook
    var url: String { webhook.url }
    /// The bodies posted so far, in order.
    var requests: [JSON] { webhook.requests }

    /// `answer` returns the reply's JSON body: `["success": value]`, `["error": message]`, or `[:]` to change nothing.
    init(_ answer: @escaping @Sendable (JSON) async throws -> JSON) throws {
        webhook = try ScriptedWebhook { .raw(try await answer($0).jsonText) }
    }

    /// Always the same reply.
    convenience init(replying reply: JSON) throws {
        try self.init { _ in reply }
    }

    /// `{"success": object}`: the posted `object` with `changes` applied and `removing` left out, as a JS
    /// `request.object.set(...)` / `set(key, undefined)` leaves it.
    static func echo(_ posted: JSON, _ changes: [String: JSON], removing: [String] = []) -> JSON {
        var object = posted["object"]?.objectValue ?? [:]
        object.merge(changes) { $1 }
        for key in removing { object.removeValue(forKey: key) }
        return ["success": .object(object)]
    }
}
