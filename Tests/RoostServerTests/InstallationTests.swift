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

    /// Parse's `handleInstallation`: an iOS token is one device, whichever installation holds it.
    @Test func aDeviceTokenNamesOneInstallationAsParseKeepsThem() async throws {
        let server = try TestServer()
        let token = "ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789"
        func installations() async throws -> [JSON] {
            try await server.request("GET", "/installations", master: true, query: ["order": "createdAt"]).json["results"]?.arrayValue ?? []
        }

        // The REST guide's iOS registration, twice: one record, its 64-character token lowercased.
        let first = try await server.request("POST", "/installations", json: ["deviceType": "ios", "deviceToken": .string(token), "channels": [""]])
        #expect(first.status == 201, "\(first.text)")
        let id = try #require(first.json["objectId"]?.stringValue)
        let again = try await server.request("POST", "/installations", json: ["deviceType": "ios", "deviceToken": .string(token.lowercased()), "channels": ["Giants"]])
        #expect(again.status == 200, "\(again.text)")
        #expect(again.json["updatedAt"] != nil && again.json["objectId"] == nil)
        var all = try await installations()
        #expect(all.count == 1)
        #expect(all.first?["deviceToken"] == .string(token.lowercased()))
        #expect(all.first?["channels"] == ["Giants"])

        // The app gains an installationId: the token's record takes it.
        let named = try await server.request("POST", "/installations", json: [
            "deviceType": "ios", "deviceToken": .string(token), "installationId": "install-a",
        ])
        #expect(named.status == 200, "\(named.text)")
        all = try await installations()
        #expect(all.count == 1 && all.first?["installationId"] == "install-a" && all.first?["objectId"] == .string(id))

        // A reinstall (new installationId, same token) replaces the old record.
        let reinstall = try await server.request("POST", "/installations", json: [
            "deviceType": "ios", "deviceToken": .string(token), "installationId": "install-b",
        ])
        #expect(reinstall.status == 201, "\(reinstall.text)")
        all = try await installations()
        #expect(all.count == 1 && all.first?["installationId"] == "install-b")

        // The one merge: a record known by id only absorbs into the record known by token only.
        let byId = try await server.request("POST", "/installations", json: ["deviceType": "ios", "installationId": "install-c"])
        let byToken = try await server.request("POST", "/installations", json: ["deviceType": "ios", "deviceToken": "token-d"])
        let tokenRecord = try #require(byToken.json["objectId"]?.stringValue)
        #expect(byId.status == 201 && byToken.status == 201)
        let merged = try await server.request("POST", "/installations", json: [
            "deviceType": "ios", "installationId": "install-c", "deviceToken": "token-d", "badge": 2,
        ])
        #expect(merged.status == 200, "\(merged.text)")
        all = try await installations()
        #expect(all.count == 2)
        let survivor = try #require(all.first { $0["deviceToken"] == "token-d" })
        #expect(survivor["objectId"] == .string(tokenRecord) && survivor["installationId"] == "install-c" && survivor["badge"] == 2)

        // A token shared by two installations cannot be saved without saying which.
        let other = try await server.request("POST", "/installations", json: ["deviceType": "ios", "installationId": "install-e"])
        let otherId = try #require(other.json["objectId"]?.stringValue)
        #expect(try await server.request("PUT", "/installations/\(otherId)", json: ["deviceToken": "token-d"]).status == 200)
        let ambiguous = try await server.request("POST", "/installations", json: ["deviceType": "ios", "deviceToken": "token-d"])
        #expect(ambiguous.json == ["code": 132, "error": "Must specify installationId when deviceToken matches multiple Installation objects"])

        // Updates: Parse's sanity checks.
        let missing = try await server.request("PUT", "/installations/nosuchid00", json: ["deviceType": "ios"])
        #expect(missing.status == 404 && missing.json == ["code": 101, "error": "Object not found for update."])
        let retoken = try await server.request("POST", "/installations", json: ["deviceType": "android", "deviceToken": "token-f"])
        let retokenId = try #require(retoken.json["objectId"]?.stringValue)
        let changed = try await server.request("PUT", "/installations/\(retokenId)", json: ["deviceToken": "token-g"])
        #expect(changed.json == ["code": 136, "error": "deviceToken may not be changed in this operation"])
        // An operation on an identifying field is refused like a new value.
        let deleteType = try await server.request("PUT", "/installations/\(retokenId)", json: ["deviceType": ["__op": "Delete"]])
        #expect(deleteType.json == ["code": 136, "error": "deviceType may not be changed in this operation"])
        // Listing installations needs the master key, also through a relation query's redirect.
        let owner = try await server.request("POST", "/classes/Phone", json: [
            "devices": ["__op": "AddRelation", "objects": [["__type": "Pointer", "className": "_Installation", "objectId": .string(retokenId)]]],
        ])
        #expect(owner.status == 201, "\(owner.text)")
        let phone = try #require(owner.json["objectId"]?.stringValue)
        let relatedTo = #"{"$relatedTo":{"object":{"__type":"Pointer","className":"Phone","objectId":""# + phone + #""},"key":"devices"}}"#
        let redirected = try await server.request("GET", "/classes/Phone", query: ["redirectClassNameForKey": "devices", "where": relatedTo])
        #expect(redirected.json["code"] == 119)
        let asMaster = try await server.request("GET", "/classes/Phone", master: true,
                                                query: ["redirectClassNameForKey": "devices", "where": relatedTo])
        #expect(asMaster.json["results"]?.arrayValue?.map { $0["objectId"] } == [.string(retokenId)], "\(asMaster.text)")

        // The REST guide's "Updating Installations": the same token again, new channels.
        let guideUpdate = try await server.request("PUT", "/installations/\(retokenId)", json: [
            "deviceType": "android", "deviceToken": "token-f", "channels": ["", "foo"],
        ])
        #expect(guideUpdate.status == 200, "\(guideUpdate.text)")
        #expect(try await server.request("GET", "/installations/\(retokenId)").json["channels"] == ["", "foo"])
    }
}
