import Foundation
import RoostCore
import Testing

/// Parse Server's spec/rest.spec.js cases of `maintenanceKey` (`--maintenance-key`): a create sent with
/// `X-Parse-Maintenance-Key` keeps the `createdAt` and `updatedAt` it gives, as a migration needs.
@Suite struct MaintenanceKeySpecTests {
    private static let key = "testing"

    private static func server(_ extra: [String] = []) throws -> TestServer {
        try TestServer(arguments: ["--maintenance-key", key] + extra)
    }

    private static func create(_ server: TestServer, _ body: JSON, maintenance: Bool = true) async throws -> TestResponse {
        try await server.request("POST", "/classes/TestObject", json: body,
                                 headers: maintenance ? ["X-Parse-Maintenance-Key": key] : [:])
    }

    private static func date(_ iso: String) -> JSON { ["__type": "Date", "iso": .string(iso)] }

    // spec: rest.spec.js: allows createdAt
    // spec: rest.spec.js: allows createdAt and updatedAt
    // spec: rest.spec.js: allows createdAt, updatedAt, and additional field
    @Test func aCreateKeepsTheDatesItGives() async throws {
        let server = try Self.server()
        let onlyCreated = try await Self.create(server, ["createdAt": Self.date("2019-01-01T00:00:00.000Z")])
        #expect(onlyCreated.status == 201 && onlyCreated.json["createdAt"] == "2019-01-01T00:00:00.000Z", "\(onlyCreated.text)")
        let onlyCreatedId = try #require(onlyCreated.json["objectId"]?.stringValue)
        // Without an updatedAt, it is the createdAt given (Parse's default: both the same instant).
        #expect(try await server.fetch("TestObject", onlyCreatedId)["updatedAt"] == "2019-01-01T00:00:00.000Z")

        let both = try await Self.create(server, ["createdAt": Self.date("2019-01-01T00:00:00.000Z"),
                                                  "updatedAt": Self.date("2019-02-01T00:00:00.000Z"), "testing": 123])
        let id = try #require(both.json["objectId"]?.stringValue, "\(both.text)")
        let read = try await server.fetch("TestObject", id)  // Read back without any key.
        #expect(read["createdAt"] == "2019-01-01T00:00:00.000Z" && read["updatedAt"] == "2019-02-01T00:00:00.000Z", "\(read)")
        #expect(read["testing"] == 123)
        // A query ordered by the dates sees the stored ones.
        let ordered = try await server.request("GET", "/classes/TestObject", query: ["order": "updatedAt", "keys": "objectId"])
        #expect(ordered.json["results"]?.arrayValue?.compactMap { $0["objectId"]?.stringValue } == [onlyCreatedId, id], "\(ordered.text)")
    }

    // spec: rest.spec.js: cannot set updatedAt dated before createdAt
    // spec: rest.spec.js: cannot set updatedAt without createdAt
    // spec: rest.spec.js: handles bad types for createdAt and updatedAt
    @Test func datesThatCannotBeKept() async throws {
        let server = try Self.server()
        let backwards = try await Self.create(server, ["createdAt": Self.date("2019-01-01T00:00:00.000Z"),
                                                       "updatedAt": Self.date("2018-12-01T00:00:00.000Z")])
        expectParseError(backwards, 142, "updatedAt cannot occur before createdAt")

        let onlyUpdated = try await Self.create(server, ["updatedAt": Self.date("2018-12-01T00:00:00.000Z")])
        let id = try #require(onlyUpdated.json["objectId"]?.stringValue, "\(onlyUpdated.text)")
        #expect(try await server.fetch("TestObject", id)["updatedAt"] != "2018-12-01T00:00:00.000Z")

        let badTypes = try await Self.create(server, ["createdAt": 12345, "updatedAt": true])
        #expect(badTypes.json["code"] == 111, "\(badTypes.text)")
        #expect(try await server.results("TestObject").count == 1)  // Nothing stored by the refused ones.
    }

    // spec: rest.spec.js: cannot set createdAt or updatedAt without maintenance key
    @Test func withoutTheKeyTheDatesAreTheServers() async throws {
        let server = try Self.server()
        let given = ["createdAt": Self.date("2019-01-01T00:00:00.000Z"), "updatedAt": Self.date("2019-02-01T00:00:00.000Z")] as JSON
        for headers in [[:], ["X-Parse-Master-Key": TestServer.masterKey], ["X-Parse-Maintenance-Key": "wrong"]] {
            let created = try await server.request("POST", "/classes/TestObject", json: given, headers: headers)
            #expect(created.status == 201 && created.json["createdAt"] != "2019-01-01T00:00:00.000Z", "\(headers): \(created.text)")
            let id = try #require(created.json["objectId"]?.stringValue)
            #expect(try await server.fetch("TestObject", id)["updatedAt"] != "2019-02-01T00:00:00.000Z")
        }
    }

    // spec: rest.spec.js: should throw when masterKey and maintenanceKey are the same
    @Test func theKeyMustDifferFromTheMasterKey() throws {
        let attempt = try StartAttempt(["--master-key", "yolo", "--maintenance-key", "yolo"])
        #expect(!attempt.started && attempt.log.contains("masterKey and maintenanceKey should be different"), "\(attempt.log)")
    }

    /// The key reads and writes objects as the master key does (ACLs and class permissions do not hold it back), but
    /// is not the master key for its own routes, as Parse's `enforceMasterKeyAccess` checks `isMaster` only.
    @Test func objectsAsTheMasterKeyButNotItsRoutes() async throws {
        let server = try Self.server()
        let hidden = try await server.request("POST", "/classes/Secret", json: ["value": 1, "ACL": [:]], master: true)
        let id = try #require(hidden.json["objectId"]?.stringValue)
        let maintenance = ["X-Parse-Maintenance-Key": Self.key]
        #expect(try await server.request("GET", "/classes/Secret/\(id)", headers: maintenance).json["value"] == 1)
        let updated = try await server.request("PUT", "/classes/Secret/\(id)", json: ["value": 2], headers: maintenance)
        #expect(updated.status == 200, "\(updated.text)")
        #expect(try await server.request("GET", "/classes/Secret/\(id)", master: true).json["value"] == 2)
        for (method, path) in [("GET", "/schemas"), ("PUT", "/config")] {
            let refused = try await server.request(method, path, json: method == "PUT" ? ["params": ["a": 1]] : nil, headers: maintenance)
            #expect(refused.status == 403 && refused.json == ["error": "unauthorized: master key is required"], "\(path): \(refused.text)")
        }
    }

    /// From an address outside `--maintenance-key-ips`, the key counts for nothing and the refusal is logged, as Parse.
    @Test func fromOutsideItsAddressesTheKeyIsIgnored() async throws {
        let server = try Self.server(["--maintenance-key-ips", "10.0.0.1"])
        let created = try await Self.create(server, ["createdAt": Self.date("2019-01-01T00:00:00.000Z")])
        #expect(created.status == 201 && created.json["createdAt"] != "2019-01-01T00:00:00.000Z", "\(created.text)")
        let hidden = try await server.request("POST", "/classes/Secret", json: ["ACL": [:]], master: true)
        let id = try #require(hidden.json["objectId"]?.stringValue)
        let read = try await server.request("GET", "/classes/Secret/\(id)", headers: ["X-Parse-Maintenance-Key": Self.key])
        #expect(read.status == 404 && read.json == ["code": 101, "error": "Object not found."], "\(read.text)")
        #expect(try await server.logShows("Request using maintenance key rejected as the request IP address '127.0.0.1'"))
    }
}
