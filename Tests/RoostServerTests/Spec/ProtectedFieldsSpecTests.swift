import Foundation
import RoostCore
import Testing

/// Parse Server's spec/ProtectedFields.spec.js over REST, with `protectedFields` set in the class-level
/// permissions through `PUT /schemas` (Parse's server option `protectedFields`, `--protected-fields`, is
/// UserPIISpecTests').
@Suite struct ProtectedFieldsSpecTests {
    /// Two users and, per class, obj1 {owner: user1, testers: [user1, user2], test} and obj2 {owner: user2, testers: [user1], test},
    /// as the spec's `targeting authenticated` and `targeting roles` fixtures.
    private typealias World = ThreeUsers

    private func world() async throws -> World { try await ThreeUsers.signedUp() }

    private func objects(_ w: World, _ className: String) async throws -> (String, String) {
        func make(_ owner: Account, _ testers: [Account]) async throws -> String {
            let created = try await w.api.send("POST", "/classes/\(className)", json: [
                "owner": pointer("_User", owner.id), "testers": .array(testers.map { pointer("_User", $0.id) }), "test": "test",
            ], master: true)
            return try #require(created.json["objectId"]?.stringValue)
        }
        return (try await make(w.user1, [w.user1, w.user2]), try await make(w.user2, [w.user1]))
    }

    private func protect(_ api: RecordingServer, _ className: String, _ fields: JSON, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let response = try await api.send("PUT", "/schemas/\(className)", json: [
            "classLevelPermissions": ["get": ["*": true], "find": ["*": true], "protectedFields": fields],
        ], master: true)
        #expect(response.status == 200, "\(response.text)", sourceLocation: sourceLocation)
    }

    private func role(_ api: RecordingServer, _ name: String, users: [Account], roles: [String] = []) async throws -> String {
        var body: [String: JSON] = ["name": .string(name), "ACL": ["*": ["read": true, "write": true]]]
        if !users.isEmpty { body["users"] = ["__op": "AddRelation", "objects": .array(users.map { pointer("_User", $0.id) })] }
        if !roles.isEmpty { body["roles"] = ["__op": "AddRelation", "objects": .array(roles.map { pointer("_Role", $0) })] }
        let created = try await api.send("POST", "/roles", json: .object(body), master: true)
        return try #require(created.json["objectId"]?.stringValue)
    }

    /// The keys of `obj` as `token`'s user (nil: the public) gets it, without the built-in ones.
    private func keys(_ api: RecordingServer, _ className: String, _ id: String, token: String?) async throws -> Set<String> {
        let fetched = try await api.send("GET", "/classes/\(className)/\(id)", token: token)
        return Set(fetched.json.objectValue?.keys ?? [:].keys).subtracting(["objectId", "createdAt", "updatedAt", "ACL"])
    }

