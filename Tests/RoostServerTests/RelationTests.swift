import Foundation
import RoostCore
import Testing

/// Relation fields: `AddRelation`/`RemoveRelation`/`Batch` operations, the `{"__type":"Relation"}`
/// marker, `$relatedTo`, and a relation field compared to a pointer.
@Suite struct RelationTests {
    struct Fixture {
        let server: TestServer
        /// Pin ids by name: p1 … p4.
        let pins: [String: String]
    }

    func fixture(arguments: [String] = []) async throws -> Fixture {
        let server = try TestServer(arguments: arguments)
        let ids = try await server.createAll("Pin", [["name": "p1", "n": 1], ["name": "p2", "n": 2], ["name": "p3", "n": 3],
                                                     ["name": "p4", "n": 4]])
        return Fixture(server: server, pins: Dictionary(uniqueKeysWithValues: zip(["p1", "p2", "p3", "p4"], ids)))
    }

    func pin(_ f: Fixture, _ name: String) -> JSON { pointer("Pin", f.pins[name]!) }

    func relation(_ op: String, _ pins: [JSON]) -> JSON { ["__op": .string(op), "objects": .array(pins)] }

    /// The names of the pins in `board`'s `pins` relation, sorted.
    func related(_ f: Fixture, _ board: String, key: String = "pins", extra: [String: JSON] = [:], token: String? = nil,
                 sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String] {
        var constraint = extra
        constraint["$relatedTo"] = ["object": pointer("Board", board), "key": .string(key)]
        return try await f.server.names("Pin", where: .object(constraint), token: token, sourceLocation: sourceLocation)
    }

    @Test func relationOperationsAndRelatedTo() async throws {
        let f = try await fixture()
        let s = f.server
        // AddRelation on create.
        let board = try await s.create("Board", ["name": "b1", "pins": relation("AddRelation", [pin(f, "p1"), pin(f, "p2")])])
        #expect(try await related(f, board) == ["p1", "p2"])

        // AddRelation on update; the response does not echo the relation.
        let added = try await s.update("Board", board, ["pins": relation("AddRelation", [pin(f, "p3")])])
        #expect(added.json["pins"] == nil)
        #expect(isParseISODate(added.json["updatedAt"]?.stringValue))
        #expect(try await related(f, board) == ["p1", "p2", "p3"])

        // RemoveRelation.
        try await s.update("Board", board, ["pins": relation("RemoveRelation", [pin(f, "p1")])])
        #expect(try await related(f, board) == ["p2", "p3"])

        // Both in one save, through Batch.
        try await s.update("Board", board, ["pins": ["__op": "Batch", "ops": [
            relation("AddRelation", [pin(f, "p1")]), relation("RemoveRelation", [pin(f, "p2"), pin(f, "p3")]),
        ]]])
        #expect(try await related(f, board) == ["p1"])

        // Adding twice keeps one pair; removing a pin that is not there changes nothing.
        try await s.update("Board", board, ["pins": relation("AddRelation", [pin(f, "p1")])])
        try await s.update("Board", board, ["pins": relation("RemoveRelation", [pin(f, "p4")])])
        #expect(try await related(f, board) == ["p1"])
        let counted = try await s.query("Pin", ["count": 1, "limit": 0,
                                                "where": ["$relatedTo": ["object": pointer("Board", board), "key": "pins"]]])
        #expect(counted.json == ["results": [], "count": 1])

        // Other fields of the save still apply.
        try await s.update("Board", board, ["name": "renamed", "pins": relation("AddRelation", [pin(f, "p4")])])
        #expect(try await s.fetch("Board", board)["name"] == "renamed")
        #expect(try await related(f, board) == ["p1", "p4"])
    }

    @Test func relatedToWithOtherConstraintsAndOptions() async throws {
        let f = try await fixture()
        let s = f.server
        let board = try await s.create("Board", ["pins": relation("AddRelation", ["p1", "p2", "p3"].map { pin(f, $0) })])
        let other = try await s.create("Board", ["pins": relation("AddRelation", [pin(f, "p4")])])
        #expect(try await related(f, board, extra: ["n": ["$gte": 2]]) == ["p2", "p3"])
        #expect(try await related(f, board, extra: ["name": ["$ne": "p1"]]) == ["p2", "p3"])
        #expect(try await related(f, other) == ["p4"])
        let ordered = try await s.orderedNames("Pin", ["where": ["$relatedTo": ["object": pointer("Board", board), "key": "pins"]],
                                                         "order": "-n", "limit": 2])
        #expect(ordered == ["p3", "p2"])
        // Inside $or: the relation of either board.
        let either = try await s.names("Pin", where: ["$or": [
            ["$relatedTo": ["object": pointer("Board", other), "key": "pins"]], ["name": "p1"],
        ]])
        #expect(either == ["p1", "p4"])
        // A missing owner, or a key that is not a relation: no results.
        #expect(try await related(f, "missing000") == [])
        #expect(try await related(f, board, key: "nothing") == [])
    }

