import Foundation
import RoostCore
import Testing

/// Parse Server's spec/PointerPermissions.spec.js over REST: `readUserFields`/`writeUserFields` and each
/// operation's `pointerFields`, on a pointer to a user (`owner`) and on an array of them (`owners`). The spec
/// sets permissions through the schema controller; here through `PUT /schemas`, which is what it stores.
@Suite struct PointerPermissionsSpecTests {
    private typealias World = ThreeUsers

    private func world() async throws -> World { try await ThreeUsers.signedUp() }

    /// `owner: <pointer>` or `owners: [<pointers>]`.
    private func owned(_ key: String, by users: [Account], array: Bool) -> [String: JSON] {
        let pointers = users.map { pointer("_User", $0.id) }
        return [key: array ? .array(pointers) : (pointers.first ?? .null)]
    }

    private func create(_ api: RecordingServer, _ className: String, _ fields: [String: JSON]) async throws -> String {
        let created = try await api.send("POST", "/classes/\(className)", json: .object(fields), master: true)
        guard let id = created.json["objectId"]?.stringValue else { throw TestServerError.unexpected(created.status, created.text) }
        return id
    }

    @discardableResult
    private func setPermissions(_ api: RecordingServer, _ className: String, _ permissions: JSON, fields: JSON? = nil,
                                sourceLocation: SourceLocation = #_sourceLocation) async throws -> TestResponse {
        var body: [String: JSON] = ["classLevelPermissions": permissions]
        if let fields { body["fields"] = fields }
        let response = try await api.send("PUT", "/schemas/\(className)", json: .object(body), master: true)
        #expect(response.status == 200, "\(response.text)", sourceLocation: sourceLocation)
        return response
    }

    private func resultIds(_ response: TestResponse) -> [String] {
        (response.json["results"]?.arrayValue ?? []).compactMap { $0["objectId"]?.stringValue }.sorted()
    }

