import Foundation
import RoostCore
import Testing

/// Parse Server's spec/ParseInstallation.spec.js over REST. The spec writes with `rest.create`/`rest.update`
/// as an unauthenticated client and reads the database directly; here the writes are `POST`/`PUT
/// /installations` without keys and the reads are master-key queries.
@Suite struct ParseInstallationSpecTests {
    private let installId = "12345678-abcd-abcd-abcd-123456789abc"
    private let id1 = "11111111-abcd-abcd-abcd-123456789abc", id2 = "22222222-abcd-abcd-abcd-123456789abc"
    private let token = "11433856eed2f1285fb3aa11136718c1198ed5647875096952c66bf8cb976306"
    private let token2 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

    /// The stored installations, as the master key finds them.
    private func stored(_ api: RecordingServer, where constraint: JSON = [:]) async throws -> [JSON] {
        let response = try await api.send("GET", "/installations", master: true, query: ["where": constraint.jsonText])
        return response.json["results"]?.arrayValue ?? []
    }

    @discardableResult
    private func create(_ api: RecordingServer, _ body: JSON, headers: [String: String] = [:],
                        sourceLocation: SourceLocation = #_sourceLocation) async throws -> TestResponse {
        let response = try await api.send("POST", "/installations", json: body, headers: headers)
        #expect(response.status == 201 || response.status == 200, "\(response.text)", sourceLocation: sourceLocation)
        return response
    }

    /// A fresh server per scenario: the spec starts each case from an empty database.
    private func fresh() throws -> RecordingServer { try RecordingServer() }

