import Foundation
import RoostCore
import Testing

/// Parse Server's spec/ParseGlobalConfig.spec.js: `GET/PUT /config`, from the spec's fixture
/// (`companies`, `counter`, and `internalParam` readable by the master key only).
@Suite struct ParseGlobalConfigSpecTests {
    private static func serverWithFixture() async throws -> TestServer {
        let server = try TestServer()
        let stored = try await server.request("PUT", "/config", json: [
            "params": ["companies": ["US", "DK"], "counter": 20, "internalParam": "internal"],
            "masterKeyOnly": ["internalParam": true],
        ], master: true)
        guard stored.status == 200 else { throw TestServerError.unexpected(stored.status, stored.text) }
        return server
    }

    private static func params(_ server: TestServer, master: Bool = true) async throws -> JSON {
        let response = try await server.request("GET", "/config", master: master)
        #expect(response.status == 200)
        return response.json["params"] ?? .null
    }

    private static func put(_ server: TestServer, _ params: JSON) async throws -> TestResponse {
        try await server.request("PUT", "/config", json: ["params": params], master: true)
    }

    // spec: ParseGlobalConfig.spec.js: can be retrieved
    // spec: ParseGlobalConfig.spec.js: internal parameter can be retrieved with master key
    // spec: ParseGlobalConfig.spec.js: internal parameter cannot be retrieved without master key
    // spec: ParseGlobalConfig.spec.js: can be updated when a master key exists
    // spec: ParseGlobalConfig.spec.js: fail to update if master key is missing
    // spec: ParseGlobalConfig.spec.js: failed getting config when it is missing
    @Test func readAndUpdate() async throws {
        let fresh = try TestServer()
        let missing = try await fresh.request("GET", "/config", master: true)
        #expect(missing.status == 200)
        #expect(missing.json["params"] == [:])

        let server = try await Self.serverWithFixture()
        let master = try await Self.params(server)
        #expect(master["companies"] == ["US", "DK"])
        #expect(master["internalParam"] == "internal")
        let client = try await server.request("GET", "/config", headers: ["X-Parse-REST-API-Key": "rest"])
        #expect(client.status == 200)
        #expect(client.json["params"]?["internalParam"] == nil)
        #expect(client.json["params"]?["companies"] == ["US", "DK"])

        let updated = try await Self.put(server, ["companies": ["US", "DK", "SE"]])
        #expect(updated.status == 200)
        #expect(updated.json == ["result": true])
        #expect(try await Self.params(server)["companies"] == ["US", "DK", "SE"])

        let refused = try await server.request("PUT", "/config", json: ["params": ["companies": []]],
                                               headers: ["X-Parse-REST-API-Key": "rest"])
        #expect(refused.status == 403)
        #expect(refused.json["error"] == "unauthorized: master key is required")
        #expect(try await Self.params(server)["companies"] == ["US", "DK", "SE"])
    }

    // spec: ParseGlobalConfig.spec.js: can addUnique
    // spec: ParseGlobalConfig.spec.js: can add to array
    // spec: ParseGlobalConfig.spec.js: can remove from array
    // spec: ParseGlobalConfig.spec.js: can increment
    @Test func operationsApplyToTheStoredParameter() async throws {
        let server = try await Self.serverWithFixture()
        #expect(try await Self.put(server, ["counter": ["__op": "Increment", "amount": 49]]).status == 200)
        #expect(try await Self.params(server)["counter"] == 69)
        #expect(try await Self.put(server, ["companies": ["__op": "AddUnique", "objects": ["PA", "RS", "E"]]]).status == 200)
        #expect(try await Self.params(server)["companies"] == ["US", "DK", "PA", "RS", "E"])

        let other = try await Self.serverWithFixture()
        _ = try await Self.put(other, ["companies": ["__op": "Add", "objects": ["PA"]]])
        #expect(try await Self.params(other)["companies"] == ["US", "DK", "PA"])
        _ = try await Self.put(other, ["companies": ["__op": "Remove", "objects": ["US", "PA"]]])
        #expect(try await Self.params(other)["companies"] == ["DK"])
        // A parameter not yet stored starts from nothing, as a field does.
        _ = try await Self.put(other, ["visits": ["__op": "Increment", "amount": 2], "tags": ["__op": "Add", "objects": ["a"]]])
        #expect(try await Self.params(other)["visits"] == 2)
        #expect(try await Self.params(other)["tags"] == ["a"])
        // An operation that does not fit the stored value is refused and changes nothing.
        expectError(try await Self.put(other, ["companies": ["__op": "Increment", "amount": 1]]), 111)
        expectError(try await Self.put(other, ["counter": ["__op": "Unknown"]]), 108)
        #expect(try await Self.params(other)["companies"] == ["DK"])
        #expect(try await Self.params(other)["counter"] == 20)
    }

    // spec: ParseGlobalConfig.spec.js: can add and retrive files
    // spec: ParseGlobalConfig.spec.js: can add and retrive Geopoints
    // spec: ParseGlobalConfig.spec.js: properly handles delete op
    @Test func typedValuesAndDeletes() async throws {
        let server = try await Self.serverWithFixture()
        let file: JSON = ["__type": "File", "name": "name", "url": "http://url"]
        let point: JSON = ["__type": "GeoPoint", "latitude": 10, "longitude": -20]
        #expect(try await Self.put(server, ["file": file, "point": point]).json == ["result": true])
        let stored = try await Self.params(server, master: false)
        #expect(stored["file"] == file)
        #expect(stored["point"] == point)

        let deleted = try await Self.put(server, [
            "companies": ["__op": "Delete"], "counter": ["__op": "Delete"], "internalParam": ["__op": "Delete"],
            "file": ["__op": "Delete"], "point": ["__op": "Delete"], "foo": "bar",
        ])
        #expect(deleted.json == ["result": true])
        #expect(try await Self.params(server) == ["foo": "bar"])
    }

    /// Parse Dashboard deletes a parameter with its flag: `masterKeyOnly: {p: {__op: "Delete"}}` (`ConfigStore.js`),
    /// which Parse applies as an operation; a flag left out is `false`, also for a deleted parameter.
    @Test func aDeletedFlagLeavesMasterKeyOnly() async throws {
        let server = try await Self.serverWithFixture()
        let deleted = try await server.request("PUT", "/config", json: [
            "params": ["internalParam": ["__op": "Delete"], "counter": ["__op": "Delete"]],
            "masterKeyOnly": ["internalParam": ["__op": "Delete"]],
        ], master: true)
        #expect(deleted.json == ["result": true])
        let config = try await server.request("GET", "/config", master: true)
        #expect(config.json == ["params": ["companies": ["US", "DK"]], "masterKeyOnly": ["companies": false, "counter": false]], "\(config.text)")
    }
}