    // spec: PointerPermissions.spec.js: should work with find
    // spec: PointerPermissions.spec.js: should work with write
    // spec: PointerPermissions.spec.js: should let a proper user find
    // spec: PointerPermissions.spec.js: should query on pointer permission enabled column
    // spec: PointerPermissions.spec.js: should not allow creating objects
    // spec: PointerPermissions.spec.js: should handle multiple writeUserFields
    // spec: PointerPermissions.spec.js: should let master key find objects
    // spec: PointerPermissions.spec.js: should let master key get objects
    // spec: PointerPermissions.spec.js: should let master key update objects
    // spec: PointerPermissions.spec.js: should let master key delete objects
    // (each twice: `using single user-pointers` and `using arrays of user-pointers`)
    // spec: PointerPermissions.spec.js: should work with find
    // spec: PointerPermissions.spec.js: should work with write
    // spec: PointerPermissions.spec.js: should let a proper user find
    // spec: PointerPermissions.spec.js: should query on pointer permission enabled column
    // spec: PointerPermissions.spec.js: should not allow creating objects
    // spec: PointerPermissions.spec.js: should handle multiple writeUserFields
    // spec: PointerPermissions.spec.js: should let master key find objects
    // spec: PointerPermissions.spec.js: should let master key get objects
    // spec: PointerPermissions.spec.js: should let master key update objects
    // spec: PointerPermissions.spec.js: should let master key delete objects
    @Test(arguments: [false, true])
    func userFields(array: Bool) async throws {
        let w = try await world()
        let api = w.api
        let key = array ? "owners" : "owner"

        // Only readUserFields: every other operation is master-only, finds are limited to the user's objects.
        let obj = try await create(api, "Find", owned(key, by: [w.user1], array: array))
        _ = try await create(api, "Find", owned(key, by: [w.user2], array: array))
        try await setPermissions(api, "Find", ["readUserFields": .array([.string(key)])])
        #expect(resultIds(try await api.send("GET", "/classes/Find", token: w.user1.token)) == [obj])

        // Writes through `owner`, reads through `reader` or `owner`.
        var first = owned(key, by: [w.user1], array: array), second = owned(key, by: [w.user2], array: array)
        first.merge(owned("reader", by: [w.user2], array: array)) { $1 }
        second.merge(owned("reader", by: [w.user1], array: array)) { $1 }
        let written = try await create(api, "Write", first), other = try await create(api, "Write", second)
        try await setPermissions(api, "Write", ["writeUserFields": .array([.string(key)]), "readUserFields": ["reader", .string(key)]])
        expectError(try await api.send("PUT", "/classes/Write/\(other)", json: ["hello": "world"], token: w.user1.token), 101)
        #expect(try await api.send("PUT", "/classes/Write/\(written)", json: ["hello": "world"], token: w.user1.token).status == 200)
        let both = try await api.send("GET", "/classes/Write", token: w.user2.token)
        #expect(resultIds(both) == [written, other].sorted())
        #expect(both.json["results"]?.arrayValue?.first { $0["objectId"] == .string(written) }?["hello"] == "world")

        // find and get locked, readUserFields open them to the users listed.
        let listed = array ? [w.user1, w.user2] : [w.user1]
        let mine = try await create(api, "Proper", owned(key, by: listed, array: array))
        _ = try await create(api, "Proper", [:])
        try await setPermissions(api, "Proper", ["find": [:], "get": [:], "readUserFields": .array([.string(key)])])
        #expect(resultIds(try await api.send("GET", "/classes/Proper")).isEmpty)
        let outsider = array ? w.user3 : w.user2
        #expect(resultIds(try await api.send("GET", "/classes/Proper", token: outsider.token)).isEmpty)
        expectError(try await api.send("GET", "/classes/Proper/\(mine)", token: outsider.token), 101, "Object not found.")
        for user in listed {
            #expect(resultIds(try await api.send("GET", "/classes/Proper", token: user.token)) == [mine])
            // Also asking for another user's objects finds none.
            let asked = try await api.send("GET", "/classes/Proper", token: user.token,
                                           query: ["where": JSON.object([key: pointer("_User", w.user3.id)]).jsonText])
            #expect(resultIds(asked).isEmpty)
        }

        // create locked: a writeUserFields user may not create either (119).
        let declared: JSON = [key: array ? ["type": "Array"] : ["type": "Pointer", "targetClass": "_User"]]
        let schema = try await api.send("POST", "/schemas/Locked", json: [
            "fields": declared, "classLevelPermissions": ["create": [:], "writeUserFields": .array([.string(key)]), "readUserFields": .array([.string(key)])],
        ], master: true)
        #expect(schema.status == 200, "\(schema.text)")
        expectError(try await api.send("POST", "/classes/Locked", json: .object(owned(key, by: [w.user1], array: array)), token: w.user1.token), 119)

        // Either of two writeUserFields may write.
        var two = owned(key, by: [w.user1], array: array)
        two.merge(owned("other" + key.prefix(1).uppercased() + key.dropFirst(), by: [w.user2], array: array)) { $1 }
        let shared = try await create(api, "Multiple", two)
        let otherKey = "other" + key.prefix(1).uppercased() + key.dropFirst()
        try await setPermissions(api, "Multiple", ["find": ["*": true], "writeUserFields": [.string(key), .string(otherKey)]])
        #expect(try await api.send("PUT", "/classes/Multiple/\(shared)", json: ["hello": "fromUser1"], token: w.user1.token).status == 200)
        #expect(try await api.send("PUT", "/classes/Multiple/\(shared)", json: ["hello": "fromUser2"], token: w.user2.token).status == 200)
        #expect(try await api.send("GET", "/classes/Multiple").json["results"]?.arrayValue?.first?["hello"] == "fromUser2")

        // The master key passes every pointer permission.
        for (className, permissions): (String, JSON) in [
            ("MasterRead", ["find": [:], "get": [:], "readUserFields": .array([.string(key)])]),
            ("MasterWrite", ["update": [:], "delete": [:], "writeUserFields": .array([.string(key)])]),
        ] {
            let id = try await create(api, className, ["hello": "world"])
            try await setPermissions(api, className, permissions, fields: declared)
            if className == "MasterRead" {
                #expect(resultIds(try await api.send("GET", "/classes/\(className)")).isEmpty)
                expectError(try await api.send("GET", "/classes/\(className)/\(id)"), 101)
                #expect(resultIds(try await api.send("GET", "/classes/\(className)", master: true)) == [id])
                #expect(try await api.send("GET", "/classes/\(className)/\(id)", master: true).status == 200)
            } else {
                expectError(try await api.send("PUT", "/classes/\(className)/\(id)", json: ["hello": "bar"]), 101)
                #expect(try await api.send("PUT", "/classes/\(className)/\(id)", json: ["hello": "baz"], master: true).status == 200)
                #expect(try await api.send("GET", "/classes/\(className)/\(id)", master: true).json["hello"] == "baz")
                expectError(try await api.send("DELETE", "/classes/\(className)/\(id)"), 101)
                #expect(try await api.send("DELETE", "/classes/\(className)/\(id)", master: true).status == 200)
            }
        }
    }

