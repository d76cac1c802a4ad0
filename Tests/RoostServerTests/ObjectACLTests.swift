import Foundation
import RoostCore
import Testing

/// Object ACLs on ordinary classes, end to end: who may get, find, count, update and delete an object,
/// directly and in a batch. An object the caller may not read answers exactly as a missing one.
@Suite struct ObjectACLTests {
    enum Access: String, CaseIterable, CustomTestStringConvertible {
        case noACL, publicRead, ownerOnly, masterOnly
        var testDescription: String { rawValue }

        /// The ACL sent on create (`nil`: none at all).
        func acl(owner: String) -> JSON? {
            switch self {
            case .noACL: nil
            case .publicRead: .object(["*": ["read": true], owner: ["read": true, "write": true]])
            case .ownerOnly: .object([owner: ["read": true, "write": true]])
            case .masterOnly: [:]
            }
        }

        func canRead(_ caller: Caller) -> Bool {
            switch (self, caller) {
            case (_, .master), (.noACL, _), (.publicRead, _): true
            case (.ownerOnly, .owner): true
            default: false
            }
        }

        func canWrite(_ caller: Caller) -> Bool {
            switch (self, caller) {
            case (_, .master), (.noACL, _): true
            case (.publicRead, .owner), (.ownerOnly, .owner): true
            default: false
            }
        }
    }

    enum Caller: String, CaseIterable, CustomTestStringConvertible {
        case nobody, owner, other, master
        var testDescription: String { rawValue }
    }

    /// Two users and a way to send requests as each kind of caller.
    struct Fixture {
        let api: RecordingServer
        let owner: Account
        let other: Account

        init() async throws {
            api = try RecordingServer()
            owner = try await api.signUp("owner", "pw-owner-acl")
            other = try await api.signUp("other", "pw-other-acl")
        }

        func send(_ caller: Caller, _ method: String, _ path: String, json: JSON? = nil,
                  query: [String: String] = [:]) async throws -> TestResponse {
            switch caller {
            case .nobody: try await api.send(method, path, json: json, query: query)
            case .owner: try await api.send(method, path, json: json, token: owner.token, query: query)
            case .other: try await api.send(method, path, json: json, token: other.token, query: query)
            case .master: try await api.send(method, path, json: json, master: true, query: query)
            }
        }

        /// Creates an object as the owner; `acl` nil sends none.
        func create(_ className: String, _ fields: [String: JSON], acl: JSON?) async throws -> String {
            var body = fields
            if let acl { body["ACL"] = acl }
            let response = try await api.send("POST", "/classes/\(className)", json: .object(body), token: owner.token)
            guard response.status == 201, let id = response.json["objectId"]?.stringValue else {
                throw TestServerError.unexpected(response.status, response.text)
            }
            return id
        }

        /// The object as the master key sees it (`.null` when it is gone).
        func stored(_ className: String, _ id: String) async throws -> JSON {
            let response = try await api.send("GET", "/classes/\(className)/\(id)", master: true)
            return response.status == 200 ? response.json : .null
        }

        func batch(_ caller: Caller, _ requests: [JSON]) async throws -> [JSON] {
            let response = try await send(caller, "POST", "/batch", json: ["requests": .array(requests)])
            guard response.status == 200, let items = response.json.arrayValue, items.count == requests.count else {
                throw TestServerError.unexpected(response.status, response.text)
            }
            return items
        }
    }

    static let missingId = "zzzzzzzzzz"

