import Foundation
import RoostCore
import Testing

/// `$inQuery`, `$notInQuery`, `$select`, `$dontSelect`: subqueries on another class, run with the rights
/// of the caller.
@Suite struct SubqueryTests {
    struct Fixture {
        let server: TestServer
        let alice: Account
        /// Team ids by name: Lions, Tigers, Bears (public), Ghosts (alice only).
        let teams: [String: String]
    }

    func fixture() async throws -> Fixture {
        let server = try TestServer(arguments: fastHashing)
        let alice = try await server.signUpAccount("alice")
        let leagues = try await server.createAll("League", [["name": "Top"], ["name": "Low"]])
        let lions = try await server.create("Team", ["name": "Lions", "city": "Paris", "info": ["code": "LN"],
                                                     "league": pointer("League", leagues[0])])
        let tigers = try await server.create("Team", ["name": "Tigers", "city": "Berlin", "info": ["code": "TG"],
                                                      "league": pointer("League", leagues[0])])
        let bears = try await server.create("Team", ["name": "Bears", "city": "Paris", "league": pointer("League", leagues[1])])
        let ghosts = try await server.create("Team", ["name": "Ghosts", "city": "Paris", "ACL": privateACL(alice.id)],
                                             token: alice.token)
        _ = try await server.createAll("Player", [
            ["name": "ann", "team": pointer("Team", lions), "teamName": "Lions", "code": "LN"],
            ["name": "ben", "team": pointer("Team", tigers), "teamName": "Tigers", "code": "XX"],
            ["name": "cat", "team": pointer("Team", bears), "teamName": "Bears"],
            ["name": "dan", "team": pointer("Team", ghosts), "teamName": "Ghosts"],
            ["name": "eve", "teamName": "Nobody"],
            ["name": "fay", "teams": [pointer("Team", lions), pointer("Team", tigers)]],
        ])
        return Fixture(server: server, alice: alice, teams: ["Lions": lions, "Tigers": tigers, "Bears": bears, "Ghosts": ghosts])
    }

    let paris: JSON = ["className": "Team", "where": ["city": "Paris"]]