    // spec: PointerPermissions.spec.js: tests CLP / Pointer Perms / ACL write (PP Locked)
    // spec: PointerPermissions.spec.js: tests CLP / Pointer Perms / ACL write (ACL Locked)
    // spec: PointerPermissions.spec.js: tests CLP / Pointer Perms / ACL write (ACL/PP OK)
    // spec: PointerPermissions.spec.js: tests CLP / Pointer Perms / ACL read (PP locked)
    // spec: PointerPermissions.spec.js: tests CLP / Pointer Perms / ACL read (PP/ACL OK)
    // spec: PointerPermissions.spec.js: tests CLP / Pointer Perms / ACL read (ACL locked)
    // (each twice: `using single user-pointers` and `using arrays of user-pointers`)
    // spec: PointerPermissions.spec.js: tests CLP / Pointer Perms / ACL write (PP Locked)
    // spec: PointerPermissions.spec.js: tests CLP / Pointer Perms / ACL write (ACL Locked)
    // spec: PointerPermissions.spec.js: tests CLP / Pointer Perms / ACL write (ACL/PP OK)
    // spec: PointerPermissions.spec.js: tests CLP / Pointer Perms / ACL read (PP locked)
    // spec: PointerPermissions.spec.js: tests CLP / Pointer Perms / ACL read (PP/ACL OK)
    // spec: PointerPermissions.spec.js: tests CLP / Pointer Perms / ACL read (ACL locked)
    @Test(arguments: [false, true])
    func pointerPermissionsAndACLsBothApply(array: Bool) async throws {
        let w = try await world()
        let api = w.api
        let key = array ? "owners" : "owner"
        let user1Only: JSON = [w.user1.id: ["read": true, "write": true]]
        let both: JSON = [w.user1.id: ["read": true, "write": true], w.user2.id: ["read": true, "write": true]]
        let writeLock: JSON = ["update": [:], "writeUserFields": .array([.string(key)])]
        let readLock: JSON = ["find": [:], "get": [:], "readUserFields": .array([.string(key)])]
        // (class, ACL, permissions, caller, allowed): user2 is always the owner.
        let cases: [(String, JSON, JSON, Account, Bool)] = [
            ("WritePP", user1Only, writeLock, w.user1, false), ("WriteACL", user1Only, writeLock, w.user2, false),
            ("WriteOK", both, writeLock, w.user2, true),
            ("ReadPP", user1Only, readLock, w.user1, false), ("ReadOK", both, readLock, w.user2, true),
            ("ReadACL", user1Only, readLock, w.user2, false),
        ]
        for (className, acl, permissions, caller, allowed) in cases {
            var fields = owned(key, by: [w.user2], array: array)
            fields["ACL"] = acl
            let id = try await create(api, className, fields)
            try await setPermissions(api, className, permissions)
            let response = className.hasPrefix("Write")
                ? try await api.send("PUT", "/classes/\(className)/\(id)", json: ["key": "value"], token: caller.token)
                : try await api.send("GET", "/classes/\(className)/\(id)", token: caller.token)
            if allowed {
                #expect(response.status == 200, "\(className): \(response.text)")
            } else {
                expectError(response, 101)
            }
        }
        #expect(try await api.send("GET", "/classes/WriteOK", master: true).json["results"]?.arrayValue?.first?["key"] == "value")
    }