    // spec: ProtectedFields.spec.js: should hide fields in a non user class
    // spec: ProtectedFields.spec.js: should handle and empty protectedFields
    // spec: ProtectedFields.spec.js: should hide field
    // spec: ProtectedFields.spec.js: should hide mutiple fields
    // spec: ProtectedFields.spec.js: should not hide any fields when set as empty array
    // spec: ProtectedFields.spec.js: should fail setting non-existing protected field
    // spec: ProtectedFields.spec.js: should allow setting authenticated
    // spec: ProtectedFields.spec.js: should not allow protecting default fields
    @Test func publicAccessAndSchemaSetup() async throws {
        let api = try RecordingServer()
        let a = try await api.server.create("ClassA", ["foo": "zzz", "bar": "yyy"])
        let b = try await api.server.create("ClassB", ["foo": "zzz", "bar": "yyy"])
        try await protect(api, "ClassA", ["*": ["foo"]])
        try await protect(api, "ClassB", ["*": ["bar"]])
        #expect(try await keys(api, "ClassA", a, token: nil) == ["bar"])
        #expect(try await keys(api, "ClassB", b, token: nil) == ["foo"])

        // A public user: its email stays hidden from others, its other fields do not, with no protected fields set.
        let alice = try await api.signUp("Alice", "sekrit", ["email": "alice@aol.com", "favoriteColor": "yellow", "ACL": ["*": ["read": true]]])
        let fetched = try await api.send("GET", "/users/\(alice.id)")
        #expect(fetched.json["email"] == nil)
        #expect(fetched.json["favoriteColor"] == "yellow")

        for (index, (fields, visible)) in [(["foo"], ["bar", "qux"]), (["foo", "bar"], ["qux"]), ([], ["foo", "bar", "qux"])].enumerated() {
            let className = "Public\(index)"
            let id = try await api.server.create(className, ["foo": "foo", "bar": "bar", "qux": "qux"])
            try await protect(api, className, ["*": .array(fields.map { .string($0) })])
            #expect(try await keys(api, className, id, token: nil) == Set(visible))
        }

        _ = try await api.server.create("Setup", ["revision": 0, "test": "test"])
        func setUp(_ fields: JSON) async throws -> TestResponse {
            try await api.send("PUT", "/schemas/Setup", json: ["classLevelPermissions": ["protectedFields": fields]], master: true)
        }
        expectError(try await setUp(["*": ["non-existing"]]), 107, "Field 'non-existing' in protectedFields:* does not exist")
        #expect(try await setUp(["authenticated": ["test"]]).status == 200)
        for field in ["objectId", "createdAt", "updatedAt", "ACL"] {
            expectError(try await setUp(["*": .array([.string(field)])]), 107, "Default field '\(field)' can not be protected")
        }
    }

    // spec: ProtectedFields.spec.js: should not hide any fields when set as empty array
    // spec: ProtectedFields.spec.js: should hide fields for authenticated users only (* not set)
    // spec: ProtectedFields.spec.js: should intersect public and auth for authenticated user
    // spec: ProtectedFields.spec.js: should have higher prio than public for logged in users (intersect)
    // spec: ProtectedFields.spec.js: should have no effect on unauthenticated users (public not set)
    // spec: ProtectedFields.spec.js: should protect multiple fields for authenticated users
    // spec: ProtectedFields.spec.js: should not be affected by rules not applicable to user (smoke)
    @Test func targetingAuthenticated() async throws {
        let w = try await world()
        let api = w.api
        let all: Set<String> = ["owner", "testers", "test"]
        // (protectedFields, caller (0: the public), visible fields of obj1)
        var cases: [(JSON, Int, Set<String>)] = [
            (["authenticated": []], 1, all),
            (["authenticated": ["test"]], 0, all), (["authenticated": ["test"]], 1, ["owner", "testers"]),
            (["*": ["owner", "testers"], "authenticated": ["testers"]], 1, ["owner", "test"]),
            (["*": ["test"], "authenticated": []], 1, all),
            (["authenticated": ["test", "owner"]], 1, ["testers"]),
        ]
        _ = try await role(api, "smoke", users: [w.user1])
        cases.append((.object(["authenticated": ["owner", "testers"], "role:smoke": ["test"], "userField:owner": [], w.user1.id: []]), 2, ["test"]))
        let users = [w.user1, w.user2]
        for (index, (fields, caller, visible)) in cases.enumerated() {
            let className = "Auth\(index)"
            let (obj1, _) = try await objects(w, className)
            try await protect(api, className, fields)
            let token = caller == 0 ? nil : users[caller - 1].token
            #expect(try await keys(api, className, obj1, token: token) == visible, "case \(index)")
        }
    }