    @Test func theOwnerShowsARelationMarker() async throws {
        let f = try await fixture()
        let s = f.server
        let board = try await s.create("Board", ["name": "b1", "pins": relation("AddRelation", [pin(f, "p1")])])
        let marker: JSON = ["__type": "Relation", "className": "Pin"]
        #expect(try await s.fetch("Board", board)["pins"] == marker)
        let found = try await s.queryResults("Board")
        #expect(found.map { $0["pins"] } == [marker])
        // Still there when the relation is empty.
        try await s.update("Board", board, ["pins": relation("RemoveRelation", [pin(f, "p1")])])
        #expect(try await s.fetch("Board", board)["pins"] == marker)
        // Every object of the class shows it, even one that never had a relation operation.
        let plain = try await s.create("Board", ["name": "b2"])
        #expect(try await s.fetch("Board", plain)["pins"] == marker)
        // `null` written to it (ParsePy re-sends a fetched Relation as `null`) leaves the Relation, and its pairs.
        try await s.update("Board", board, ["name": "renamed", "pins": relation("AddRelation", [pin(f, "p2")])])
        try await s.update("Board", board, ["name": "renamed again", "pins": .null])
        let nulled = try await s.create("Board", ["name": "b3", "pins": .null])
        #expect(try await s.fetch("Board", board)["pins"] == marker)
        #expect(try await s.fetch("Board", nulled)["pins"] == marker)
        #expect(try await related(f, board) == ["p2"])
        // The schema records the field.
        let schema = try await s.request("GET", "/schemas/Board", master: true)
        #expect(schema.json["fields"]?["pins"] == ["type": "Relation", "targetClass": "Pin"])
    }

    @Test func aRelationFieldComparedToAPointerFindsTheOwners() async throws {
        let f = try await fixture()
        let s = f.server
        _ = try await s.create("Board", ["name": "b1", "pins": relation("AddRelation", [pin(f, "p1"), pin(f, "p2")])])
        _ = try await s.create("Board", ["name": "b2", "pins": relation("AddRelation", [pin(f, "p2"), pin(f, "p3")])])
        _ = try await s.create("Board", ["name": "b3"])
        #expect(try await s.names("Board", where: ["pins": pin(f, "p2")]) == ["b1", "b2"])
        #expect(try await s.names("Board", where: ["pins": pin(f, "p1")]) == ["b1"])
        #expect(try await s.names("Board", where: ["pins": pin(f, "p3")]) == ["b2"])
        #expect(try await s.names("Board", where: ["pins": pin(f, "p4")]) == [])
        #expect(try await s.names("Board", where: ["pins": pointer("Pin", "missing000")]) == [])
        #expect(try await s.names("Board", where: ["pins": pin(f, "p2"), "name": "b2"]) == ["b2"])
        #expect(try await s.names("Board", where: ["$or": [["pins": pin(f, "p1")], ["name": "b3"]]]) == ["b1", "b3"])
    }

    /// Parse also accepts `$in`, `$nin` and `$ne` of pointers on a relation field (`containedIn` in the SDKs).
    @Test func aRelationFieldWithInNinAndNe() async throws {
        let f = try await fixture()
        let s = f.server
        _ = try await s.create("Board", ["name": "b1", "pins": relation("AddRelation", [pin(f, "p1"), pin(f, "p2")])])
        _ = try await s.create("Board", ["name": "b2", "pins": relation("AddRelation", [pin(f, "p3")])])
        #expect(try await s.names("Board", where: ["pins": ["$in": [pin(f, "p1"), pin(f, "p3")]]]) == ["b1", "b2"])
        #expect(try await s.names("Board", where: ["pins": ["$in": [pin(f, "p2")]]]) == ["b1"])
        #expect(try await s.names("Board", where: ["pins": ["$nin": [pin(f, "p1")]]]) == ["b2"])
        #expect(try await s.names("Board", where: ["pins": ["$ne": pin(f, "p3")]]) == ["b1"])
    }