    // spec: PointerPermissions.spec.js: should prevent creating pointer permission on missing field
    // spec: PointerPermissions.spec.js: should prevent creating pointer permission on bad field (of wrong type)
    // spec: PointerPermissions.spec.js: should prevent creating pointer permission on bad field (non-user pointer)
    // spec: PointerPermissions.spec.js: should prevent creating pointer permission on bad field (non-existing)
    // spec: PointerPermissions.spec.js: should fail with invalid pointer perms (not array)
    // spec: PointerPermissions.spec.js: should fail with invalid pointer perms (non-existing field)
    // (`using arrays of user-pointers`:)
    // spec: PointerPermissions.spec.js: should prevent creating pointer permission on missing field
    // spec: PointerPermissions.spec.js: should prevent creating pointer permission on bad field (of wrong type)
    // spec: PointerPermissions.spec.js: should prevent creating pointer permission on bad field (non-existing)
    // spec: PointerPermissions.spec.js: should fail with invalid pointer perms (not array)
    // spec: PointerPermissions.spec.js: should fail with invalid pointer perms (non-existing field)
    @Test func invalidPointerPermissions() async throws {
        let api = try RecordingServer()
        for key in ["owner", "owners"] {
            let message = "'\(key)' is not a valid column for class level pointer permissions writeUserFields"
            let locked: JSON = ["create": [:], "writeUserFields": [.string(key)], "readUserFields": [.string(key)]]
            func newClass(_ fields: JSON, _ permissions: JSON) async throws -> TestResponse {
                try await api.send("POST", "/schemas/C\(UUID().uuidString.prefix(8))", json: ["fields": fields, "classLevelPermissions": permissions],
                                   master: true)
            }
            expectError(try await newClass([:], locked), 107, message)
            expectError(try await newClass(.object([key: ["type": "String"]]), locked), 107, message)
            expectError(try await newClass(.object([key: ["type": "Pointer", "targetClass": "_Session"]]), locked), 107, message)
            // A field first saved as a string.
            let className = "Existing\(key)"
            _ = try await api.send("POST", "/classes/\(className)", json: .object([key: "value"]))
            let update = try await api.send("PUT", "/schemas/\(className)", json: ["classLevelPermissions": locked], master: true)
            expectError(update, 107, message)

            let declared: JSON = .object([key: key == "owners" ? ["type": "Array"] : ["type": "Pointer", "targetClass": "_User"]])
            expectError(try await newClass(declared, ["delete": [:], "writeUserFields": .string(key)]), 107,
                        "'\(key)' is not a valid value for class level permissions writeUserFields - must be an array")
            expectError(try await newClass(declared, ["delete": [:], "writeUserFields": [.string(key), "invalid"]]), 107,
                        "'invalid' is not a valid column for class level pointer permissions writeUserFields")
        }
    }

    // spec: PointerPermissions.spec.js: should work with arrays containing valid & invalid elements
    @Test func arraysWithOtherElements() async throws {
        let w = try await world()
        let obj = try await create(w.api, "AnObject", ["owners": [pointer("_User", w.user1.id), "", -1, true, [], ["invalid": -1]]])
        try await setPermissions(w.api, "AnObject", ["readUserFields": ["owners"]])
        #expect(resultIds(try await w.api.send("GET", "/classes/AnObject", token: w.user1.token)) == [obj])
        #expect(resultIds(try await w.api.send("GET", "/classes/AnObject", token: w.user2.token)).isEmpty)
    }