    // spec: ProtectedFields.spec.js: should hide field when user belongs to a role
    // spec: ProtectedFields.spec.js: should not hide any fields when set as empty array
    // spec: ProtectedFields.spec.js: should hide multiple fields when user belongs to a role
    // spec: ProtectedFields.spec.js: should not protect when user does not belong to a role
    // spec: ProtectedFields.spec.js: should intersect protected fields when user belongs to multiple roles
    // spec: ProtectedFields.spec.js: should intersect protected fields when user belongs to multiple roles hierarchy
    // spec: ProtectedFields.spec.js: should be able to clear protected fields for role (protected for authenticated)
    // spec: ProtectedFields.spec.js: should determine protectedFields as intersection of field sets for public and role
    // spec: ProtectedFields.spec.js: should be determined as an intersection of protecedFields for authenticated and role
    // spec: ProtectedFields.spec.js: should not hide fields when user does not belong to a role protectedFields set for
    @Test func targetingRoles() async throws {
        let w = try await world()
        let api = w.api
        let all: Set<String> = ["owner", "testers", "test"]
        _ = try await role(api, "r1", users: [w.user1])
        _ = try await role(api, "r2", users: [w.user1])
        _ = try await role(api, "other", users: [w.user3])
        // moder ⊃ admin's users, tester ⊃ moder's users.
        let admin = try await role(api, "admin", users: [w.user1])
        let moder = try await role(api, "moder", users: [w.user1, w.user2], roles: [admin])
        _ = try await role(api, "tester", users: [], roles: [moder])
        let cases: [(JSON, Account, Set<String>)] = [
            (["role:r1": ["test"]], w.user1, ["owner", "testers"]),
            (["role:r1": []], w.user1, all),
            (["role:r1": ["test", "owner"]], w.user1, ["testers"]),
            (["role:r1": ["test", "owner"]], w.user2, all),
            (["role:r1": ["owner"], "role:r2": ["test", "owner"]], w.user1, ["testers", "test"]),
            (["role:admin": [], "role:moder": ["owner"], "role:tester": ["test", "owner"]], w.user1, all),
            (["role:admin": [], "role:moder": ["owner"], "role:tester": ["test", "owner"]], w.user2, ["testers", "test"]),
            (["authenticated": ["test"], "role:r1": []], w.user1, all),
            (["*": ["test", "owner"], "role:r1": ["owner", "testers"]], w.user1, ["testers", "test"]),
            (["authenticated": ["test"], "role:r1": ["owner"]], w.user1, all),
            (["role:other": ["test"]], w.user1, all),
        ]
        for (index, (fields, caller, visible)) in cases.enumerated() {
            let className = "Roles\(index)"
            let (obj1, _) = try await objects(w, className)
            try await protect(api, className, fields)
            #expect(try await keys(api, className, obj1, token: caller.token) == visible, "case \(index)")
        }
    }

