import Foundation
import RoostCore
import Testing

/// `/installations` and `/classes/_Installation` (REST guide "Installations"; the ObjC and Android
/// SDKs save their installation through `classes/_Installation`).
@Suite struct InstallationTests {
    @Test func clientsCreateReadAndUpdateButOnlyTheMasterListsAndDeletes() async throws {
        let server = try TestServer()
        let created = try await server.request("POST", "/installations", json: [
            "deviceType": "ios", "deviceToken": "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "channels": [""],
        ])
        #expect(created.status == 201, "\(created.text)")
        let id = try #require(created.json["objectId"]?.stringValue)
        #expect(created.headers["location"] == "\(server.baseURL)/classes/_Installation/\(id)")
        #expect(created.json["createdAt"] != nil)

        let fetched = try await server.request("GET", "/classes/_Installation/\(id)")
        #expect(fetched.json["deviceType"] == "ios")
        #expect(fetched.json["channels"] == [""])

        let updated = try await server.request("PUT", "/installations/\(id)", json: ["channels": ["Giants"], "badge": 3])
        #expect(updated.status == 200, "\(updated.text)")
        #expect(updated.json["updatedAt"] != nil)

        let list = try await server.request("GET", "/installations")
        #expect(list.status == 400)
        #expect(list.json == ["code": 119, "error": "Clients aren't allowed to perform the find operation on the installation collection."])
        let masterList = try await server.request("GET", "/installations", master: true, query: ["where": #"{"channels":"Giants"}"#])
        #expect(masterList.json["results"]?.arrayValue?.count == 1)

        let delete = try await server.request("DELETE", "/installations/\(id)")
        #expect(delete.json["code"] == 119)
        #expect(try await server.request("DELETE", "/classes/_Installation/\(id)", master: true).status == 200)
    }

    @Test func aCreateNeedsAnIdAndADeviceType() async throws {
        let server = try TestServer()
        let noId = try await server.request("POST", "/installations", json: ["deviceType": "android"])
        #expect(noId.json == ["code": 135, "error": "at least one ID field (deviceToken, installationId) must be specified in this operation"])
        let noType = try await server.request("POST", "/classes/_Installation", json: ["installationId": "a7b1c2d3-0000-4000-8000-000000000001"])
        #expect(noType.json == ["code": 135, "error": "deviceType must be specified in this operation"])
    }

    @Test func theSameInstallationIdUpdatesTheStoredInstallation() async throws {
        let server = try TestServer()
        let installationId = "A7B1C2D3-0000-4000-8000-000000000002"
        // The id may come from the header, as the SDKs send it; it is stored lowercased.
        let first = try await server.request("POST", "/installations", json: ["deviceType": "android", "appVersion": "1.0"],
                                             headers: ["X-Parse-Installation-Id": installationId])
        #expect(first.status == 201)
        let id = try #require(first.json["objectId"]?.stringValue)
        let again = try await server.request("POST", "/installations", json: [
            "deviceType": "android", "installationId": .string(installationId), "appVersion": "1.1",
        ])
        #expect(again.status == 200, "\(again.text)")
        #expect(again.json["updatedAt"] != nil)
        let stored = try await server.request("GET", "/installations/\(id)")
        #expect(stored.json["installationId"] == .string(installationId.lowercased()))
        #expect(stored.json["appVersion"] == "1.1")
        let all = try await server.request("GET", "/installations", master: true, query: ["count": "1", "limit": "0"])
        #expect(all.json["count"] == 1)

        let changeType = try await server.request("PUT", "/installations/\(id)", json: ["deviceType": "ios"])
        #expect(changeType.json == ["code": 136, "error": "deviceType may not be changed in this operation"])
        let changeId = try await server.request("PUT", "/installations/\(id)", json: ["installationId": "other"])
        #expect(changeId.json["code"] == 136)

        // An installation saved by deviceToken alone may be given an installationId later.
        let byToken = try await server.request("POST", "/installations", json: ["deviceType": "ios", "deviceToken": "abc123"])
        let tokenId = try #require(byToken.json["objectId"]?.stringValue)
        let named = try await server.request("PUT", "/installations/\(tokenId)", json: ["installationId": "b7b1c2d3-0000-4000-8000-000000000003"])
        #expect(named.status == 200, "\(named.text)")
    }
}