    /// What `token`'s user may do with `obj1` (owned by user1): each answer, by action.
    private func actions(_ api: RecordingServer, _ obj1: String, token: String) async throws -> [String: TestResponse] {
        var answers: [String: TestResponse] = [:]
        answers["get"] = try await api.send("GET", "/classes/AnObject/\(obj1)", token: token)
        answers["find"] = try await api.send("GET", "/classes/AnObject", token: token)
        answers["count"] = try await api.send("GET", "/classes/AnObject", token: token, query: ["count": "1", "limit": "0"])
        answers["create"] = try await api.send("POST", "/classes/AnObject", json: [:], token: token)
        answers["addFieldOnCreate"] = try await api.send("POST", "/classes/AnObject", json: ["extra\(UUID().uuidString.prefix(6))": "field"],
                                                         token: token)
        answers["update"] = try await api.send("PUT", "/classes/AnObject/\(obj1)", json: ["revision": 2], token: token)
        answers["delete"] = try await api.send("DELETE", "/classes/AnObject/\(obj1)", token: token)
        return answers
    }

    // spec: PointerPermissions.spec.js: should be allowed
    // spec: PointerPermissions.spec.js: should fail for user not listed
    // spec: PointerPermissions.spec.js: should not allow other actions
    // spec: PointerPermissions.spec.js: should be allowed
    // spec: PointerPermissions.spec.js: should be limited to objects where user is listed in field
    // spec: PointerPermissions.spec.js: should not allow other actions
    // spec: PointerPermissions.spec.js: should be allowed
    // spec: PointerPermissions.spec.js: should be limited to objects where user is listed in field
    // spec: PointerPermissions.spec.js: should not allow other actions
    // spec: PointerPermissions.spec.js: should be allowed
    // spec: PointerPermissions.spec.js: should fail for user not listed
    // spec: PointerPermissions.spec.js: should not allow other actions
    // spec: PointerPermissions.spec.js: should be allowed
    // spec: PointerPermissions.spec.js: should fail for user not listed
    // spec: PointerPermissions.spec.js: should not allow other actions
    // spec: PointerPermissions.spec.js: should be denied (writelock) when no other permissions on class
    // spec: PointerPermissions.spec.js: should be allowed when updating object
    // spec: PointerPermissions.spec.js: should be denied when updating object for user without addField permission
    // (Granular, on single-pointer fields: get, find, count, update, delete, create and addField actions)
    @Test(arguments: ["get", "find", "count", "update", "delete", "create"])
    func granularOnSinglePointers(action: String) async throws {
        let w = try await world()
        let api = w.api
        let obj1 = try await create(api, "AnObject", ["owner": pointer("_User", w.user1.id), "revision": 0])
        _ = try await create(api, "AnObject", ["owner": pointer("_User", w.user2.id), "revision": 0])
        try await setPermissions(api, "AnObject", .object([action: ["pointerFields": ["owner"]]]))

        let mine = try await actions(api, obj1, token: w.user1.token)
        for (name, answer) in mine where name != action || action == "create" {
            expectError(answer, 119)
            #expect(answer.json["error"]?.stringValue?.hasPrefix("Permission denied") == true, "\(action)/\(name): \(answer.text)")
        }
        switch action {
        case "get":
            #expect(mine["get"]?.status == 200)
            expectError(try await api.send("GET", "/classes/AnObject/\(obj1)", token: w.user2.token), 101, "Object not found.")
        case "find":
            #expect(mine["find"]?.status == 200)
            #expect(try await api.send("GET", "/classes/AnObject", token: w.user2.token).json["results"]?.arrayValue?.count == 1)
        case "count":
            #expect(mine["count"]?.json["count"] == 1)
            let count = try await api.send("GET", "/classes/AnObject", token: w.user3.token, query: ["count": "1", "limit": "0"])
            #expect(count.json["count"] == 0)
        case "update":
            #expect(mine["update"]?.status == 200)
            expectError(try await api.send("PUT", "/classes/AnObject/\(obj1)", json: ["revision": 3], token: w.user2.token), 101, "Object not found.")
        case "delete":
            #expect(mine["delete"]?.status == 200)
            let other = try await create(api, "AnObject", ["owner": pointer("_User", w.user1.id)])
            expectError(try await api.send("DELETE", "/classes/AnObject/\(other)", token: w.user2.token), 101, "Object not found.")
            #expect(try await api.send("DELETE", "/classes/AnObject/\(other)", token: w.user1.token).status == 200)
        default:
            break  // create: refused above, as every other action.
        }

        // addField through pointerFields: allowed on an update of one's own object only.
        if action == "update" {
            try await setPermissions(api, "AnObject", ["update": ["*": true], "addField": ["pointerFields": ["owner"]]])
            #expect(try await api.send("PUT", "/classes/AnObject/\(obj1)", json: ["another1": "field"], token: w.user1.token).status == 200)
            expectError(try await api.send("PUT", "/classes/AnObject/\(obj1)", json: ["another2": "field"], token: w.user2.token), 101,
                        "Object not found.")
        }
    }

