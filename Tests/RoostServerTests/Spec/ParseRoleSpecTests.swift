import Foundation
import RoostCore
import Testing

/// Parse Server's spec/ParseRole.spec.js over REST. The spec reads the roles a user holds from `Auth`
/// internals; here they show as what the user may read and write through `role:` ACL entries.
@Suite struct ParseRoleSpecTests {
    private func relation(_ op: String, _ pointers: [JSON]) -> JSON { ["__op": .string(op), "objects": .array(pointers)] }

    /// Creates a role with the master key; `users` and `roles` are added to its relations.
    private func role(_ api: RecordingServer, _ name: String, acl: JSON = [:], users: [Account] = [], roles: [String] = [])
        async throws -> String {
        var body: [String: JSON] = ["name": .string(name), "ACL": acl]
        if !users.isEmpty { body["users"] = relation("AddRelation", users.map { pointer("_User", $0.id) }) }
        if !roles.isEmpty { body["roles"] = relation("AddRelation", roles.map { pointer("_Role", $0) }) }
        let created = try await api.send("POST", "/roles", json: .object(body), master: true)
        guard created.status == 201, let id = created.json["objectId"]?.stringValue else {
            throw TestServerError.unexpected(created.status, created.text)
        }
        return id
    }

    /// The names of the roles whose `role:` ACL entry lets `token` read an object.
    private func rolesHeld(_ api: RecordingServer, _ names: [String], token: String) async throws -> [String] {
        var held: [String] = []
        for name in names {
            let id = try await api.server.create("Probe", ["ACL": .object(["role:\(name)": ["read": true]])])
            if try await api.send("GET", "/classes/Probe/\(id)", token: token).status == 200 { held.append(name) }
        }
        return held
    }

    /// The users in a role's `users` relation, as the SDK's `role.relation('users').query()` asks.
    private func members(_ api: RecordingServer, of roleId: String) async throws -> [String] {
        let response = try await api.send("GET", "/users", master: true, query: [
            "where": JSON.object(["$relatedTo": ["object": pointer("_Role", roleId), "key": "users"]]).jsonText,
        ])
        return (response.json["results"]?.arrayValue ?? []).compactMap { $0["username"]?.stringValue }.sorted()
    }