    // spec: ParseInstallation.spec.js: creates an android installation with ids
    // spec: ParseInstallation.spec.js: creates an ios installation with ids
    // spec: ParseInstallation.spec.js: creates an embedded installation with ids
    // spec: ParseInstallation.spec.js: creates an android installation with all fields
    // spec: ParseInstallation.spec.js: creates an ios installation with all fields
    // spec: ParseInstallation.spec.js: should properly fail queying installations
    // spec: ParseInstallation.spec.js: should properly queying installations with masterKey
    // spec: ParseInstallation.spec.js: fails with missing ids
    // spec: ParseInstallation.spec.js: fails for android with missing type
    // spec: ParseInstallation.spec.js: creates an object with custom fields
    // spec: ParseInstallation.spec.js: allows you to get your own installation (regression test for #1718)
    @Test func creating() async throws {
        let api = try fresh()
        for (body, key, value) in [
            (["installationId": .string(installId), "deviceType": "android"], "installationId", installId),
            (["deviceToken": .string(token), "deviceType": "ios"], "deviceToken", token),
            (["installationId": .string(id1), "deviceType": "embedded"], "installationId", id1),
            (["installationId": .string(id2), "deviceType": "android", "channels": ["foo", "bar"]], "installationId", id2),
            (["deviceToken": .string(token2), "deviceType": "ios", "channels": ["foo", "bar"], "custom": "allowed"], "deviceToken", token2),
        ] as [(JSON, String, String)] {
            let created = try await create(api, body)
            let found = try await stored(api, where: .object([key: .string(value)]))
            #expect(found.count == 1)
            #expect(found.first?["deviceType"] == body["deviceType"])
            if let channels = body["channels"] { #expect(found.first?["channels"] == channels) }
            if body["custom"] != nil { #expect(found.first?["custom"] == "allowed") }
            // Anyone may get an installation by its objectId.
            let id = try #require(created.json["objectId"]?.stringValue)
            #expect(try await api.send("GET", "/installations/\(id)").json["objectId"] == .string(id))
        }
        expectError(try await api.send("GET", "/installations"), 119,
                    "Clients aren't allowed to perform the find operation on the installation collection.")
        #expect(try await stored(api).count == 5)

        expectError(try await api.send("POST", "/installations", json: ["deviceType": "android", "channels": ["foo", "bar"]]), 135)
        expectError(try await api.send("POST", "/installations", json: ["installationId": "99999999-abcd-abcd-abcd-123456789abc",
                                                                        "channels": ["foo", "bar"]]), 135)
        #expect(try await stored(api).count == 5)
    }

    // spec: ParseInstallation.spec.js: merging when installationId already exists
    // spec: ParseInstallation.spec.js: merging when two objects both only have one id
    // spec: ParseInstallation.spec.js: ios merge existing same token no installation id
    @Test func mergingOnCreate() async throws {
        do {
            let api = try fresh()
            try await create(api, ["deviceToken": .string(token), "deviceType": "ios", "installationId": .string(id1), "channels": ["foo", "bar"]])
            let first = try #require(try await stored(api).first)
            try await create(api, ["deviceType": "ios", "installationId": .string(id1), "foo": "bar"])
            let all = try await stored(api)
            #expect(all.count == 1)
            #expect(all.first?["objectId"] == first["objectId"])
            #expect(all.first?["channels"]?.arrayValue?.count == 2)
            #expect(all.first?["foo"] == "bar")
        }
        do {
            let api = try fresh()
            try await create(api, ["installationId": .string(installId), "deviceType": "ios"])
            try await create(api, ["deviceToken": .string(token2), "deviceType": "ios"])
            #expect(try await stored(api).count == 2)
            let tokenOnly = try #require(try await stored(api, where: ["installationId": ["$exists": false]]).first)
            try await create(api, ["deviceToken": .string(token2), "installationId": .string(installId), "deviceType": "ios"])
            let all = try await stored(api)
            #expect(all.count == 1)
            #expect(all.first?["objectId"] == tokenOnly["objectId"])
        }
        do {
            let api = try fresh()
            try await create(api, ["deviceToken": .string(token2), "deviceType": "ios"])
            try await create(api, ["installationId": .string(installId), "deviceToken": .string(token2), "deviceType": "ios"])
            let all = try await stored(api)
            #expect(all.count == 1)
            #expect(all.first?["deviceToken"] == .string(token2))
            #expect(all.first?["installationId"] == .string(installId))
        }
    }

    // spec: ParseInstallation.spec.js: updating with new channels
    // spec: ParseInstallation.spec.js: update android fails with new installation id
    // spec: ParseInstallation.spec.js: update ios fails with new deviceToken and no installationId
    // spec: ParseInstallation.spec.js: update ios updates device token
    // spec: ParseInstallation.spec.js: update fails to change deviceType
    // spec: ParseInstallation.spec.js: update android with custom field
    // spec: ParseInstallation.spec.js: update ios token and channels
    // spec: ParseInstallation.spec.js: allows you to update installation with masterKey
    // spec: ParseInstallation.spec.js: should properly handle installation save #2780
    // spec: ParseInstallation.spec.js: should properly reject updating installationId
    @Test func updating() async throws {
        let api = try fresh()
        func make(_ body: JSON) async throws -> String {
            try #require(try await create(api, body).json["objectId"]?.stringValue)
        }
        func put(_ id: String, _ body: JSON, master: Bool = false) async throws -> TestResponse {
            try await api.send("PUT", "/installations/\(id)", json: body, master: master)
        }
        func fetched(_ id: String) async throws -> JSON { try await api.send("GET", "/installations/\(id)", master: true).json }

        let android = try await make(["installationId": "10000000-abcd-abcd-abcd-123456789abc", "deviceType": "android", "channels": ["foo", "bar"]])
        #expect(try await put(android, ["channels": ["baz"]]).status == 200)
        #expect(try await fetched(android)["channels"] == ["baz"])
        expectError(try await put(android, ["installationId": "87654321-abcd-abcd-abcd-123456789abc"]), 136)
        expectError(try await put(android, ["deviceType": "ios"]), 136)
        #expect(try await put(android, ["custom": "allowed"]).status == 200)
        #expect(try await fetched(android)["custom"] == "allowed")

        let ios = try await make(["deviceToken": .string(token), "deviceType": "ios", "channels": ["foo", "bar"]])
        expectError(try await put(ios, ["deviceToken": "91433856eed2f1285fb3aa11136718c1198ed5647875096952c66bf8cb976306"]), 136)

        let both = try await make(["installationId": "20000000-abcd-abcd-abcd-123456789abc", "deviceType": "ios",
                                   "deviceToken": "21433856eed2f1285fb3aa11136718c1198ed5647875096952c66bf8cb976306"])
        let newToken = "31433856eed2f1285fb3aa11136718c1198ed5647875096952c66bf8cb976306"
        #expect(try await put(both, ["installationId": "20000000-abcd-abcd-abcd-123456789abc", "deviceToken": .string(newToken),
                                     "deviceType": "ios"]).status == 200)
        #expect(try await fetched(both)["deviceToken"] == .string(newToken))