    @Test func inQueryAndNotInQuery() async throws {
        let f = try await fixture()
        let s = f.server
        #expect(try await s.names("Player", where: ["team": ["$inQuery": paris]]) == ["ann", "cat"])
        #expect(try await s.names("Player", where: ["team": ["$notInQuery": paris]]) == ["ben", "dan", "eve", "fay"])
        #expect(try await s.names("Player", where: ["team": ["$inQuery": ["className": "Team", "where": [:]]]])
                == ["ann", "ben", "cat"])
        // An array of pointers matches when one element does.
        let tigers: JSON = ["className": "Team", "where": ["name": "Tigers"]]
        #expect(try await s.names("Player", where: ["teams": ["$inQuery": tigers]]) == ["fay"])
        #expect(try await s.names("Player", where: ["teams": ["$notInQuery": tigers]]) == ["ann", "ben", "cat", "dan", "eve"])
        // Combined with other constraints and inside $or.
        #expect(try await s.names("Player", where: ["team": ["$inQuery": paris], "name": ["$ne": "ann"]]) == ["cat"])
        #expect(try await s.names("Player", where: ["$or": [["team": ["$inQuery": tigers]], ["name": "eve"]]]) == ["ben", "eve"])
        #expect(try await s.names("Player", where: ["team": ["$inQuery": paris,
                                                             "$notInQuery": ["className": "Team", "where": ["name": "Bears"]]]])
                == ["ann"])
        // A subquery on a class that does not exist matches nothing.
        let missing: JSON = ["className": "NoSuchClass", "where": [:]]
        #expect(try await s.names("Player", where: ["team": ["$inQuery": missing]]) == [])
        #expect(try await s.names("Player", where: ["team": ["$notInQuery": missing]]) == ["ann", "ben", "cat", "dan", "eve", "fay"])
    }

    @Test func nestedSubqueries() async throws {
        let f = try await fixture()
        let top: JSON = ["className": "League", "where": ["name": "Top"]]
        let topTeams: JSON = ["className": "Team", "where": ["league": ["$inQuery": top]]]
        #expect(try await f.server.names("Player", where: ["team": ["$inQuery": topTeams]]) == ["ann", "ben"])
        #expect(try await f.server.names("Player", where: ["teams": ["$inQuery": topTeams]]) == ["fay"])
        let lowTeamNames: JSON = ["query": ["className": "Team", "where": ["league": ["$inQuery": ["className": "League",
                                                                                                   "where": ["name": "Low"]]]]],
                                  "key": "name"]
        #expect(try await f.server.names("Player", where: ["teamName": ["$select": lowTeamNames]]) == ["cat"])
    }

    @Test func subqueriesSeeOnlyWhatTheCallerMayRead() async throws {
        let f = try await fixture()
        let s = f.server
        // The private team is in alice's subquery results only.
        #expect(try await s.names("Player", where: ["team": ["$inQuery": paris]], token: f.alice.token) == ["ann", "cat", "dan"])
        #expect(try await s.names("Player", where: ["team": ["$notInQuery": paris]], token: f.alice.token) == ["ben", "eve", "fay"])
        #expect(try await s.names("Player", where: ["team": ["$inQuery": paris]], master: true) == ["ann", "cat", "dan"])
        let select: JSON = ["query": paris, "key": "name"]
        #expect(try await s.names("Player", where: ["teamName": ["$select": select]]) == ["ann", "cat"])
        #expect(try await s.names("Player", where: ["teamName": ["$select": select]], token: f.alice.token) == ["ann", "cat", "dan"])
        #expect(try await s.names("Player", where: ["teamName": ["$dontSelect": select]]) == ["ben", "dan", "eve", "fay"])
        #expect(try await s.names("Player", where: ["teamName": ["$dontSelect": select]], token: f.alice.token)
                == ["ben", "eve", "fay"])
        // Counting goes through the same filter.
        let count = try await s.query("Player", ["where": ["team": ["$inQuery": paris]], "count": 1, "limit": 0])
        #expect(count.json == ["results": [], "count": 2])
        // Asking for the hidden team by name finds nothing for others.
        let ghosts: JSON = ["className": "Team", "where": ["name": "Ghosts"]]
        #expect(try await s.names("Player", where: ["team": ["$inQuery": ghosts]]) == [])
        #expect(try await s.names("Player", where: ["team": ["$inQuery": ghosts]], token: f.alice.token) == ["dan"])
    }

    @Test func selectAndDontSelect() async throws {
        let f = try await fixture()
        let s = f.server
        let select: JSON = ["query": paris, "key": "name"]
        #expect(try await s.names("Player", where: ["teamName": ["$select": select]]) == ["ann", "cat"])
        #expect(try await s.names("Player", where: ["teamName": ["$dontSelect": select]]) == ["ben", "dan", "eve", "fay"])
        // The iOS SDK leaves `where` out: every object of the class.
        let everyTeam: JSON = ["query": ["className": "Team"], "key": "name"]
        #expect(try await s.names("Player", where: ["teamName": ["$select": everyTeam]]) == ["ann", "ben", "cat"])
        // A dot path as the selected key.
        let codes: JSON = ["query": ["className": "Team", "where": ["info": ["$exists": true]]], "key": "info.code"]
        #expect(try await s.names("Player", where: ["code": ["$select": codes]]) == ["ann"])
        // Built-in keys can be selected: players named after a team's objectId (none), and the reverse.
        let ids: JSON = ["query": ["className": "Team", "where": [:]], "key": "objectId"]
        #expect(try await s.names("Player", where: ["name": ["$select": ids]]) == [])
        // Combined with another constraint on the same key.
        #expect(try await s.names("Player", where: ["teamName": ["$select": select, "$ne": "Bears"]]) == ["ann"])
    }

    /// A subquery is a find on its class: the class-level permissions of that class apply, as Parse runs
    /// it as a query of the caller's (119 when the caller may not find there).
    @Test func subqueriesRespectClassLevelPermissions() async throws {
        let f = try await fixture()
        let s = f.server
        let permissions: JSON = [
            "find": [:], "count": [:], "get": [:], "create": ["*": true], "update": ["*": true], "delete": ["*": true],
            "addField": ["*": true],
        ]
        let put = try await s.request("PUT", "/schemas/Team", json: ["classLevelPermissions": permissions], master: true)
        #expect(put.status == 200, "\(put.text)")
        // Direct queries are refused.
        expectParseError(try await s.query("Team", ["where": ["city": "Paris"]]), 119,
                         "Permission denied for action find on class Team.")
        // And so are subqueries, which would otherwise let a client probe the class.
        let probes: [JSON] = [
            ["team": ["$inQuery": paris]],
            ["team": ["$notInQuery": paris]],
            ["teamName": ["$select": ["query": paris, "key": "name"]]],
            ["teamName": ["$dontSelect": ["query": paris, "key": "name"]]],
        ]
        let refusal: JSON = ["code": 119, "error": "Permission denied for action find on class Team."]
        for probe in probes {
            for token in [nil, f.alice.token] {
                let response = try await s.query("Player", ["where": probe], token: token)
                #expect(response.status == 400 && response.json == refusal,
                        "\(probe.jsonText) as \(token == nil ? "anonymous" : "alice"): \(response.status) \(response.text)")
            }
        }
        // The master key is not bound by them.
        #expect(try await s.names("Player", where: ["team": ["$inQuery": paris]], master: true) == ["ann", "cat", "dan"])
    }

    @Test func malformedSubqueriesAre102() async throws {
        let f = try await fixture()
        let s = f.server
        let cases: [(JSON, String)] = [
            (["team": ["$inQuery": ["className": "Team"]]], "improper usage of $inQuery"),
            (["team": ["$inQuery": ["where": [:]]]], "improper usage of $inQuery"),
            (["team": ["$notInQuery": ["className": "Team"]]], "improper usage of $notInQuery"),
            (["teamName": ["$select": ["query": paris]]], "improper usage of $select"),
            (["teamName": ["$select": ["key": "name"]]], "improper usage of $select"),
            (["teamName": ["$select": ["query": paris, "key": "name", "extra": 1]]], "improper usage of $select"),
            (["teamName": ["$select": ["query": ["where": [:]], "key": "name"]]], "improper usage of $select"),
            (["teamName": ["$dontSelect": ["query": paris]]], "improper usage of $dontSelect"),
        ]
        for (constraint, message) in cases {
            let response = try await s.query("Player", ["where": constraint])
            expectParseError(response, 102, message)
        }
        // A bad key inside a subquery is refused as at the top level.
        let badKey = try await s.query("Player", ["where": ["team": ["$inQuery": ["className": "Team", "where": ["bad-key": 1]]]]])
        expectParseError(badKey, 105, "Invalid key name: bad-key")
    }
}