    // spec: ParseRole.spec.js: Do a bunch of basic role testing
    // spec: ParseRole.spec.js: should recursively load roles
    // spec: ParseRole.spec.js: should recursively load roles without config
    // spec: ParseRole.spec.js: should not recursively load the same role multiple times
    // spec: ParseRole.spec.js: Should properly resolve roles
    @Test func membershipAndInheritance() async throws {
        let api = try RecordingServer()
        let user = try await api.signUp("user", "password")
        let foos = try await role(api, "Foos", acl: ["*": ["read": true]], users: [user])
        let listed = try await api.send("GET", "/roles", master: true)
        #expect(listed.json["results"]?.arrayValue?.count == 1)
        #expect(try await members(api, of: foos) == ["user"])
        let objectId = try await api.server.create("TestObject", ["ACL": ["role:Foos": ["read": true, "write": true]]])
        #expect(try await api.send("GET", "/classes/TestObject", token: user.token).json["results"]?.arrayValue?.count == 1)
        #expect(try await api.send("PUT", "/classes/TestObject/\(objectId)", json: ["foo": "bar"], token: user.token).status == 200)
        expectError(try await api.send("PUT", "/classes/TestObject/\(objectId)", json: ["foo": "baz"]), 101)

        // A user of FooRole holds BarRole (FooRole is in its roles) and BazRole (BarRole is in its roles).
        let chained = try await api.signUp("chained", "password")
        let fooRole = try await role(api, "FooRole", users: [chained])
        let barRole = try await role(api, "BarRole", roles: [fooRole])
        _ = try await role(api, "BazRole", roles: [barRole])
        #expect(try await rolesHeld(api, ["FooRole", "BarRole", "BazRole", "Foos"], token: chained.token) == ["FooRole", "BarRole", "BazRole"])

        // Every role inside RootRole and inside the one before it: each is loaded once, the user holds all four.
        let looped = try await api.signUp("looped", "password")
        var ids: [String] = []
        for name in ["RootRole", "Foo2Role", "Bar2Role", "Baz2Role"] { ids.append(try await role(api, name, users: [looped])) }
        for (index, id) in ids.enumerated() {
            var added = id == ids[0] ? [] : [pointer("_Role", ids[0])]
            if index > 1 { added.append(pointer("_Role", ids[index - 1])) }
            if added.isEmpty { continue }
            #expect(try await api.send("PUT", "/roles/\(id)", json: ["roles": relation("AddRelation", added)], master: true).status == 200)
        }
        #expect(try await rolesHeld(api, ["RootRole", "Foo2Role", "Bar2Role", "Baz2Role"], token: looped.token).count == 4)

        // Admin ⊂ Moderator ⊂ ContentManager, SuperModerator ⊂ Moderator and SuperContentManager ⊂ ContentManager.
        var byName: [String: String] = [:]
        for name in ["Admin", "Moderator", "SuperModerator", "ContentManager", "SuperContentManager"] {
            byName[name] = try await role(api, name)
        }
        let children = ["ContentManager": ["Moderator", "SuperContentManager"], "Moderator": ["Admin", "SuperModerator"],
                        "SuperContentManager": ["SuperModerator"]]
        for (parent, inside) in children {
            let added = inside.map { pointer("_Role", byName[$0]!) }
            #expect(try await api.send("PUT", "/roles/\(byName[parent]!)", json: ["roles": relation("AddRelation", added)], master: true).status == 200)
        }
        let expected = ["Admin": ["Admin", "Moderator", "ContentManager"], "Moderator": ["Moderator", "ContentManager"],
                        "ContentManager": ["ContentManager"],
                        "SuperModerator": ["Moderator", "SuperModerator", "ContentManager", "SuperContentManager"]]
        let all = ["Admin", "Moderator", "SuperModerator", "ContentManager", "SuperContentManager"]
        for (name, holds) in expected {
            let member = try await api.signUp("member_\(name)", "password")
            #expect(try await api.send("PUT", "/roles/\(byName[name]!)", json: ["users": relation("AddRelation", [pointer("_User", member.id)])],
                                       master: true).status == 200)
            #expect(try await rolesHeld(api, all, token: member.token).sorted() == holds.sorted(), "\(name)")
        }
    }

    // spec: ParseRole.spec.js: _Role object should not save without name.
    // spec: ParseRole.spec.js: Different _Role objects cannot have the same name.
    // spec: ParseRole.spec.js: can create role and query empty users
    // spec: ParseRole.spec.js: should be secure (#3835)
    @Test func savingRoles() async throws {
        let api = try RecordingServer()
        expectError(try await api.send("POST", "/roles", json: [:], master: true), 111)
        expectError(try await api.send("POST", "/roles", json: ["name": "testRole"], master: true), 111)
        let user = try await api.signUp("user", "password")
        _ = try await role(api, "MyRole", users: [user])
        expectError(try await api.send("POST", "/roles", json: ["name": "MyRole", "ACL": [:], "users": relation("AddRelation", [pointer("_User", user.id)])],
                                       master: true), 137)
        let subscribers = try await role(api, "subscribers", acl: ["*": ["read": true]])
        #expect(try await members(api, of: subscribers).isEmpty)

        // A client may create a role, but not change one whose ACL grants it nothing.
        let created = try await api.send("POST", "/roles", json: ["name": "admin", "ACL": [:]])
        #expect(created.status == 201)
        let adminId = try #require(created.json["objectId"]?.stringValue)
        let hello = try await api.signUp("hello", "world")
        expectError(try await api.send("PUT", "/roles/\(adminId)", json: ["users": relation("AddRelation", [pointer("_User", hello.id)])],
                                       token: hello.token), 101)
        #expect(try await members(api, of: adminId).isEmpty)
    }

    // spec: ParseRole.spec.js: should properly handle role permissions on objects
    // spec: ParseRole.spec.js: should add multiple users to a role and remove users
    @Test func rolePermissionsOnObjects() async throws {
        let api = try RecordingServer()
        let user = try await api.signUp("user", "password")
        let user2 = try await api.signUp("user2", "omgbbq")
        let user3 = try await api.signUp("user3", "omgbbq")
        let publicRead: JSON = ["*": ["read": true]]
        let admin = try await role(api, "Admin", acl: publicRead, users: [user])
        let superRole = try await role(api, "Super", acl: publicRead, users: [user2])
        #expect(try await api.send("PUT", "/roles/\(admin)", json: ["roles": relation("AddRelation", [pointer("_Role", superRole)])],
                                   master: true).status == 200)
        _ = try await role(api, "Customer", acl: publicRead, users: [user3], roles: [admin])
        #expect(try await api.send("GET", "/roles", master: true).json["results"]?.arrayValue?.count == 3)

        // Admin is inside Customer: an Admin user may edit a Customer object; a Customer user may not edit an Admin one.
        let customerObject = try await api.server.create("TestObjectRoles", ["ACL": ["role:Customer": ["read": true, "write": true]]])
        #expect(try await api.send("PUT", "/classes/TestObjectRoles/\(customerObject)", json: ["changedByAdmin": true],
                                   token: user.token).status == 200)
        let adminObject = try await api.server.create("TestObjectRoles", ["ACL": ["role:Admin": ["read": true, "write": true]]])
        expectError(try await api.send("PUT", "/classes/TestObjectRoles/\(adminObject)", json: ["changedByCustomer": true],
                                       token: user3.token), 101)

        let shared = try await role(api, "sharedRole", acl: ["*": ["read": true, "write": true]], users: [user, user2, user3])
        let found = try await api.send("GET", "/roles", master: true, query: ["where": #"{"name":"sharedRole"}"#])
        #expect(found.json["results"]?.arrayValue?.count == 1)
        #expect(try await members(api, of: shared) == ["user", "user2", "user3"])
        let open = try await api.server.create("TestObjectRoles", ["ACL": ["*": ["read": true, "write": true]]])
        #expect(try await api.send("PUT", "/classes/TestObjectRoles/\(open)", json: ["changedByUsers": true], token: user.token).status == 200)
        let removed = try await api.send("PUT", "/roles/\(shared)", json: [
            "users": relation("RemoveRelation", [pointer("_User", user.id), pointer("_User", user3.id)]),
        ], master: true)
        #expect(removed.status == 200)
        #expect(try await members(api, of: shared) == ["user2"])
    }

    // spec: ParseRole.spec.js: should match when matching in users relation
    // spec: ParseRole.spec.js: should not match any entry when not matching in users relation
    // spec: ParseRole.spec.js: should not match any entry when searching for null in users relation
    @Test func queryingTheUsersRelation() async throws {
        let api = try RecordingServer()
        let admin = try await api.signUp("admin", "admin")
        _ = try await role(api, "admin", acl: ["*": ["read": true, "write": true]], users: [admin])
        let other = try await api.signUp("otherUser", "otherUser")
        func count(_ users: JSON) async throws -> Int? {
            try await api.send("GET", "/roles", query: ["where": JSON.object(["name": "admin", "users": users]).jsonText])
                .json["results"]?.arrayValue?.count
        }
        #expect(try await count(pointer("_User", admin.id)) == 1)
        #expect(try await count(pointer("_User", other.id)) == 0)
        #expect(try await count(.null) == 0)
    }

    /// Parse Server lets a role be renamed over REST (only the JS SDK refuses it, locally); the new name
    /// holds at once for its members. Deleting the name is refused, as Parse's required columns.
    @Test func renamingARole() async throws {
        let api = try RecordingServer()
        let member = try await api.signUp("member", "password")
        let roleId = try await role(api, "Old", users: [member])
        let object = try await api.server.create("Secret", ["ACL": ["role:New": ["read": true]]])
        expectError(try await api.send("GET", "/classes/Secret/\(object)", token: member.token), 101)
        #expect(try await api.send("PUT", "/roles/\(roleId)", json: ["name": "New"], master: true).status == 200)
        #expect(try await api.send("GET", "/classes/Secret/\(object)", token: member.token).status == 200)
        expectError(try await api.send("PUT", "/roles/\(roleId)", json: ["name": ["__op": "Delete"]], master: true), 111, "name is required.")
    }
}