    // (using the pointer-permission variant, `and get/fetch` then `and find`:)
    // spec: ProtectedFields.spec.js: should allow access using single user pointer-permissions
    // spec: ProtectedFields.spec.js: should deny access to other users using single user pointer-permissions
    // spec: ProtectedFields.spec.js: should deny access to public using single user pointer-permissions
    // spec: ProtectedFields.spec.js: should allow access using user array pointer-permissions
    // spec: ProtectedFields.spec.js: should deny access to other users using user array pointer-permissions
    // spec: ProtectedFields.spec.js: should deny access to public using user array pointer-permissions
    // spec: ProtectedFields.spec.js: should intersect protected fields when using multiple pointer-permission fields
    // spec: ProtectedFields.spec.js: should ignore pointer-permission fields not present in object
    // spec: ProtectedFields.spec.js: should allow access using single user pointer-permissions
    // spec: ProtectedFields.spec.js: should deny access to other users using single user pointer-permissions
    // spec: ProtectedFields.spec.js: should deny access to public using single user pointer-permissions
    // spec: ProtectedFields.spec.js: should allow access using user array pointer-permissions
    // spec: ProtectedFields.spec.js: should deny access to other users using user array pointer-permissions
    // spec: ProtectedFields.spec.js: should deny access to public using user array pointer-permissions
    // spec: ProtectedFields.spec.js: should intersect protected fields when using multiple pointer-permission fields
    // spec: ProtectedFields.spec.js: should ignore pointer-permission fields not present in object
    // spec: ProtectedFields.spec.js: should filter only fields from objects not owned by the user
    @Test func pointerPermissionVariant() async throws {
        let w = try await world()
        let api = w.api
        let u1 = pointer("_User", w.user1.id), u2 = pointer("_User", w.user2.id)
        // (object, protectedFields, caller (0: public), visible)
        let cases: [([String: JSON], JSON, Int, Set<String>)] = [
            (["owner": u1], ["*": ["owner"], "userField:owner": []], 1, ["owner", "test"]),
            (["owner": u1], ["*": ["owner"], "userField:owner": []], 2, ["test"]),
            (["owner": u1], ["*": ["owner"], "userField:owner": []], 0, ["test"]),
            (["owners": [u1, u2]], ["*": ["owners"], "userField:owners": []], 1, ["owners", "test"]),
            (["owners": [u1, u2]], ["*": ["owners"], "userField:owners": []], 2, ["owners", "test"]),
            (["owners": [u1]], ["*": ["owners"], "userField:owners": []], 2, ["test"]),
            (["owners": [u1, u2]], ["*": ["owners"], "userField:owners": []], 0, ["test"]),
            (["owners": [u1], "owner": u1], ["*": ["owners", "owner", "test"], "userField:owners": ["owners", "owner"], "userField:owner": ["owner"]],
             1, ["owners", "test"]),
            (["owners": [u1], "owner": u1], ["*": [], "userField:idontexist": ["owner"], "userField:idontexist2": ["owners"]], 1,
             ["owners", "owner", "test"]),
        ]
        let users = [w.user1, w.user2]
        for (index, (fields, protectedFields, caller, visible)) in cases.enumerated() {
            let className = "Pointer\(index)"
            var body = fields
            body["test"] = "test"
            let id = try #require(try await api.send("POST", "/classes/\(className)", json: .object(body), master: true).json["objectId"]?.stringValue)
            try await protect(api, className, protectedFields)
            let token = caller == 0 ? nil : users[caller - 1].token
            #expect(try await keys(api, className, id, token: token) == visible, "get, case \(index)")
            let found = try await api.send("GET", "/classes/\(className)", token: token)
            let keysFound = Set(found.json["results"]?.arrayValue?.first?.objectValue?.keys ?? [:].keys)
                .subtracting(["objectId", "createdAt", "updatedAt", "ACL"])
            #expect(keysFound == visible, "find, case \(index)")
        }

        // Per object: only the owner's own objects show `owner`.
        for (owner, test) in [(u1, "test"), (u2, "test2"), (u2, "test3")] {
            _ = try await api.send("POST", "/classes/Filtered", json: ["owner": owner, "test": .string(test)], master: true)
        }
        try await protect(api, "Filtered", ["*": ["owner"], "userField:owner": []])
        for (user, owned) in [(w.user1, ["test"]), (w.user2, ["test2", "test3"])] {
            let results = try #require(try await api.send("GET", "/classes/Filtered", token: user.token).json["results"]?.arrayValue)
            #expect(results.count == 3)
            for result in results {
                let isOwned = owned.contains(result["test"]?.stringValue ?? "")
                #expect((result["owner"] != nil) == isOwned, "\(result)")
            }
        }
    }

    // spec: ProtectedFields.spec.js: should be enforced regardless of pointer-field being included in keys (select)
    // spec: ProtectedFields.spec.js: should protect fields for query where pointer field is not included via keys (REST GET)
    // spec: ProtectedFields.spec.js: should protect fields for query where pointer field is not included via keys (REST FIND)
    // spec: ProtectedFields.spec.js: should protect fields for query where pointer field is in excludeKeys (REST GET)
    // spec: ProtectedFields.spec.js: should protect fields for query where pointer field is in excludedKeys (REST FIND)
    @Test func keysProjection() async throws {
        let w = try await world()
        let api = w.api
        let owner = pointer("_User", w.user1.id)
        let selected = try await api.send("POST", "/classes/Selected", json: ["owner": owner, "field": "field", "test": "test"], master: true)
        let selectedId = try #require(selected.json["objectId"]?.stringValue)
        try await protect(api, "Selected", ["*": ["field", "test"], "userField:owner": []])
        let picked = try await api.send("GET", "/classes/Selected", token: w.user1.token,
                                        query: ["keys": "field,test", "where": #"{"objectId":"\#(selectedId)"}"#])
        #expect(picked.json["results"]?.arrayValue?.first?["field"] == "field")
        #expect(picked.json["results"]?.arrayValue?.first?["test"] == "test")

        let id = try #require(try await api.send("POST", "/classes/Projected", json: ["owner": owner, "field": "field", "test": "test"],
                                                  master: true).json["objectId"]?.stringValue)
        try await protect(api, "Projected", ["*": ["field", "test"], "userField:owner": ["test"]])
        for parameters in [["keys": "field,test"], ["excludeKeys": "owner"]] {
            let got = try await api.send("GET", "/classes/Projected/\(id)", token: w.user1.token, query: parameters)
            let found = try await api.send("GET", "/classes/Projected", token: w.user1.token, query: parameters)
            for object in [got.json, found.json["results"]?.arrayValue?.first ?? .null] {
                #expect(object["field"] == "field", "\(parameters): \(object)")
                #expect(object["test"] == nil, "\(parameters): \(object)")
                #expect(object["owner"] == nil, "\(parameters): \(object)")
            }
        }
    }