    @Test(arguments: Access.allCases, Caller.allCases)
    func permissionMatrix(access: Access, caller: Caller) async throws {
        let fixture = try await Fixture()
        let acl = access.acl(owner: fixture.owner.id)
        // A public object beside the one under test, so that queries are never trivially empty.
        let reference = try await fixture.create("Item", ["tag": "reference", "n": 0], acl: nil)
        let id = try await fixture.create("Item", ["tag": "probe", "n": 1], acl: acl)
        let readable = access.canRead(caller)
        let writable = access.canWrite(caller)
        let path = "/classes/Item/\(id)"
        let missingPath = "/classes/Item/\(Self.missingId)"
        let probe = #"{"tag":"probe"}"#

        // get
        let got = try await fixture.send(caller, "GET", path)
        let gotMissing = try await fixture.send(caller, "GET", missingPath)
        expectError(gotMissing, 101, "Object not found.")
        if readable {
            #expect(got.status == 200)
            #expect(got.json["objectId"] == .string(id))
            #expect(got.json["n"] == 1)
            #expect(got.json["ACL"] == acl)
        } else {
            #expect(got.status == gotMissing.status)
            #expect(got.body == gotMissing.body, "\(got.text)")
        }

        // find, with and without a constraint
        let found = try await fixture.send(caller, "GET", "/classes/Item", query: ["where": probe])
        #expect(found.status == 200)
        #expect(found.json["results"]?.arrayValue?.map { $0["objectId"] } == (readable ? [.string(id)] : []))
        let all = try await fixture.send(caller, "GET", "/classes/Item")
        let allIds = Set(all.json["results"]?.arrayValue?.compactMap { $0["objectId"]?.stringValue } ?? [])
        #expect(allIds == (readable ? [reference, id] : [reference]))
        let byId = try await fixture.send(caller, "GET", "/classes/Item", query: ["where": #"{"objectId":"\#(id)"}"#])
        #expect(byId.json["results"]?.arrayValue?.count == (readable ? 1 : 0))

        // count
        let counted = try await fixture.send(caller, "GET", "/classes/Item", query: ["where": probe, "count": "1", "limit": "0"])
        #expect(counted.json == ["results": [], "count": readable ? 1 : 0])
        let countedAll = try await fixture.send(caller, "GET", "/classes/Item", query: ["count": "1"])
        #expect(countedAll.json["count"] == (readable ? 2 : 1))
        #expect(countedAll.json["results"]?.arrayValue?.count == (readable ? 2 : 1))

        // batch get
        let batchGet = try await fixture.batch(caller, [
            ["method": "GET", "path": .string("/parse" + path)],
            ["method": "GET", "path": .string("/parse" + missingPath)],
        ])
        #expect(batchGet[1] == ["error": ["code": 101, "error": "Object not found."]])
        if readable {
            #expect(batchGet[0]["success"]?["objectId"] == .string(id))
        } else {
            #expect(batchGet[0] == batchGet[1])
        }

        // update
        let increment: JSON = ["n": ["__op": "Increment", "amount": 1]]
        let updated = try await fixture.send(caller, "PUT", path, json: increment)
        let updatedMissing = try await fixture.send(caller, "PUT", missingPath, json: increment)
        expectError(updatedMissing, 101, "Object not found.")
        if writable {
            #expect(updated.status == 200)
            #expect(updated.json["n"] == 2)
        } else {
            #expect(updated.status == updatedMissing.status)
            #expect(updated.body == updatedMissing.body, "\(updated.text)")
        }
        #expect(try await fixture.stored("Item", id)["n"] == (writable ? 2 : 1))

        // an ACL change is a write like any other
        let open: JSON = ["*": ["read": true, "write": true]]
        let opened = try await fixture.send(caller, "PUT", path, json: ["ACL": open])
        #expect(opened.status == (writable ? 200 : 404))
        #expect(try await fixture.stored("Item", id)["ACL"] == (writable ? open : acl))
        if writable, let acl {
            // Put the ACL back for the remaining steps (without an ACL, public read and write is the same access).
            let restored = try await fixture.send(.master, "PUT", path, json: ["ACL": acl])
            #expect(restored.status == 200)
            #expect(try await fixture.stored("Item", id)["ACL"] == acl)
        }

        // batch update
        let batchUpdate = try await fixture.batch(caller, [
            ["method": "PUT", "path": .string("/parse" + path), "body": increment],
            ["method": "PUT", "path": .string("/parse" + missingPath), "body": increment],
        ])
        #expect(batchUpdate[1] == ["error": ["code": 101, "error": "Object not found."]])
        if writable {
            #expect(batchUpdate[0]["success"]?["n"] == 3)
        } else {
            #expect(batchUpdate[0] == batchUpdate[1])
        }
        #expect(try await fixture.stored("Item", id)["n"] == (writable ? 3 : 1))

        // delete
        let deleted = try await fixture.send(caller, "DELETE", path)
        let deletedMissing = try await fixture.send(caller, "DELETE", missingPath)
        expectError(deletedMissing, 101, "Object not found.")
        if writable {
            #expect(deleted.status == 200)
            #expect(deleted.json == [:])
            #expect(try await fixture.stored("Item", id) == .null)
        } else {
            #expect(deleted.status == deletedMissing.status)
            #expect(deleted.body == deletedMissing.body, "\(deleted.text)")
            #expect(try await fixture.stored("Item", id)["n"] == 1)
        }
        // The reference object was never touched.
        #expect(try await fixture.stored("Item", reference)["n"] == 0)
        fixture.api.expectNeverShown(["pw-owner-acl", "pw-other-acl"])
    }

    @Test(arguments: Caller.allCases)
    func batchDeleteHonoursTheACL(caller: Caller) async throws {
        let fixture = try await Fixture()
        var ids: [Access: String] = [:]
        for access in Access.allCases {
            ids[access] = try await fixture.create("Item", ["kind": .string(access.rawValue)], acl: access.acl(owner: fixture.owner.id))
        }
        let items = try await fixture.batch(caller, Access.allCases.map { access in
            ["method": "DELETE", "path": .string("/parse/classes/Item/\(ids[access]!)")]
        })
        for (access, item) in zip(Access.allCases, items) {
            if access.canWrite(caller) {
                #expect(item == ["success": [:]], "\(access)")
                #expect(try await fixture.stored("Item", ids[access]!) == .null, "\(access)")
            } else {
                #expect(item == ["error": ["code": 101, "error": "Object not found."]], "\(access)")
                #expect(try await fixture.stored("Item", ids[access]!) != .null, "\(access)")
            }
        }
    }

    /// `include` fetches the pointed-to objects with the caller's ACL: one it may not read is left out, as Parse does.
    @Test(arguments: Caller.allCases)
    func includeHonoursTheACL(caller: Caller) async throws {
        let fixture = try await Fixture()
        var targets: [Access: String] = [:]
        var holders: [Access: String] = [:]
        for access in Access.allCases {
            let target = try await fixture.create("Item", ["n": 1], acl: access.acl(owner: fixture.owner.id))
            targets[access] = target
            holders[access] = try await fixture.create("Holder", ["kind": .string(access.rawValue), "item": pointer("Item", target)], acl: nil)
        }
        let found = try await fixture.send(caller, "GET", "/classes/Holder", query: ["include": "item"])
        let results = found.json["results"]?.arrayValue ?? []
        #expect(results.count == 4, "\(found.text)")
        for access in Access.allCases {
            let got = try await fixture.send(caller, "GET", "/classes/Holder/\(holders[access]!)", query: ["include": "item"])
            let inFind = results.first { $0["objectId"] == .string(holders[access]!) }
            for item in [got.json["item"], inFind?["item"]] {
                if access.canRead(caller) {
                    #expect(item?["__type"] == "Object", "\(access): \(item.map(\.jsonText) ?? "nil")")
                    #expect(item?["objectId"] == .string(targets[access]!), "\(access)")
                    #expect(item?["n"] == 1, "\(access)")
                } else {
                    // Parse's `replacePointers` puts `undefined` there, so the key is left out.
                    #expect(item == nil, "\(access): \(item.map(\.jsonText) ?? "nil")")
                }
            }
        }
    }

    /// The ACL is part of the query, so limits, skips, order and counts apply to the readable objects only.
    @Test func pagingAndCountsSeeOnlyReadableObjects() async throws {
        let fixture = try await Fixture()
        var readableByOther: [String] = []
        for n in 0..<20 {
            let access: Access = [.ownerOnly, .publicRead, .masterOnly, .noACL][n % 4]
            let id = try await fixture.create("Item", ["n": .number(Double(n))], acl: access.acl(owner: fixture.owner.id))
            if access.canRead(.other) { readableByOther.append(id) }
        }
        #expect(readableByOther.count == 10)
        let firstPage = try await fixture.send(.other, "GET", "/classes/Item", query: ["order": "n", "limit": "4", "count": "1"])
        #expect(firstPage.json["count"] == 10)
        #expect(firstPage.json["results"]?.arrayValue?.compactMap { $0["objectId"]?.stringValue } == Array(readableByOther[0..<4]))
        let secondPage = try await fixture.send(.other, "GET", "/classes/Item", query: ["order": "n", "limit": "4", "skip": "4"])
        #expect(secondPage.json["results"]?.arrayValue?.compactMap { $0["objectId"]?.stringValue } == Array(readableByOther[4..<8]))
        let lastPage = try await fixture.send(.other, "GET", "/classes/Item", query: ["order": "-n", "limit": "3"])
        #expect(lastPage.json["results"]?.arrayValue?.compactMap { $0["objectId"]?.stringValue } == readableByOther.reversed().prefix(3).map { $0 })
        let ranged = try await fixture.send(.other, "GET", "/classes/Item", query: ["where": #"{"n":{"$gte":10}}"#, "count": "1", "limit": "0"])
        #expect(ranged.json["count"] == 5)
        let ownerCount = try await fixture.send(.owner, "GET", "/classes/Item", query: ["count": "1", "limit": "0"])
        #expect(ownerCount.json["count"] == 15)
        let nobodyCount = try await fixture.send(.nobody, "GET", "/classes/Item", query: ["count": "1", "limit": "0"])
        #expect(nobodyCount.json["count"] == 10)
        let masterCount = try await fixture.send(.master, "GET", "/classes/Item", query: ["count": "1", "limit": "0"])
        #expect(masterCount.json["count"] == 20)
    }

    @Test func aclChangesApplyToTheNextRequest() async throws {
        let fixture = try await Fixture()
        let id = try await fixture.create("Item", ["n": 1], acl: Access.ownerOnly.acl(owner: fixture.owner.id))
        let path = "/classes/Item/\(id)"
        expectError(try await fixture.send(.other, "GET", path), 101)

        // Shared with the other user for reading only.
        let shared: JSON = .object([fixture.owner.id: ["read": true, "write": true], fixture.other.id: ["read": true]])
        #expect(try await fixture.send(.owner, "PUT", path, json: ["ACL": shared]).status == 200)
        #expect(try await fixture.send(.other, "GET", path).json["ACL"] == shared)
        expectError(try await fixture.send(.nobody, "GET", path), 101)
        expectError(try await fixture.send(.other, "PUT", path, json: ["n": 5]), 101)
        expectError(try await fixture.send(.other, "PUT", path, json: ["ACL": ["*": ["read": true, "write": true]]]), 101)
        #expect(try await fixture.stored("Item", id)["ACL"] == shared)

        // Then for writing too: the other user may now update, and even lock the owner out.
        let both: JSON = .object([fixture.owner.id: ["read": true, "write": true], fixture.other.id: ["read": true, "write": true]])
        #expect(try await fixture.send(.owner, "PUT", path, json: ["ACL": both]).status == 200)
        #expect(try await fixture.send(.other, "PUT", path, json: ["n": 5]).status == 200)
        let otherOnly: JSON = .object([fixture.other.id: ["read": true, "write": true]])
        #expect(try await fixture.send(.other, "PUT", path, json: ["ACL": otherOnly]).status == 200)
        expectError(try await fixture.send(.owner, "GET", path), 101)
        expectError(try await fixture.send(.owner, "DELETE", path), 101)
        #expect(try await fixture.send(.other, "GET", path).json["n"] == 5)

        // Master only, then back to public by the master key.
        #expect(try await fixture.send(.other, "PUT", path, json: ["ACL": [:]]).status == 200)
        expectError(try await fixture.send(.other, "GET", path), 101)
        expectError(try await fixture.send(.other, "PUT", path, json: ["ACL": otherOnly]), 101)
        #expect(try await fixture.send(.master, "GET", path).json["ACL"] == [:])
        #expect(try await fixture.send(.master, "PUT", path, json: ["ACL": ["*": ["read": true, "write": true]]]).status == 200)
        #expect(try await fixture.send(.nobody, "GET", path).status == 200)
        #expect(try await fixture.send(.nobody, "DELETE", path).status == 200)
    }

    /// `"ACL": null` in an update: Parse drops it (the ACL stays as it was); clearing the ACL (public) would
    /// grant the same access here. Either way the object stays public and never reads back as `"ACL": null`.
    @Test(arguments: [Caller.master, .owner], [true, false])
    func nullACLInAnUpdateLocksNobodyOut(caller: Caller, startsWithACL: Bool) async throws {
        let fixture = try await Fixture()
        let id = try await fixture.create("Item", ["n": 1], acl: startsWithACL ? ["*": ["read": true, "write": true]] : nil)
        let response = try await fixture.send(caller, "PUT", "/classes/Item/\(id)", json: ["ACL": nil])
        #expect(response.status == 200, "\(response.text)")
        let stored = try await fixture.stored("Item", id)
        #expect(stored["ACL"] != .null, "\(stored)")
        let seen = try await fixture.send(.nobody, "GET", "/classes/Item/\(id)")
        #expect(seen.status == 200, "\(seen.text)")
        let updated = try await fixture.send(.other, "PUT", "/classes/Item/\(id)", json: ["n": ["__op": "Increment", "amount": 1]])
        #expect(updated.status == 200, "\(updated.text)")
    }

    /// `"ACL": null` on create is no ACL at all (Parse drops a null ACL): the object is public.
    @Test func nullACLOnCreateMeansPublic() async throws {
        let fixture = try await Fixture()
        let created = try await fixture.send(.owner, "POST", "/classes/Item", json: ["n": 1, "ACL": nil])
        #expect(created.status == 201)
        let id = try #require(created.json["objectId"]?.stringValue)
        #expect(try await fixture.stored("Item", id)["ACL"] == nil)
        #expect(try await fixture.send(.nobody, "GET", "/classes/Item/\(id)").status == 200)
        #expect(try await fixture.send(.other, "PUT", "/classes/Item/\(id)", json: ["n": 2]).status == 200)
    }

    /// Missing flags and `false` grant nothing; a user's entry grants nothing to anyone else, the creator included.
    @Test func onlyTrueFlagsGrantAccess() async throws {
        let fixture = try await Fixture()
        let forOther = try await fixture.create("Item", ["k": "for other"], acl: .object([fixture.other.id: ["read": true, "write": true]]))
        expectError(try await fixture.send(.owner, "GET", "/classes/Item/\(forOther)"), 101)
        #expect(try await fixture.send(.other, "GET", "/classes/Item/\(forOther)").status == 200)

        let falseFlags = try await fixture.create("Item", ["k": "false flags"], acl: [
            "*": ["read": false, "write": false], fixture.other.id: ["read": true, "write": false],
        ])
        expectError(try await fixture.send(.nobody, "GET", "/classes/Item/\(falseFlags)"), 101)
        expectError(try await fixture.send(.owner, "GET", "/classes/Item/\(falseFlags)"), 101)
        #expect(try await fixture.send(.other, "GET", "/classes/Item/\(falseFlags)").status == 200)
        expectError(try await fixture.send(.other, "PUT", "/classes/Item/\(falseFlags)", json: ["k": "changed"]), 101)
        expectError(try await fixture.send(.other, "DELETE", "/classes/Item/\(falseFlags)"), 101)

        let readOnlyPublic = try await fixture.create("Item", ["k": "read only"], acl: ["*": ["read": true]])
        #expect(try await fixture.send(.nobody, "GET", "/classes/Item/\(readOnlyPublic)").status == 200)
        for caller in [Caller.nobody, .owner, .other] {
            expectError(try await fixture.send(caller, "PUT", "/classes/Item/\(readOnlyPublic)", json: ["k": "changed"]), 101)
        }
        #expect(try await fixture.stored("Item", readOnlyPublic)["k"] == "read only")

        let seenByOther = try await fixture.send(.other, "GET", "/classes/Item", query: ["count": "1"])
        #expect(Set(seenByOther.json["results"]?.arrayValue?.compactMap { $0["objectId"]?.stringValue } ?? [])
                == [forOther, falseFlags, readOnlyPublic])
        #expect(seenByOther.json["count"] == 3)
    }
}