    /// One granular case: the permissions, who acts, the action and its object, and the expected answer
    /// (`nil`: allowed; a number: the results or count; otherwise the error code).
    private struct Case {
        let permissions: JSON
        let user: Int
        let action: String
        let target: Int
        let expect: Expectation
        enum Expectation { case allowed, results(Int), error(Int) }
    }

    /// Four objects, as the spec's `on array of pointers`: obj1 owned by user1, moderated by users 1–3; obj2
    /// owned by user2, moderated by users 2–3; obj3 owned and moderated by user3; one owned by nobody.
    /// Each case runs on a class of its own.
    private func runArrayCase(_ w: World, _ index: Int, _ c: Case, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let api = w.api
        let users = [w.user1, w.user2, w.user3]
        let className = "Arrays\(index)"
        let ptrs = { (list: [Int]) -> JSON in .array(list.map { pointer("_User", users[$0 - 1].id) }) }
        var ids: [String] = []
        for (owners, moderators) in [([1], [3, 2, 1]), ([2], [3, 2]), ([3], [3]), ([Int](), [Int]())] {
            ids.append(try await create(api, className, ["owners": ptrs(owners), "moderators": ptrs(moderators), "revision": 0]))
        }
        try await setPermissions(api, className, c.permissions, sourceLocation: sourceLocation)
        let token = users[c.user - 1].token
        let id = ids[c.target - 1]
        let response: TestResponse
        switch c.action {
        case "get": response = try await api.send("GET", "/classes/\(className)/\(id)", token: token)
        case "find": response = try await api.send("GET", "/classes/\(className)", token: token)
        case "count": response = try await api.send("GET", "/classes/\(className)", token: token, query: ["count": "1", "limit": "0"])
        case "create": response = try await api.send("POST", "/classes/\(className)", json: [:], token: token)
        case "addFieldOnCreate": response = try await api.send("POST", "/classes/\(className)", json: ["extra": "field"], token: token)
        case "addFieldOnUpdate": response = try await api.send("PUT", "/classes/\(className)/\(id)", json: ["another": "field"], token: token)
        case "update": response = try await api.send("PUT", "/classes/\(className)/\(id)", json: ["revision": 2], token: token)
        default: response = try await api.send("DELETE", "/classes/\(className)/\(id)", token: token)
        }
        switch c.expect {
        case .allowed: #expect(response.status < 300, "case \(index): \(response.text)", sourceLocation: sourceLocation)
        case .results(let n):
            let found = c.action == "count" ? response.json["count"]?.numberValue.map(Int.init) : response.json["results"]?.arrayValue?.count
            #expect(found == n, "case \(index): \(response.text)", sourceLocation: sourceLocation)
        case .error(let code):
            expectError(response, code, code == 101 ? "Object not found." : nil, sourceLocation: sourceLocation)
            if code == 119 {
                #expect(response.json["error"]?.stringValue?.hasPrefix("Permission denied") == true, "case \(index)", sourceLocation: sourceLocation)
            }
        }
    }