    /// Parse Server's default `protectedFields` option (`{_User: {'*': ['email']}}`) joins `_User`'s own `*` entry,
    /// so another entry that applies to the caller can show `email` (the entries' intersection); `authData` stays
    /// the user's own whatever the entries say.
    @Test func usersEmailIsShownWhereAnEntryForTheCallerShowsIt() async throws {
        let api = try RecordingServer()
        let user = try await api.signUp("tester", "pw-pii", ["email": "tester@example.com", "zip": "10001", "ssn": "999-99-9999",
                                                             "ACL": ["*": ["read": true]]])
        let admin = try await api.signUp("administrator", "pw-admin")
        let other = try await api.signUp("someone", "pw-other")
        _ = try await role(api, "Administrator", users: [admin])
        func protectUsers(_ fields: JSON) async throws {  // Sign-up (`create`) stays open, unlike with `protect`.
            let everyone: JSON = ["*": true]
            let permissions: JSON = ["get": everyone, "find": everyone, "create": everyone, "protectedFields": fields]
            #expect(try await api.send("PUT", "/schemas/_User", json: ["classLevelPermissions": permissions], master: true).status == 200)
        }
        try await protectUsers(["*": ["ssn", "zip"], "role:Administrator": []])

        /// The fields among email, zip and ssn that `token`'s caller sees of the user, by get, by `/users` and by find.
        func seen(_ token: String?) async throws -> [Set<String>] {
            let filter = "{\"objectId\":\"\(user.id)\"}".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let objects = [
                try await api.send("GET", "/classes/_User/\(user.id)", token: token).json,
                try await api.send("GET", "/users/\(user.id)", token: token).json,
                try await api.send("GET", "/classes/_User?where=\(filter)", token: token).json["results"]?.arrayValue?.first ?? .null,
            ]
            return objects.map { object in Set(["email", "zip", "ssn"].filter { object[$0] != nil }) }
        }
        func expectSeen(_ token: String?, _ fields: Set<String>, sourceLocation: SourceLocation = #_sourceLocation) async throws {
            let seen = try await seen(token)
            #expect(seen == [fields, fields, fields], "get, /users, find", sourceLocation: sourceLocation)
        }
        try await expectSeen(admin.token, ["email", "zip", "ssn"])
        try await expectSeen(other.token, [])
        try await expectSeen(nil, [])
        try await expectSeen(user.token, ["email", "zip", "ssn"])

        // Shown to every logged-in user, never to the public; another user's `authData` to no one.
        try await protectUsers(["*": [], "authenticated": []])
        try await expectSeen(other.token, ["email", "zip", "ssn"])
        try await expectSeen(nil, ["zip", "ssn"])
        let anonymous = try await api.send("POST", "/users", json: ["authData": ["anonymous": ["id": .string(UUID().uuidString)]],
                                                                     "ACL": ["*": ["read": true]]])
        let anonymousId = try #require(anonymous.json["objectId"]?.stringValue)
        let fetched = try await api.send("GET", "/classes/_User/\(anonymousId)", token: other.token)
        #expect(fetched.status == 200 && fetched.json["authData"] == nil, "\(fetched.text)")
        expectError(try await api.send("GET", "/classes/_User?where=%7B%22authData.anonymous.id%22%3A%22x%22%7D", token: other.token), 119)
        api.expectNeverShown(["pw-pii", "pw-admin", "pw-other"])
    }
}
