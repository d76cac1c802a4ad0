import Foundation
import RoostCore
import RoostTestSupport
import Testing

/// Parse Server's spec/vulnerabilities.spec.js over REST, with Parse's default `requestKeywordDenylist`
/// (`_bsontype: Code`, `constructor`, `__proto__`): object data, config parameters, a `beforeSave` webhook's answer
/// and a file's metadata and tags holding one are refused with 105.
@Suite struct VulnerabilitiesSpecTests {
    private func refused(_ keyword: String) -> String { "Prohibited keyword in request data: \(keyword)." }
    private let constructor = #"{"key":"constructor"}"#
    private let bsonCode = #"{"key":"_bsontype","value":"Code"}"#

    // spec: vulnerabilities.spec.js: denies object prototype to be polluted with keyword "constructor"
    // spec: vulnerabilities.spec.js: denies object prototype to be polluted with keypath string "constructor"
    // spec: vulnerabilities.spec.js: denies object prototype to be polluted with keyword "__proto__"
    // spec: vulnerabilities.spec.js: denies BSON type code data in write request by default
    @Test func objectDataWithADeniedKeywordIsRefused() async throws {
        let server = try TestServer()
        let polluted = try await server.request("POST", "/classes/PP", json: ["obj": ["constructor": ["prototype": ["dummy": 0]]]])
        #expect(polluted.status == 400)
        expectError(polluted, 105, refused(constructor))
        let id = try await server.create("PP", ["obj": [:]])
        expectError(try await server.request("PUT", "/classes/PP/\(id)", json: ["obj.constructor.prototype.dummy": ["__op": "Increment", "amount": 1]]),
                    105, refused(constructor))
        expectError(try await server.request("POST", "/classes/PP", json: ["obj.__proto__.dummy": 0]), 105, refused(#"{"key":"__proto__"}"#))
        expectError(try await server.request("POST", "/classes/PP", json: ["list": [["nested": ["__proto__": ["dummy": 0]]]]]),
                    105, refused(#"{"key":"__proto__"}"#))
        expectError(try await server.request("POST", "/classes/RCE", json: ["obj": ["_bsontype": "Code", "code": "delete Object.prototype.evalFunctions"]]),
                    105, refused(bsonCode))
        // In a batch, the item alone fails; through `/users`, the same refusal.
        let batch = try await server.request("POST", "/batch", json: ["requests": [
            ["method": "POST", "path": "/parse/classes/PP", "body": ["a": ["constructor": 1]]],
            ["method": "POST", "path": "/parse/classes/PP", "body": ["a": 1]],
        ]])
        #expect(batch.json.arrayValue?.first?["error"] == ["code": 105, "error": .string(refused(constructor))], "\(batch.text)")
        #expect(batch.json.arrayValue?.last?["success"]?["objectId"] != nil, "\(batch.text)")
        expectError(try await server.request("POST", "/users", json: ["username": "u", "password": "p", "profile": ["constructor": 1]]),
                    105, refused(constructor))
        // What holds none of them is stored, a `_bsontype` of another value too.
        let plain = try await server.create("PP", ["deep": ["b": ["c": 0]], "bson": ["_bsontype": "Binary"]])
        let incremented = try await server.request("PUT", "/classes/PP/\(plain)", json: ["deep.b.c": ["__op": "Increment", "amount": 1]])
        #expect(incremented.status == 200, "\(incremented.text)")
        #expect(try await server.request("GET", "/classes/PP/\(plain)").json["deep"] == ["b": ["c": 1]])
        #expect(try await server.request("GET", "/classes/PP?count=1&limit=0").json["count"] == 3)
    }

    // spec: vulnerabilities.spec.js: denies creating global config with polluted data
    @Test func configParametersWithADeniedKeywordAreRefused() async throws {
        let server = try TestServer()
        let polluted = try await server.request("PUT", "/config", json: ["params": ["welcomeMesssage": "Welcome to Parse",
                                                                                   "foo": ["_bsontype": "Code", "code": "shell"]]], master: true)
        expectError(polluted, 105, refused(bsonCode))
        #expect(try await server.request("GET", "/config").json["params"] == [:])
    }

    // spec: vulnerabilities.spec.js: denies creating a hook with polluted data
    @Test func aBeforeSaveAnswerWithADeniedKeywordIsRefused() async throws {
        let server = try TestServer()
        let webhook = try WebhookReceiver(reply: #"{"success":{"obj":{"constructor":{"prototype":{"dummy":0}}}}}"#)
        let hook: JSON = ["className": "Hooked", "triggerName": "beforeSave", "url": .string(webhook.url)]
        #expect(try await server.request("POST", "/hooks/triggers", json: hook, master: true).json == hook)
        expectError(try await server.request("POST", "/classes/Hooked", json: [:]), 105, refused(constructor))
    }

    // spec: vulnerabilities.spec.js: denies BSON type code data in file metadata
    // spec: vulnerabilities.spec.js: denies BSON type code data in file tags
    @Test func fileMetadataAndTagsWithADeniedKeywordAreRefused() async throws {
        let server = try TestServer(arguments: fastHashing)
        let signedUp = try await server.request("POST", "/users", json: ["username": "uploader", "password": "pw-uploader"])
        let token = try #require(signedUp.json["sessionToken"]?.stringValue)
        func upload(_ fileData: JSON) async throws -> TestResponse {
            let body: JSON = ["base64": "SGVsbG8gV29ybGQh", "_ContentType": "text/plain", "fileData": fileData,
                              "_ApplicationId": .string(TestServer.applicationId), "_SessionToken": .string(token)]
            return try await server.request("POST", "/files/hello.txt", body: Data(body.encoded()), headers: ["Content-Type": "text/plain"], appId: false)
        }
        let code: JSON = ["obj": ["_bsontype": "Code", "code": "delete Object.prototype.evalFunctions"]]
        expectError(try await upload(["metadata": code, "tags": [:]]), 105, refused(bsonCode))
        expectError(try await upload(["metadata": [:], "tags": code]), 105, refused(bsonCode))
        #expect(try await upload(["metadata": ["a": 1], "tags": [:]]).status == 201)
    }

    // spec: vulnerabilities.spec.js: denies user creation with poisoned object ID
    @Test func aUserCannotTakeARolesName() async throws {
        let server = try TestServer(arguments: fastHashing + ["--allow-custom-object-id"])
        for path in ["/users", "/classes/_User"] {
            let poisoned = try await server.request("POST", path, json: ["objectId": "role:a", "username": "a", "password": "123"])
            #expect(poisoned.status == 400)
            expectError(poisoned, 119, "Invalid object ID.")
        }
    }
}