    // (Granular, on array of pointers:)
    // spec: PointerPermissions.spec.js: should be allowed (1 user in array)
    // spec: PointerPermissions.spec.js: should be allowed (multiple users in array)
    // spec: PointerPermissions.spec.js: should fail for user not listed
    // spec: PointerPermissions.spec.js: should not allow other actions
    // spec: PointerPermissions.spec.js: should be allowed (1 user in array)
    // spec: PointerPermissions.spec.js: should be allowed (multiple users in array)
    // spec: PointerPermissions.spec.js: should be limited to objects where user is listed in field
    // spec: PointerPermissions.spec.js: should not allow other actions
    // spec: PointerPermissions.spec.js: should be allowed
    // spec: PointerPermissions.spec.js: should be limited to objects where user is listed in field
    // spec: PointerPermissions.spec.js: should not allow other actions
    // spec: PointerPermissions.spec.js: should be allowed (1 user in array)
    // spec: PointerPermissions.spec.js: should be allowed (multiple users in array)
    // spec: PointerPermissions.spec.js: should fail for user not listed
    // spec: PointerPermissions.spec.js: should not allow other actions
    // spec: PointerPermissions.spec.js: should be allowed (1 user in array)
    // spec: PointerPermissions.spec.js: should be allowed (multiple users in array)
    // spec: PointerPermissions.spec.js: should fail for user not listed
    // spec: PointerPermissions.spec.js: should not allow other actions
    // spec: PointerPermissions.spec.js: should be denied (writelock) when no other permissions on class
    // spec: PointerPermissions.spec.js: should have no effect on create (allowed by explicit userid)
    // spec: PointerPermissions.spec.js: should be denied when creating object (and no explicit permission)
    // spec: PointerPermissions.spec.js: should be allowed when updating object
    // spec: PointerPermissions.spec.js: should be restricted when updating object without addField permission
    @Test func granularOnArrays() async throws {
        let w = try await world()
        let on = { (action: String, field: String) -> JSON in .object([action: ["pointerFields": [.string(field)]]]) }
        let others = { (except: String) -> [String] in
            ["get", "find", "count", "create", "update", "addFieldOnCreate", "delete"].filter { $0 != except }
        }
        var cases: [Case] = [
            Case(permissions: on("get", "owners"), user: 1, action: "get", target: 1, expect: .allowed),
            Case(permissions: on("get", "moderators"), user: 2, action: "get", target: 1, expect: .allowed),
            Case(permissions: on("get", "moderators"), user: 1, action: "get", target: 3, expect: .error(101)),
            Case(permissions: on("find", "owners"), user: 1, action: "find", target: 1, expect: .results(1)),
            Case(permissions: on("find", "moderators"), user: 2, action: "find", target: 1, expect: .results(2)),
            Case(permissions: on("find", "moderators"), user: 1, action: "find", target: 1, expect: .results(1)),
            Case(permissions: on("count", "moderators"), user: 1, action: "count", target: 1, expect: .results(1)),
            Case(permissions: on("count", "moderators"), user: 2, action: "count", target: 1, expect: .results(2)),
            Case(permissions: on("update", "owners"), user: 1, action: "update", target: 1, expect: .allowed),
            Case(permissions: on("update", "moderators"), user: 2, action: "update", target: 1, expect: .allowed),
            Case(permissions: on("update", "moderators"), user: 2, action: "update", target: 3, expect: .error(101)),
            Case(permissions: on("delete", "owners"), user: 1, action: "delete", target: 1, expect: .allowed),
            Case(permissions: on("delete", "moderators"), user: 3, action: "delete", target: 2, expect: .allowed),
            Case(permissions: on("delete", "owners"), user: 1, action: "delete", target: 3, expect: .error(101)),
            Case(permissions: on("create", "moderators"), user: 1, action: "create", target: 1, expect: .error(119)),
            Case(permissions: ["create": ["*": true], "addField": .object([w.user1.id: true, "pointerFields": ["moderators"]])],
                 user: 1, action: "addFieldOnCreate", target: 1, expect: .allowed),
            Case(permissions: ["create": ["*": true], "addField": ["pointerFields": ["moderators"]]],
                 user: 1, action: "addFieldOnCreate", target: 1, expect: .error(119)),
            Case(permissions: ["update": ["*": true], "addField": ["pointerFields": ["moderators"]]],
                 user: 2, action: "addFieldOnUpdate", target: 1, expect: .allowed),
            Case(permissions: ["update": ["*": true], "addField": ["pointerFields": ["moderators"]]],
                 user: 1, action: "addFieldOnUpdate", target: 2, expect: .error(101)),
        ]
        // Every other action is refused outright.
        for (action, field, target) in [("get", "owners", 2), ("find", "moderators", 1), ("count", "moderators", 1),
                                        ("update", "moderators", 1), ("delete", "moderators", 1)] {
            for other in others(action) {
                cases.append(Case(permissions: on(action, field), user: 1, action: other, target: target, expect: .error(119)))
            }
        }
        for (index, c) in cases.enumerated() { try await runArrayCase(w, index, c) }
    }

