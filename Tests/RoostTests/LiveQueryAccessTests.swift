import Foundation
import Roost
import RoostCore
import Testing

/// Live events see only what the subscriber may read: through a role, with protected fields hidden, and not at all
/// once the session is revoked elsewhere (the client then forgets it, as for REST, and carries on without it).
@Suite struct LiveQueryAccessTests {
    typealias Recorder = LiveQueryTests.Recorder

    @Test func aRolesMembersSeeItsObjectsWithProtectedFieldsHidden() async throws {
        let server = try ServerProcess()
        var permissions: [String: JSON] = [:]
        for operation in ["find", "count", "get", "create", "update", "delete", "addField"] { permissions[operation] = ["*": true] }
        permissions["protectedFields"] = ["*": ["salary"]]
        let schema = try await server.masterRequest("POST", "schemas/Staff", json: [
            "className": "Staff", "fields": ["name": ["type": "String"], "salary": ["type": "Number"]],
            "classLevelPermissions": .object(permissions),
        ])
        #expect(schema["classLevelPermissions"]?["protectedFields"] != nil, "\(schema)")
        let member = try server.makeClient(), outsider = try server.makeClient(), writer = try server.makeClient()
        let memberUser = try await member.signUp(username: "eve", password: "eve's passphrase")
        try await outsider.signUp(username: "fay", password: "fay's passphrase")
        let memberId = try #require(memberUser.objectId)
        _ = try await server.masterRequest("POST", "roles", json: [
            "name": "managers", "ACL": ["*": ["read": true]],
            "users": ["__op": "AddRelation", "objects": [["__type": "Pointer", "className": "_User", "objectId": .string(memberId)]]],
        ])
        let seen = Recorder(member.query("Staff")), unseen = Recorder(outsider.query("Staff"))
        defer { seen.subscription.cancel(); unseen.subscription.cancel() }
        #expect(await seen.waitForSubscribed())
        #expect(await unseen.waitForSubscribed())

        let record = writer.object("Staff")
        record["name"] = "gus"
        record["salary"] = 100
        var acl = RoostACL()
        acl.setReadAccess(true, forRole: "managers")
        acl.publicWriteAccess = true
        record.acl = acl
        try await record.save()
        record["salary"] = 120
        try await record.save()

        let fetched = try await member.query("Staff").first()
        #expect(fetched?["name"] == "gus" && fetched?.value(forKey: "salary") == nil, "REST: \(fetched?.allFields ?? [:])")
        let events = await seen.waitForChanges(2)
        #expect(events.map(\.kind) == [.created, .updated])
        #expect(events.allSatisfy { $0.object?["name"] == "gus" && $0.object?.value(forKey: "salary") == nil }, "\(events.map { $0.object?.allFields ?? [:] })")
        try await Task.sleep(nanoseconds: 300_000_000)
        #expect(unseen.changes.isEmpty)  // Not in the role: nothing, not even the object's id.
    }

    @Test func aSessionRevokedElsewhereIsForgottenAndTheSubscriptionGoesOnWithoutIt() async throws {
        let server = try ServerProcess()
        let phone = try server.makeClient(), writer = try server.makeClient()
        let owner = try await phone.signUp(username: "hal", password: "hal's passphrase")
        let token = try #require(phone.currentUser?.sessionToken)
        let recorder = Recorder(phone.query("Memo"))
        defer { recorder.subscription.cancel() }
        #expect(await recorder.waitForSubscribed())

        let elsewhere = try server.makeClient()
        try await elsewhere.become(sessionToken: token)
        try await elsewhere.logOut()  // Ends the session the phone uses.
        let memo = writer.object("Memo")
        memo["text"] = "public"
        try await memo.save()  // The server finds the phone's session gone: 209 for its subscription.
        #expect(await recorder.waitForSubscribed(count: 2))  // Resubscribed without the session.
        #expect(phone.currentUser == nil)
        let secret = writer.object("Memo")
        secret["text"] = "hal's"
        secret.acl = RoostACL(owner: owner)
        try await secret.save()
        let open = writer.object("Memo")
        open["text"] = "public again"
        try await open.save()
        #expect(await recorder.wait { $0.contains { $0.object?["text"] == "public again" } })
        #expect(!recorder.changes.contains { $0.object?["text"] == "hal's" })
    }
}