    @Test func relatedToRespectsTheACLOfTheRelatedObjects() async throws {
        let server = try TestServer(arguments: fastHashing)
        let alice = try await server.signUpAccount("alice")
        let open = try await server.create("Pin", ["name": "open"])
        let secret = try await server.create("Pin", ["name": "secret", "ACL": privateACL(alice.id)], token: alice.token)
        let board = try await server.create("Board", ["pins": relation("AddRelation", [pointer("Pin", open), pointer("Pin", secret)])])
        let constraint: JSON = ["$relatedTo": ["object": pointer("Board", board), "key": "pins"]]
        #expect(try await server.names("Pin", where: constraint) == ["open"])
        #expect(try await server.names("Pin", where: constraint, token: alice.token) == ["open", "secret"])
        #expect(try await server.names("Pin", where: constraint, master: true) == ["open", "secret"])
        let count = try await server.query("Pin", ["where": constraint, "count": 1, "limit": 0])
        #expect(count.json == ["results": [], "count": 1])
    }

    @Test func deletingTheOwnerForgetsItsRelation() async throws {
        let f = try await fixture()
        let s = f.server
        let board = try await s.create("Board", ["name": "b1", "pins": relation("AddRelation", [pin(f, "p1")])])
        #expect(try await related(f, board) == ["p1"])
        let deleted = try await s.request("DELETE", "/classes/Board/\(board)")
        #expect(deleted.status == 200)
        #expect(try await related(f, board) == [])
        #expect(try await s.names("Board", where: ["pins": pin(f, "p1")]) == [])
        // The related objects themselves remain.
        #expect(try await s.names("Pin", where: [:]) == ["p1", "p2", "p3", "p4"])
    }

    @Test func aRelationToAnotherClassIsASchemaMismatch() async throws {
        let f = try await fixture()
        let s = f.server
        let board = try await s.create("Board", ["pins": relation("AddRelation", [pin(f, "p1")])])
        let other = try await s.create("Other", ["x": 1])
        let response = try await s.request("PUT", "/classes/Board/\(board)",
                                           json: ["pins": relation("AddRelation", [pointer("Other", other)])])
        expectParseError(response, 111)
        #expect(try await related(f, board) == ["p1"])
        // A relation field cannot take a plain value either.
        let plain = try await s.request("PUT", "/classes/Board/\(board)", json: ["pins": "text"])
        expectParseError(plain, 111)
    }

    /// The JS SDK's `relation.query()` on an object it did not fetch asks the parent's class with
    /// `redirectClassNameForKey`; Parse runs the query on the relation's target class.
    @Test func redirectClassNameForKeyQueriesTheTargetClass() async throws {
        let f = try await fixture()
        let board = try await f.server.create("Board", ["pins": relation("AddRelation", [pin(f, "p2"), pin(f, "p3")])])
        let constraint: JSON = ["$relatedTo": ["object": pointer("Board", board), "key": "pins"]]
        let redirected = try await f.server.query("Board", ["where": constraint, "redirectClassNameForKey": "pins", "order": "n", "count": 1])
        #expect(redirected.status == 200, "\(redirected.text)")
        let results = redirected.json["results"]?.arrayValue ?? []
        #expect(results.map { $0["name"] } == ["p2", "p3"])
        #expect(results.allSatisfy { $0["className"] == "Pin" })
        #expect(redirected.json["count"] == 2)

        // `Delete` on a relation field leaves the relation and its marker, as Parse Server does.
        #expect(try await f.server.update("Board", board, ["pins": ["__op": "Delete"]]).status == 200)
        #expect(try await f.server.fetch("Board", board)["pins"] == ["__type": "Relation", "className": "Pin"])
        #expect(try await related(f, board) == ["p2", "p3"])

        // Relation markers come back whatever `keys` or `excludeKeys` say, as Parse's adapters add them.
        let marker: JSON = ["__type": "Relation", "className": "Pin"]
        let selected = try await f.server.query("Board", ["keys": "name"]).json["results"]?.arrayValue?.first
        #expect(selected?["pins"] == marker)
        #expect(try await f.server.query("Board", ["excludeKeys": "pins"]).json["results"]?.arrayValue?.first?["pins"] == marker)
        let got = try await f.server.request("GET", "/classes/Board/\(board)", query: ["keys": "name"])
        #expect(got.json["pins"] == marker)

        // A key that is not a relation leaves the query on the class named.
        let plain = try await f.server.query("Board", ["redirectClassNameForKey": "name"])
        #expect(plain.json["results"]?.arrayValue?.map { $0["objectId"] } == [.string(board)])
        #expect(plain.json["results"]?.arrayValue?.first?["className"] == nil)
    }
}
