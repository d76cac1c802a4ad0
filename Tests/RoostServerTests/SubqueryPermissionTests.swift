import Foundation
import RoostCore
import Testing

/// A subquery is a find of the caller's on its class: that class's `pointerFields` and
/// `readUserFields` apply inside `$inQuery`, `$notInQuery`, `$select` and `$dontSelect` exactly as
/// on a direct find. Without them, a subquery matched objects the caller may not find, so their
/// fields could be tested value by value.
@Suite struct SubqueryPermissionTests {
    @Test func pointerFieldsApplyInsideSubqueries() async throws {
        let api = try RecordingServer()
        let alice = try await api.signUp("alice", "pw-alice")
        let bob = try await api.signUp("bob", "pw-bob")
        let vault = try await api.send("POST", "/classes/Vault", json: ["owner": pointer("_User", alice.id), "pin": "4711"])
        let vaultId = try #require(vault.json["objectId"]?.stringValue)
        // Bob's own objects: a reference to Alice's vault and a guess of its pin.
        _ = try await api.send("POST", "/classes/Ref", json: ["vault": pointer("Vault", vaultId), "guess": "4711"])
        for (className, key) in [("Vault", "pointerFields"), ("Locker", "readUserFields")] {
            if className == "Locker" {
                // Same data, granted through `readUserFields` instead.
                let locker = try await api.send("POST", "/classes/Locker", json: ["owner": pointer("_User", alice.id), "pin": "4711"])
                let lockerId = try #require(locker.json["objectId"]?.stringValue)
                _ = try await api.send("PUT", "/classes/Ref/\(try await refId(api))", json: ["locker": pointer("Locker", lockerId)])
            }
            let permissions: JSON = key == "pointerFields"
                ? ["find": ["pointerFields": ["owner"]], "get": ["pointerFields": ["owner"]]]
                : ["find": [:], "get": [:], "readUserFields": ["owner"]]
            let put = try await api.send("PUT", "/schemas/\(className)", json: ["classLevelPermissions": permissions], master: true)
            #expect(put.status == 200, "\(put.text)")
            let pointerKey = className == "Vault" ? "vault" : "locker"
            let inner: JSON = ["className": .string(className), "where": ["pin": "4711"]]

            // A direct find shows Bob nothing; Alice finds her own.
            #expect(try await count(api, className, [:], token: bob.token) == 0)
            #expect(try await count(api, className, [:], token: alice.token) == 1)

            // Each subquery answers Bob as if the class held nothing he may find, and Alice as it holds.
            let cases: [(JSON, matchesForOwner: Bool)] = [
                ([pointerKey: ["$inQuery": inner]], true),
                ([pointerKey: ["$notInQuery": inner]], false),
                (["guess": ["$select": ["query": inner, "key": "pin"]]], true),
                (["guess": ["$dontSelect": ["query": inner, "key": "pin"]]], false),
            ]
            for (probe, matchesForOwner) in cases {
                let forBob = try await count(api, "Ref", probe, token: bob.token)
                #expect(forBob == (matchesForOwner ? 0 : 1), "\(className) \(probe.jsonText) as bob: \(forBob)")
                let forAlice = try await count(api, "Ref", probe, token: alice.token)
                #expect(forAlice == (matchesForOwner ? 1 : 0), "\(className) \(probe.jsonText) as alice: \(forAlice)")
                #expect(try await count(api, "Ref", probe, token: nil) == (matchesForOwner ? 0 : 1))
            }
            // A caller without a session finds nothing either way, as in Parse (the old code refused the direct find with 119).
            #expect(try await count(api, className, [:], token: nil) == 0)
            // Nested one level deeper, too.
            let nested: JSON = [pointerKey: ["$inQuery": ["className": .string(className), "where": ["owner": ["$inQuery": ["className": "_User", "where": ["username": "alice"]]]]]]]
            #expect(try await count(api, "Ref", nested, token: bob.token) == 0)
        }
    }

    @Test func requiresAuthenticationAndAClosedFindApplyInsideSubqueries() async throws {
        let api = try RecordingServer()
        let carol = try await api.signUp("carol", "pw-carol")
        let team = try await api.send("POST", "/classes/Team", json: ["city": "Paris"])
        let teamId = try #require(team.json["objectId"]?.stringValue)
        _ = try await api.send("POST", "/classes/Player", json: ["team": pointer("Team", teamId)])
        _ = try await api.send("PUT", "/schemas/Team", json: ["classLevelPermissions": ["find": ["requiresAuthentication": true]]], master: true)
        let probe: JSON = ["team": ["$inQuery": ["className": "Team", "where": ["city": "Paris"]]]]
        expectError(try await api.send("GET", "/classes/Player", query: ["where": probe.jsonText]), 101,
                    "Permission denied, user needs to be authenticated.")
        #expect(try await count(api, "Player", probe, token: carol.token) == 1)
    }

    private func count(_ api: RecordingServer, _ className: String, _ constraint: JSON, token: String?) async throws -> Int {
        let response = try await api.send("GET", "/classes/\(className)", token: token, query: ["where": constraint.jsonText])
        guard response.status == 200, let results = response.json["results"]?.arrayValue else {
            throw TestServerError.unexpected(response.status, response.text)
        }
        return results.count
    }

    private func refId(_ api: RecordingServer) async throws -> String {
        let response = try await api.send("GET", "/classes/Ref", master: true)
        return try #require(response.json["results"]?.arrayValue?.first?["objectId"]?.stringValue)
    }
}
