import Foundation
import RoostCore
import Testing

/// Parse Server's spec/rest.spec.js cases about server options, over REST: `--read-only-master-key`,
/// `--no-enable-anonymous-users` and `--object-id-size` for Parse's `readOnlyMasterKey`, `enableAnonymousUsers` and
/// `objectIdSize`.
@Suite struct RestOptionsSpecTests {
    private static let readOnlyKey = "read-only-test"

    private static func server() throws -> TestServer {
        try TestServer(arguments: fastHashing + ["--read-only-master-key", readOnlyKey])
    }

    private static func readOnly(_ server: TestServer, _ method: String, _ path: String, json: JSON? = nil) async throws -> TestResponse {
        try await server.request(method, path, json: json, headers: ["X-Parse-Master-Key": readOnlyKey])
    }

    // spec: rest.spec.js: properly throws on rest.create, rest.update and rest.del
    // spec: rest.spec.js: properly blocks writes
    /// Object writes are refused with Parse's message (`enforceRoleSecurity`), in a batch too; reads see what the master
    /// key sees.
    @Test func objectWritesAreRefusedAndReadsAreTheMasterKeys() async throws {
        let server = try Self.server()
        let hidden = try await server.request("POST", "/classes/AnObject", json: ["secret": 1, "ACL": [:]], master: true)
        let id = try #require(hidden.json["objectId"]?.stringValue)
        for (method, path, operation) in [("POST", "/classes/AnObject", "create"), ("PUT", "/classes/AnObject/\(id)", "update"),
                                          ("DELETE", "/classes/AnObject/\(id)", "delete"), ("POST", "/users", "create"),
                                          ("POST", "/roles", "create"), ("POST", "/installations", "create")] {
            let refused = try await Self.readOnly(server, method, path, json: method == "DELETE" ? nil : ["a": 1])
            expectParseError(refused, 119, "read-only masterKey isn't allowed to perform the \(operation) operation.")
        }
        let batch = try await Self.readOnly(server, "POST", "/batch", json: ["requests": [["method": "POST", "path": "/parse/classes/AnObject", "body": [:]]]])
        #expect(batch.json.arrayValue?.first?["error"] == ["code": 119, "error": "read-only masterKey isn't allowed to perform the create operation."], "\(batch.text)")
        // What only the master key may read: an object with an empty ACL, the schemas, the config's master-only values.
        #expect(try await Self.readOnly(server, "GET", "/classes/AnObject/\(id)").json["secret"] == 1)
        #expect(try await Self.readOnly(server, "GET", "/schemas").status == 200)
        let found = try await Self.readOnly(server, "GET", "/classes/AnObject")
        #expect(found.json["results"]?.arrayValue?.count == 1, "\(found.text)")
        #expect(try await server.request("GET", "/classes/AnObject", headers: ["X-Parse-Master-Key": "wrong"]).json["results"] == [])
    }

    // spec: rest.spec.js: should throw when trying to create schema
    // spec: rest.spec.js: should throw when trying to create schema with a name
    // spec: rest.spec.js: should throw when trying to update schema
    // spec: rest.spec.js: should throw when trying to delete schema
    // spec: rest.spec.js: should throw when trying to update the global config
    // spec: rest.spec.js: should throw when trying to send push
    @Test func schemaConfigAndPushChangesAreRefused() async throws {
        let server = try Self.server()
        let cases: [(String, String, String)] = [
            ("POST", "/schemas", "create a schema"), ("POST", "/schemas/MyClass", "create a schema"),
            ("PUT", "/schemas/MyClass", "update a schema"), ("DELETE", "/schemas/MyClass", "delete a schema"),
            ("PUT", "/config", "update the config"), ("POST", "/push", "send push notifications"),
            ("DELETE", "/purge/MyClass", "purge a schema"),
        ]
        for (method, path, action) in cases {
            expectParseError(try await Self.readOnly(server, method, path, json: [:]), 119, "read-only masterKey isn't allowed to \(action).")
        }
    }

    // spec: rest.spec.js: should throw when masterKey and readOnlyMasterKey are the same
    @Test func theTwoKeysMustDiffer() throws {
        let attempt = try StartAttempt(["--master-key", "yolo", "--read-only-master-key", "yolo"])
        #expect(!attempt.started && attempt.log.contains("masterKey and readOnlyMasterKey should be different"), "\(attempt.log)")
    }

    /// Like the master key, the read-only one is taken from `--master-key-ips` only.
    @Test func theReadOnlyKeyComesFromTheMasterKeyAddressesOnly() async throws {
        let server = try TestServer(arguments: fastHashing + ["--read-only-master-key", Self.readOnlyKey, "--master-key-ips", "10.0.0.1"])
        let refused = try await Self.readOnly(server, "GET", "/schemas")
        #expect(refused.status == 403 && refused.json == ["error": "unauthorized"], "\(refused.text)")
    }

    // spec: rest.spec.js: handles no anonymous users config
    @Test func anonymousSignUpsCanBeTurnedOff() async throws {
        let server = try TestServer(arguments: fastHashing + ["--no-enable-anonymous-users"])
        let refused = try await server.request("POST", "/users", json: ["authData": ["anonymous": ["id": "00000000-0000-0000-0000-000000000001"]]])
        expectParseError(refused, 252, "This authentication method is unsupported.")
        #expect(try await server.request("POST", "/users", json: ["username": "u", "password": "p"]).status == 201)
    }

    // spec: rest.spec.js: can use custom _id size
    // spec: rest.spec.js: is backwards compatible when _id size changes
    @Test func objectIdsHaveTheConfiguredLength() async throws {
        let first = try TestServer(arguments: fastHashing)
        let short = try await first.create("Foo", ["size": 10])
        #expect(short.count == 10)
        _ = first.stop()
        let longer = try TestServer(arguments: fastHashing + ["--object-id-size", "20"], dataDirectory: first.dataDirectory)
        let found = try await longer.request("GET", "/classes/Foo", query: ["where": #"{"size":10}"#])
        #expect(found.json["results"]?.arrayValue?.first?["objectId"] == .string(short), "\(found.text)")
        #expect(try await longer.request("PUT", "/classes/Foo/\(short)", json: ["update": 20]).status == 200)
        #expect(try await longer.request("GET", "/classes/Foo/\(short)").json["update"] == 20)
        let long = try await longer.create("Foo", ["size": 20])
        #expect(long.count == 20 && long.allSatisfy { $0.isLetter || $0.isNumber })
        let user = try await longer.request("POST", "/users", json: ["username": "u", "password": "p"])
        #expect(user.json["objectId"]?.stringValue?.count == 20, "\(user.text)")
        _ = longer.stop()
        let back = try TestServer(arguments: fastHashing, dataDirectory: first.dataDirectory)
        #expect(try await back.request("GET", "/classes/Foo", query: ["where": #"{"size":20}"#]).json["results"]?.arrayValue?.first?["objectId"] == .string(long))
        withExtendedLifetime((longer, back)) {}
    }

    /// Parse's check of `publicServerURL` at start.
    @Test func aPublicServerURLMustBeHTTP() throws {
        let attempt = try StartAttempt(["--public-server-url", "badurl.com"])
        #expect(!attempt.started && attempt.log.contains("publicServerURL should be a valid HTTPS URL starting with https://"), "\(attempt.log)")
    }
}