    // spec: PointerPermissions.spec.js: should not limit the scope of grouped read permissions
    // spec: PointerPermissions.spec.js: should not limit the scope of grouped write permissions
    // spec: PointerPermissions.spec.js: should not inherit scope of grouped read permissions from another field
    // spec: PointerPermissions.spec.js: should not inherit scope of grouped write permissions from another field
    // spec: PointerPermissions.spec.js: should be enforced regardless of pointer-field being included in keys (select)
    @Test func combinedWithGroupedAndKeys() async throws {
        let w = try await world()
        let api = w.api
        func objects(_ className: String) async throws -> (String, String) {
            let obj1 = try await create(api, className, ["owner": pointer("_User", w.user1.id), "moderators": [pointer("_User", w.user2.id)],
                                                         "revision": 0])
            let obj2 = try await create(api, className, ["owner": pointer("_User", w.user2.id),
                                                         "moderators": [pointer("_User", w.user1.id), pointer("_User", w.user2.id)], "revision": 0])
            return (obj1, obj2)
        }
        let count = ["count": "1", "limit": "0"]

        let (read1, _) = try await objects("GroupedRead")
        try await setPermissions(api, "GroupedRead", ["get": ["pointerFields": ["owner"]], "readUserFields": ["moderators"]])
        #expect(try await api.send("GET", "/classes/GroupedRead/\(read1)", token: w.user2.token).status == 200)
        #expect(resultIds(try await api.send("GET", "/classes/GroupedRead", token: w.user2.token)).count == 2)
        #expect(try await api.send("GET", "/classes/GroupedRead", token: w.user2.token, query: count).json["count"] == 2)
        #expect(resultIds(try await api.send("GET", "/classes/GroupedRead", token: w.user1.token)).count == 1)
        #expect(try await api.send("GET", "/classes/GroupedRead", token: w.user1.token, query: count).json["count"] == 1)

        let (write1, _) = try await objects("GroupedWrite")
        try await setPermissions(api, "GroupedWrite", ["update": ["pointerFields": ["owner"]], "writeUserFields": ["moderators"]])
        #expect(try await api.send("PUT", "/classes/GroupedWrite/\(write1)", json: ["revision": 2], token: w.user2.token).status == 200)
        #expect(try await api.send("PUT", "/classes/GroupedWrite/\(write1)", json: ["another": "field"], token: w.user2.token).status == 200)
        #expect(try await api.send("DELETE", "/classes/GroupedWrite/\(write1)", token: w.user2.token).status == 200)

        let (_, inherit2) = try await objects("Inherit")
        try await setPermissions(api, "Inherit", ["update": ["pointerFields": ["moderators"]], "writeUserFields": ["owner"]])
        expectError(try await api.send("DELETE", "/classes/Inherit/\(inherit2)", token: w.user1.token), 101, "Object not found.")

        // `keys` without the pointer field still applies it.
        let keyed = try await create(api, "Keyed", ["owner": pointer("_User", w.user1.id), "field": "field", "test": "test"])
        try await setPermissions(api, "Keyed", ["get": ["*": true], "find": ["pointerFields": ["owner"]], "update": ["pointerFields": ["owner"]]])
        let selected = try await api.send("GET", "/classes/Keyed", token: w.user1.token, query: ["keys": "field,test"])
        #expect(resultIds(selected) == [keyed])
        #expect(selected.json["results"]?.arrayValue?.first?["field"] == "field")
        #expect(selected.json["results"]?.arrayValue?.first?["test"] == "test")
        #expect(resultIds(try await api.send("GET", "/classes/Keyed", token: w.user2.token, query: ["keys": "field,test"])).isEmpty)
    }
}
