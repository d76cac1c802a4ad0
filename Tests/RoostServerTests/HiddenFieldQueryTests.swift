import Foundation
import RoostCore
import Testing

/// A field a caller may not read may not be matched, sorted or selected on either: otherwise a query
/// tests its value one guess at a time (an anonymous user's `authData.anonymous.id` was recovered in a
/// few hundred `$gte` queries, then used to log in as them). Parse answers 119 `This user is not allowed
/// to query <field> on class <C>` (`RestQuery.denyProtectedFields`); `authData` is never queryable by clients.
@Suite struct HiddenFieldQueryTests {
    struct Fixture {
        let api: RecordingServer
        let victim: Account
        let anonymousId: String
        let ann: Account
        let bob: Account
        let postId: String
    }

    /// A readable anonymous user, a readable registered user with an email and a protected `phone`, a
    /// Post by her, and an unrelated user.
    func fixture() async throws -> Fixture {
        let api = try RecordingServer()
        let anonymousId = "5f0c2b9e-61a4-4d0a-9e1b-0d1c2e3f4a5b"
        let signUp = try await api.anonymous(anonymousId)
        #expect(signUp.status == 201, "\(signUp.text)")
        let victim = Account(id: try #require(signUp.json["objectId"]?.stringValue), token: try #require(signUp.json["sessionToken"]?.stringValue))
        let ann = try await api.signUp("ann", "pw-ann", ["email": "ann@example.com", "phone": "555-0100"])
        let bob = try await api.signUp("bob", "pw-bob")
        for account in [victim, ann] {
            let publicRead: JSON = ["ACL": ["*": ["read": true], account.id: ["read": true, "write": true]]]
            #expect(try await api.send("PUT", "/users/\(account.id)", json: publicRead, token: account.token).status == 200)
        }
        let schema = try await api.send("PUT", "/schemas/_User", json: ["classLevelPermissions": openPermissions(["protectedFields": ["*": ["phone"]]])],
                                        master: true)
        #expect(schema.status == 200, "\(schema.text)")
        let post = try await api.send("POST", "/classes/Post", json: ["title": "hello", "author": pointer("_User", ann.id)])
        return Fixture(api: api, victim: victim, anonymousId: anonymousId, ann: ann, bob: bob,
                       postId: try #require(post.json["objectId"]?.stringValue))
    }

    func find(_ f: Fixture, _ path: String, _ parameters: [String: JSON], token: String? = nil, master: Bool = false) async throws -> TestResponse {
        var query: [String: String] = [:]
        for (name, value) in parameters { query[name] = value.stringValue ?? value.jsonText }
        return try await f.api.send("GET", path, token: token, master: master, query: query)
    }

    @Test func authDataIsNeverQueryableByClients() async throws {
        let f = try await fixture()
        let id = JSON.string(f.anonymousId)
        let probes: [JSON] = [
            ["authData.anonymous.id": ["$gte": "5"]],
            ["authData.anonymous.id": id],
            ["authData.anonymous.id": ["$regex": "^5f"]],
            ["authData": ["$exists": true]],
            ["authData.anonymous": ["$in": [["id": id]]]],
            ["$or": [["username": "nobody"], ["authData.anonymous.id": ["$lt": "6"]]]],
            ["$and": [["authData.anonymous.id": ["$gt": "5"]]]],
            ["$nor": [["authData.anonymous.id": ["$gt": "6"]]]],
            ["objectId": .string(f.victim.id), "authData.anonymous.id": id],  // Not even on one's own record.
        ]
        for probe in probes {
            for token in [nil, f.bob.token, f.victim.token] {
                for path in ["/users", "/classes/_User"] {
                    let response = try await find(f, path, ["where": probe], token: token)
                    expectError(response, 119, "This user is not allowed to query authData on class _User")
                }
            }
        }
        // Through a subquery from another class, and by count.
        let sub: JSON = ["className": "_User", "where": ["authData.anonymous.id": ["$gte": "5"]]]
        for probe: JSON in [["author": ["$inQuery": sub]], ["author": ["$notInQuery": sub]],
                            ["title": ["$select": ["query": ["className": "_User"], "key": "authData"]]],
                            ["title": ["$dontSelect": ["query": ["className": "_User"], "key": "authData.anonymous.id"]]]] {
            expectError(try await find(f, "/classes/Post", ["where": probe]), 119, "This user is not allowed to query authData on class _User")
        }
        expectError(try await find(f, "/users", ["where": probes[0], "count": 1, "limit": 0]), 119)
        // Parse never sorts by an auth id, not even for the master key; other hidden fields are not sortable by clients.
        expectError(try await find(f, "/users", ["order": "authData.anonymous.id"], master: true), 105, "Cannot sort by authData.anonymous.id")
        expectError(try await find(f, "/users", ["order": "-authData"]), 119, "This user is not allowed to query authData on class _User")
        // Fields Parse keeps internal are not even valid keys.
        expectError(try await find(f, "/users", ["where": ["_hashed_password": ["$exists": true]]]), 105, "Invalid key name: _hashed_password")

        // The master key may.
        let master = try await find(f, "/users", ["where": probes[0]], master: true)
        #expect(master.status == 200)
        #expect(master.json["results"]?.arrayValue?.map { $0["objectId"] } == [.string(f.victim.id)])
    }

    @Test func otherUsersEmailsAndProtectedFieldsAreNotQueryable() async throws {
        let f = try await fixture()
        let emailProbes: [JSON] = [
            ["email": "ann@example.com"], ["email": ["$regex": "^a"]], ["email": ["$gt": "a"]], ["email": ["$exists": true]],
            ["$or": [["email": ["$in": ["ann@example.com"]]]]],
        ]
        for probe in emailProbes {
            for token in [nil, f.bob.token, f.ann.token] {  // Ann too, unless her query is pinned to her objectId (as Parse).
                expectError(try await find(f, "/users", ["where": probe], token: token), 119, "This user is not allowed to query email on class _User")
            }
        }
        expectError(try await find(f, "/users", ["order": "email"], token: f.bob.token), 119, "This user is not allowed to query email on class _User")
        expectError(try await find(f, "/users", ["where": ["phone": ["$regex": "^555"]]], token: f.bob.token), 119,
                    "This user is not allowed to query phone on class _User")
        expectError(try await find(f, "/users", ["where": ["$or": [["phone.x": 1]]]]), 119, "This user is not allowed to query phone on class _User")
        let sub: JSON = ["className": "_User", "where": ["email": ["$regex": "^ann"]]]
        expectError(try await find(f, "/classes/Post", ["where": ["author": ["$inQuery": sub]]], token: f.bob.token), 119,
                    "This user is not allowed to query email on class _User")
        expectError(try await find(f, "/classes/Post", ["where": ["title": ["$select": ["query": ["className": "_User"], "key": "phone"]]]]), 119,
                    "This user is not allowed to query phone on class _User")

        // Ann's query pinned to her own objectId may use them, and shows them.
        let own = try await find(f, "/users", ["where": ["objectId": .string(f.ann.id), "email": "ann@example.com", "phone": "555-0100"]],
                                 token: f.ann.token)
        #expect(own.status == 200, "\(own.text)")
        #expect(own.json["results"]?.arrayValue?.first?["email"] == "ann@example.com")
        // `keys` names them without error and still shows nothing hidden; the master key queries anything.
        let keyed = try await find(f, "/users", ["where": ["username": "ann"], "keys": "email,phone,username"], token: f.bob.token)
        #expect(keyed.json["results"]?.arrayValue?.first?["username"] == "ann")
        #expect(keyed.json["results"]?.arrayValue?.first?["email"] == nil && keyed.json["results"]?.arrayValue?.first?["phone"] == nil)
        let master = try await find(f, "/users", ["where": ["email": "ann@example.com", "phone": "555-0100"]], master: true)
        #expect(master.json["results"]?.arrayValue?.count == 1)
    }

    @Test func includedUsersHideProtectedFields() async throws {
        let f = try await fixture()
        for token in [nil, f.bob.token] {
            let found = try await find(f, "/classes/Post", ["include": "author"], token: token)
            let author = try #require(found.json["results"]?.arrayValue?.first?["author"])
            #expect(author["username"] == "ann", "\(found.text)")
            #expect(author["phone"] == nil && author["email"] == nil && author["authData"] == nil, "\(found.text)")
            let got = try await f.api.send("GET", "/classes/Post/\(f.postId)", token: token, query: ["include": "author"])
            #expect(got.json["author"]?["username"] == "ann" && got.json["author"]?["phone"] == nil, "\(got.text)")
        }
        // Ann sees her own record whole, as on a direct get.
        let own = try await find(f, "/classes/Post", ["include": "author"], token: f.ann.token)
        #expect(own.json["results"]?.arrayValue?.first?["author"]?["phone"] == "555-0100")
    }

    @Test func protectedFieldsOfOtherClassesAreNotQueryable() async throws {
        let f = try await fixture()
        let api = f.api
        _ = try await api.send("POST", "/classes/Doc", json: ["title": "t", "secret": "s3cr3t", "nested": ["pin": 1234]])
        let clp = try await api.send("PUT", "/schemas/Doc", json: ["classLevelPermissions": openPermissions(["protectedFields": ["*": ["secret", "nested"]]])],
                                     master: true)
        #expect(clp.status == 200, "\(clp.text)")
        let probes: [JSON] = [
            ["secret": "s3cr3t"], ["secret": ["$regex": "^s"]], ["nested.pin": ["$gte": 1000]], ["$nor": [["secret": ["$ne": "x"]]]],
            ["secret": ["$text": ["$search": ["$term": "s3cr3t"]]]],
        ]
        for probe in probes {
            let response = try await find(f, "/classes/Doc", ["where": probe], token: f.bob.token)
            #expect(response.status == 400 && response.code == 119, "\(probe.jsonText): \(response.text)")
            #expect(response.json["error"]?.stringValue?.hasPrefix("This user is not allowed to query ") == true)
        }
        expectError(try await find(f, "/classes/Doc", ["order": "-nested.pin"]), 119, "This user is not allowed to query nested on class Doc")
        let sub: JSON = ["className": "Doc", "where": ["secret": "s3cr3t"]]
        expectError(try await find(f, "/classes/Post", ["where": ["title": ["$inQuery": sub]]]), 119, "This user is not allowed to query secret on class Doc")
        // Readable fields stay queryable; the master key queries everything.
        #expect(try await find(f, "/classes/Doc", ["where": ["title": "t"]]).json["results"]?.arrayValue?.count == 1)
        #expect(try await find(f, "/classes/Doc", ["where": ["secret": "s3cr3t"]], master: true).json["results"]?.arrayValue?.count == 1)
    }

    @Test func rolesAndSessionsHoldToTheSameRules() async throws {
        let f = try await fixture()
        let api = f.api
        let role = try await api.send("POST", "/roles", json: ["name": "Staff", "ACL": ["*": ["read": true]], "note": "door code 1234"],
                                      master: true)
        #expect(role.status == 201, "\(role.text)")
        let clp = try await api.send("PUT", "/schemas/_Role", json: ["classLevelPermissions": openPermissions(["protectedFields": ["*": ["note"]]])], master: true)
        #expect(clp.status == 200, "\(clp.text)")
        let refusal = "This user is not allowed to query note on class _Role"
        expectError(try await find(f, "/roles", ["where": ["note": ["$regex": "1234"]]], token: f.bob.token), 119, refusal)
        expectError(try await find(f, "/classes/_Role", ["order": "note"]), 119, refusal)
        expectError(try await find(f, "/classes/Post", ["where": ["title": ["$select": ["query": ["className": "_Role"], "key": "note"]]]]), 119, refusal)
        #expect(try await find(f, "/roles", ["where": ["name": "Staff"]], token: f.bob.token).json["results"]?.arrayValue?.first?["note"] == nil)

        // Sessions: a user queries only their own, and a subquery from another class finds none of anyone's.
        let others = try await find(f, "/sessions", ["where": ["user": pointer("_User", f.ann.id)]], token: f.bob.token)
        #expect(others.status == 200 && others.json["results"]?.arrayValue?.isEmpty == true, "\(others.text)")
        let sub: JSON = ["className": "_Session", "where": ["user": pointer("_User", f.ann.id)]]
        for probe: JSON in [["author": ["$select": ["query": sub, "key": "user"]]], ["objectId": ["$inQuery": sub]]] {
            let response = try await find(f, "/classes/Post", ["where": probe], token: f.bob.token)
            #expect(response.status != 200 || response.json["results"]?.arrayValue?.isEmpty == true, "\(probe.jsonText): \(response.text)")
        }
    }
}
