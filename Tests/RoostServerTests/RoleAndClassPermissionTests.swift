import Foundation
import RoostCore
import Testing

/// Roles (direct and inherited membership) and class-level permissions, end to end.
@Suite struct RoleAndClassPermissionTests {
    func pointer(_ className: String, _ id: String) -> JSON { WireValue.pointer(className, id) }

    func addRelation(_ key: String, _ pointers: [JSON]) -> JSON { ["__op": "AddRelation", "objects": .array(pointers)] }

    @Test func roleMembersDirectAndInheritedReadWhatTheRoleMayRead() async throws {
        let api = try RecordingServer()
        let member = try await api.signUp("member", "pw")
        let inherited = try await api.signUp("inherited", "pw")
        let outsider = try await api.signUp("outsider", "pw")

        // Moderators ⊂ Administrators: moderators' users hold Administrators too.
        let moderators = try await api.send("POST", "/roles", json: [
            "name": "Moderators", "ACL": ["*": ["read": true]], "users": addRelation("users", [pointer("_User", inherited.id)]),
        ], master: true)
        #expect(moderators.status == 201)
        let moderatorsId = try #require(moderators.json["objectId"]?.stringValue)
        let administrators = try await api.send("POST", "/roles", json: [
            "name": "Administrators", "ACL": ["*": ["read": true]],
            "users": addRelation("users", [pointer("_User", member.id)]),
            "roles": addRelation("roles", [pointer("_Role", moderatorsId)]),
        ], master: true)
        let administratorsId = try #require(administrators.json["objectId"]?.stringValue)
        // A cycle (Administrators inside Moderators too) must not hang or widen anything.
        let cycle = try await api.send("PUT", "/roles/\(moderatorsId)", json: ["roles": addRelation("roles", [pointer("_Role", administratorsId)])],
                                       master: true)
        #expect(cycle.status == 200)

        let secret = try await api.send("POST", "/classes/Secret", json: ["text": "for admins", "ACL": ["role:Administrators": ["read": true]]])
        let secretId = try #require(secret.json["objectId"]?.stringValue)
        for (account, visible) in [(member, true), (inherited, true), (outsider, false)] {
            let get = try await api.send("GET", "/classes/Secret/\(secretId)", token: account.token)
            #expect(get.status == (visible ? 200 : 404))
            let find = try await api.send("GET", "/classes/Secret", token: account.token)
            #expect(find.json["results"]?.arrayValue?.count == (visible ? 1 : 0))
        }
        #expect(try await api.send("GET", "/classes/Secret/\(secretId)").status == 404)

        // Duplicate names are refused; a role needs a name and an ACL.
        expectError(try await api.send("POST", "/roles", json: ["name": "Moderators", "ACL": [:]], master: true), 137)
        expectError(try await api.send("POST", "/roles", json: ["name": "NoACL"], master: true), 111)
        expectError(try await api.send("POST", "/roles", json: ["ACL": [:]], master: true), 111)

        // Leaving the role applies to the next request.
        let removal = try await api.send("PUT", "/roles/\(administratorsId)", json: [
            "users": ["__op": "RemoveRelation", "objects": [pointer("_User", member.id)]],
        ], master: true)
        #expect(removal.status == 200)
        #expect(try await api.send("GET", "/classes/Secret/\(secretId)", token: member.token).status == 404)
        #expect(try await api.send("GET", "/classes/Secret/\(secretId)", token: inherited.token).status == 200)
    }

    @Test func classLevelPermissionsGateEachOperation() async throws {
        let api = try RecordingServer()
        let owner = try await api.signUp("owner", "pw")
        let other = try await api.signUp("other", "pw")
        let created = try await api.send("POST", "/classes/Doc", json: ["title": "t", "owner": pointer("_User", owner.id), "secret": "s"])
        let docId = try #require(created.json["objectId"]?.stringValue)
        let update = try await api.send("PUT", "/schemas/Doc", json: ["classLevelPermissions": [
            "find": ["requiresAuthentication": true], "count": ["requiresAuthentication": true],
            "get": ["pointerFields": ["owner"]], "create": ["\(owner.id)": true],
            "update": ["pointerFields": ["owner"]], "delete": [:], "addField": [:],
            "protectedFields": ["*": ["secret"]],
        ]], master: true)
        #expect(update.status == 200)

        // find: authenticated users only; the protected field is hidden from them, not from the master key.
        expectError(try await api.send("GET", "/classes/Doc"), 101, "Permission denied, user needs to be authenticated.")
        let found = try await api.send("GET", "/classes/Doc", token: other.token)
        #expect(found.json["results"]?.arrayValue?.count == 1)
        #expect(found.json["results"]?.arrayValue?.first?["secret"] == nil)
        #expect(try await api.send("GET", "/classes/Doc", master: true).json["results"]?.arrayValue?.first?["secret"] == "s")

        // get and update: only the user the `owner` pointer names.
        #expect(try await api.send("GET", "/classes/Doc/\(docId)", token: owner.token).status == 200)
        #expect(try await api.send("GET", "/classes/Doc/\(docId)", token: other.token).status == 404)
        #expect(try await api.send("PUT", "/classes/Doc/\(docId)", json: ["title": "mine"], token: owner.token).status == 200)
        #expect(try await api.send("PUT", "/classes/Doc/\(docId)", json: ["title": "theirs"], token: other.token).status == 404)

        // create: one user only; addField: nobody (master aside); delete: master only.
        expectError(try await api.send("POST", "/classes/Doc", json: ["title": "x"], token: other.token), 119)
        #expect(try await api.send("POST", "/classes/Doc", json: ["title": "x"], token: owner.token).status == 201)
        expectError(try await api.send("POST", "/classes/Doc", json: ["title": "x", "brandNew": 1], token: owner.token), 119)
        expectError(try await api.send("DELETE", "/classes/Doc/\(docId)", token: owner.token), 119)
        #expect(try await api.send("DELETE", "/classes/Doc/\(docId)", master: true).status == 200)
    }

    @Test func subqueriesAndIncludesCannotReachPastClassPermissions() async throws {
        let api = try RecordingServer()
        let user = try await api.signUp("viewer", "pw")
        let team = try await api.send("POST", "/classes/Team", json: ["city": "Paris"])
        let teamId = try #require(team.json["objectId"]?.stringValue)
        _ = try await api.send("POST", "/classes/Player", json: ["team": pointer("Team", teamId)])
        _ = try await api.send("PUT", "/schemas/Team", json: ["classLevelPermissions": ["find": [:], "get": [:]]], master: true)
        let subquery = try await api.send("GET", "/classes/Player", token: user.token, query: [
            "where": #"{"team":{"$inQuery":{"className":"Team","where":{"city":"Paris"}}}}"#,
        ])
        expectError(subquery, 119)
        let included = try await api.send("GET", "/classes/Player", token: user.token, query: ["include": "team"])
        #expect(included.json["results"]?.arrayValue?.first?["team"] == nil)  // Not readable: left out, as Parse does.
    }
}