        let tokenAndChannels = try await make(["installationId": "30000000-abcd-abcd-abcd-123456789abc", "deviceType": "ios"])
        #expect(try await put(tokenAndChannels, ["deviceToken": .string(token2), "channels": []]).status == 200)
        let updated = try await fetched(tokenAndChannels)
        #expect(updated["installationId"] == "30000000-abcd-abcd-abcd-123456789abc")
        #expect(updated["deviceToken"] == .string(token2))
        #expect(updated["channels"] == [])

        #expect(try await put(android, ["customField": "custom value"], master: true).status == 200)
        #expect(try await fetched(android)["customField"] == "custom value")
        #expect(try await put(android, ["key": "value"], master: true).status == 200)
        let refused = try await put(android, ["key": "value", "installationId": .string(id2)], master: true)
        expectError(refused, 136, "installationId may not be changed in this operation")
    }

    // spec: ParseInstallation.spec.js: update android device token with duplicate device token
    // spec: ParseInstallation.spec.js: update ios device token with duplicate device token
    // spec: ParseInstallation.spec.js: update ios linking two existing objects
    // spec: ParseInstallation.spec.js: update is linking two existing objects w/ increment
    // spec: ParseInstallation.spec.js: update is linking two existing with installation id
    // spec: ParseInstallation.spec.js: update is linking two existing with installation id w/ op
    @Test func linkingOnUpdate() async throws {
        for deviceType in ["android", "ios"] {
            let api = try fresh()
            try await create(api, ["installationId": .string(id1), "deviceToken": .string(token2), "deviceType": .string(deviceType)])
            let second = try #require(try await create(api, ["installationId": .string(id2), "deviceType": .string(deviceType)])
                .json["objectId"]?.stringValue)
            let first = try #require(try await stored(api, where: ["installationId": .string(id1)]).first?["objectId"]?.stringValue)
            var body: [String: JSON] = ["deviceToken": .string(token2)]
            if deviceType == "ios" { body["installationId"] = .string(id2) } else { body["objectId"] = .string(second) }
            #expect(try await api.send("PUT", "/installations/\(second)", json: .object(body)).status == 200)
            // The device token moved: the installation that held it is gone.
            #expect(try await stored(api, where: ["objectId": .string(first)]).isEmpty, "\(deviceType)")
        }
        for (updateInstallation, increment) in [(false, false), (false, true), (true, false), (true, true)] {
            let api = try fresh()
            let installObj = try #require(try await create(api, ["installationId": .string(installId), "deviceType": "ios"])
                .json["objectId"]?.stringValue)
            let tokenObj = try #require(try await create(api, ["deviceToken": .string(token2), "deviceType": "ios"]).json["objectId"]?.stringValue)
            var body: [String: JSON] = ["installationId": .string(installId), "deviceToken": .string(token2), "deviceType": "ios"]
            if increment { body["score"] = ["__op": "Increment", "amount": 1] }
            // Linking through the token-only object, or through the one with the installation id.
            let target = updateInstallation ? installObj : tokenObj
            #expect(try await api.send("PUT", "/installations/\(target)", json: .object(body)).status == 200)
            let remaining = try await stored(api)
            #expect(remaining.count == 1, "\(updateInstallation) \(increment)")
            #expect(remaining.first?["installationId"] == .string(installId))
            #expect(remaining.first?["deviceToken"] == .string(token2))
            if increment { #expect(remaining.first?["score"] == 1) }
        }
    }

    // spec: ParseInstallation.spec.js: allows you to update installation from header (#2090)
    @Test func updatingFromTheInstallationHeader() async throws {
        let api = try fresh()
        try await create(api, ["installationId": .string(installId), "deviceType": "android"])
        let response = try await api.send("POST", "/classes/_Installation", json: ["date": date("2026-11-25T10:00:00.000Z")],
                                          headers: ["X-Parse-Installation-Id": installId])
        #expect(response.status == 200, "\(response.text)")
        #expect(response.json["updatedAt"] != nil)
        #expect(try await stored(api).count == 1)
    }
}
