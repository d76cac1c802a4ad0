import Foundation
import RoostCore
import Testing

/// Parse Server's spec/ParseRelation.spec.js over REST. The JS SDK queries a relation on its target class
/// with `$relatedTo` when it knows that class, and on the parent's class with `redirectClassNameForKey`
/// when the parent is not fetched; both forms are asserted.
@Suite struct ParseRelationSpecTests {
    private func relation(_ op: String, _ className: String, _ ids: [String]) -> JSON {
        ["__op": .string(op), "objects": .array(ids.map { pointer(className, $0) })]
    }

    private func relatedTo(_ className: String, _ id: String, _ key: String) -> JSON {
        ["object": pointer(className, id), "key": .string(key)]
    }

    /// `GET /classes/<C>` with JSON parameters; the answer's results, failing the caller when refused.
    private func find(_ api: RecordingServer, _ className: String, _ parameters: [String: JSON]) async throws -> [JSON] {
        try await api.server.results(className, parameters)
    }

    private func ids(_ results: [JSON]) -> [String] { results.compactMap { $0["objectId"]?.stringValue }.sorted() }

    // spec: ParseRelation.spec.js: simple add and remove relation
    // spec: ParseRelation.spec.js: query relation without schema
    // spec: ParseRelation.spec.js: relations are constructed right from query
    // spec: ParseRelation.spec.js: compound add and remove relation
    // spec: ParseRelation.spec.js: related at ordering optimizations
    // spec: ParseRelation.spec.js: queries with relations
    @Test func addingRemovingAndQueryingARelation() async throws {
        let api = try RecordingServer()
        let children = try await api.server.createAll("ChildObject", (0..<10).map { ["x": .number(Double($0))] })
        let parent = try await api.server.create("ParentObject", ["x": 4, "child": relation("AddRelation", "ChildObject", [children[0]])])
        let onTarget: [String: JSON] = ["where": ["$relatedTo": relatedTo("ParentObject", parent, "child")]]
        #expect(ids(try await find(api, "ChildObject", onTarget)) == [children[0]])
        // An unfetched parent: the query goes to the parent's class and is redirected.
        let redirected = try await find(api, "ParentObject", onTarget.merging(["redirectClassNameForKey": "child"]) { $1 })
        #expect(ids(redirected) == [children[0]])
        #expect(redirected.first?["x"] == 0)
        // A fetched parent shows the relation and its target class.
        #expect(try await api.server.fetch("ParentObject", parent)["child"] == ["__type": "Relation", "className": "ChildObject"])

        #expect(try await api.request("PUT", parent, ["child": relation("RemoveRelation", "ChildObject", [children[0]])]).status == 200)
        #expect(try await find(api, "ChildObject", onTarget).isEmpty)

        // The SDK folds several adds and removes into one `Batch` operation.
        let compound = try await api.server.create("ParentObject", ["x": 4, "child": ["__op": "Batch", "ops": [
            relation("AddRelation", "ChildObject", [children[1], children[2]]),
            relation("RemoveRelation", "ChildObject", [children[0]]),
        ]]])
        let compoundQuery: [String: JSON] = ["where": ["$relatedTo": relatedTo("ParentObject", compound, "child")]]
        #expect(ids(try await find(api, "ChildObject", compoundQuery)) == [children[1], children[2]].sorted())
        let second = try await api.request("PUT", compound, ["child": ["__op": "Batch", "ops": [
            relation("AddRelation", "ChildObject", [children[1], children[0]]),
            relation("RemoveRelation", "ChildObject", [children[2]]),
        ]]])
        #expect(second.status == 200)
        #expect(ids(try await find(api, "ChildObject", compoundQuery)) == [children[0], children[1]].sorted())

        let all = try await api.server.create("ParentObject", ["x": 4, "child": relation("AddRelation", "ChildObject", children)])
        let page = try await find(api, "ChildObject", ["where": ["$relatedTo": relatedTo("ParentObject", all, "child")],
                                                         "order": "-createdAt", "skip": 1, "limit": 3])
        #expect(page.count == 3)

        let three = try await api.server.create("ParentObject", ["x": 4, "child": relation("AddRelation", "ChildObject", Array(children[0..<3]))])
        let x2 = try await find(api, "ChildObject", ["where": ["$relatedTo": relatedTo("ParentObject", three, "child"), "x": 2]])
        #expect(ids(x2) == [children[2]])
    }

    // spec: ParseRelation.spec.js: queries on relation fields
    // spec: ParseRelation.spec.js: queries on relation fields with multiple containedIn (regression test for #1271)
    // spec: ParseRelation.spec.js: query on pointer and relation fields with equal
    // spec: ParseRelation.spec.js: query on pointer and relation fields with equal bis
    // spec: ParseRelation.spec.js: or queries on pointer and relation fields
    // spec: ParseRelation.spec.js: or queries with base constraint on relation field
    // spec: ParseRelation.spec.js: Find objects with a related object using equalTo
    // spec: ParseRelation.spec.js: relations are not bidirectional (regression test for #871)
    @Test func constraintsOnRelationFields() async throws {
        let api = try RecordingServer()
        let c = try await api.server.createAll("ChildObject", (0..<10).map { ["x": .number(Double($0))] })
        let child = { (i: Int) in pointer("ChildObject", c[i]) }
        let parent = try await api.server.create("ParentObject", [
            "x": 4, "child": relation("AddRelation", "ChildObject", [c[0], c[1], c[2]]),
        ])
        let parent2 = try await api.server.create("ParentObject", [
            "x": 3, "child": relation("AddRelation", "ChildObject", [c[4], c[5], c[6]]),
            "otherChild": relation("AddRelation", "ChildObject", [c[0], c[1], c[2]]),
        ])
        #expect(ids(try await find(api, "ParentObject", ["where": ["child": ["$in": [child(4), child(9)]]]])) == [parent2])
        #expect(try await find(api, "ParentObject", ["where": ["child": ["$in": [child(0)]], "otherChild": ["$in": [child(0)]]]]).isEmpty)
        #expect(ids(try await find(api, "ParentObject", ["where": ["child": ["$in": [child(4)]], "otherChild": ["$in": [child(1)]]]])) == [parent2])
        _ = parent

        // A relation `toChilds` next to a pointer `toChild`.
        let withRelation = try await api.server.create("Family", ["x": 4, "toChilds": relation("AddRelation", "ChildObject", [c[0], c[1], c[2]])])
        let withPointer = try await api.server.create("Family", ["x": 3, "toChild": child(2)])
        let alsoRelation = try await api.server.create("Family", ["x": 3, "toChilds": relation("AddRelation", "ChildObject", [c[2]])])
        _ = try await api.server.create("Family", [:])
        #expect(ids(try await find(api, "Family", ["where": ["objectId": .string(withRelation), "toChilds": child(2)]])) == [withRelation])
        #expect(ids(try await find(api, "Family", ["where": ["objectId": .string(alsoRelation), "toChilds": child(2)]])) == [alsoRelation])
        let either = try await find(api, "Family", ["where": ["$or": [["toChilds": ["$in": [child(2)]]], ["toChild": child(2)]]]])
        #expect(ids(either) == [withRelation, withPointer, alsoRelation].sorted())
        let based = try await find(api, "Family", ["where": ["$or": [["x": 4], ["x": 3]], "toChilds": child(2)]])
        #expect(ids(based) == [withRelation, alsoRelation].sorted())

        let card = try await api.server.create("Card", [:])
        let house = try await api.server.create("House", ["cards": relation("AddRelation", "Card", [card])])
        #expect(ids(try await find(api, "House", ["where": ["cards": pointer("Card", card)]])) == [house])

        let persons = try await api.server.createAll("Person", [[:], [:]])
        #expect(try await api.request("PUT", persons[0], ["relation": relation("AddRelation", "Person", [persons[1]])], className: "Person").status == 200)
        #expect(try await find(api, "Person", ["where": ["relation": pointer("Person", persons[0])]]).isEmpty)
        #expect(ids(try await find(api, "Person", ["where": ["relation": pointer("Person", persons[1])]])) == [persons[0]])
    }

    // spec: ParseRelation.spec.js: Get query on relation using un-fetched parent object
    // spec: ParseRelation.spec.js: Find query on relation using un-fetched parent object
    // spec: ParseRelation.spec.js: should properly get related objects with unfetched queries
    // spec: ParseRelation.spec.js: select query
    // spec: ParseRelation.spec.js: dontSelect query
    @Test func redirectedQueries() async throws {
        let api = try RecordingServer()
        let wheel = try await api.server.create("Wheel", [:])
        let car = try await api.server.create("Car", ["wheels": relation("AddRelation", "Wheel", [wheel])])
        let wheels: JSON = ["$relatedTo": relatedTo("Car", car, "wheels")]
        // `query.get` is a find limited to one objectId; each result names the class it came from.
        for extra: [String: JSON] in [["objectId": .string(wheel)], [:]] {
            var constraint = wheels.objectValue!
            constraint.merge(extra) { $1 }
            let found = try await find(api, "Car", ["where": .object(constraint), "redirectClassNameForKey": "wheels", "limit": 1])
            #expect(found.first?["objectId"] == .string(wheel))
            #expect(found.first?["className"] == "Wheel")
        }

        // Ten objects, each the `key` of its owner; all of them in anotherOwner's `relationKey`.
        let objects = try await api.server.createAll("AnObject", (0..<10).map { ["index": .number(Double($0)), "even": .bool($0 % 2 == 0)] })
        for object in objects { _ = try await api.server.create("AnOwner", ["key": pointer("AnObject", object)]) }
        let anotherOwner = try await api.server.create("AnotherOwner", ["relationKey": relation("AddRelation", "AnObject", objects)])
        let evenRelated: JSON = ["className": "AnotherOwner", "redirectClassNameForKey": "relationKey",
                                 "where": ["even": true, "$relatedTo": relatedTo("AnotherOwner", anotherOwner, "relationKey")]]
        for (op, even) in [("$inQuery", true), ("$notInQuery", false)] {
            let owners = try await find(api, "AnOwner", ["where": ["key": [op: evenRelated]], "include": "key"])
            #expect(owners.count == 5)
            #expect(owners.allSatisfy { $0["key"]?["even"] == .bool(even) })
        }

        _ = try await api.server.createAll("Person", [["name": "Bob", "hometown": "Djibouti"], ["name": "Tom", "hometown": "Ouagadougou"],
                                                      ["name": "Billy", "hometown": "Detroit"]])
        let restaurants = try await api.server.createAll("Restaurant", [["ratings": 5, "location": "Djibouti"],
                                                                        ["ratings": 3, "location": "Ouagadougou"]])
        let owner = try await api.server.create("Owner", ["name": "Joe", "restaurants": relation("AddRelation", "Restaurant", restaurants)])
        let rated: JSON = ["query": ["className": "Owner", "redirectClassNameForKey": "restaurants",
                                     "where": ["ratings": ["$gt": 4], "$relatedTo": relatedTo("Owner", owner, "restaurants")]],
                           "key": "location"]
        let selected = try await find(api, "Person", ["where": ["hometown": ["$select": rated]]])
        #expect(selected.map { $0["name"] } == ["Bob"])
        let others = try await find(api, "Person", ["where": ["hometown": ["$dontSelect": rated]], "order": "name"])
        #expect(others.map { $0["name"] } == ["Billy", "Tom"])
    }

    // spec: ParseRelation.spec.js: can query roles in Cloud Code (regession test #1489)
    // spec: ParseRelation.spec.js: can be saved without error
    @Test func rolesAndRelationsSavedAgain() async throws {
        let api = try RecordingServer()
        let admin = try await api.signUp("name", "pass")
        let role = try await api.send("POST", "/roles", json: [
            "name": "admin", "ACL": ["*": ["read": true]], "users": relation("AddRelation", "_User", [admin.id]),
        ], token: admin.token)
        #expect(role.status == 201)
        let roleId = try #require(role.json["objectId"]?.stringValue)
        let admins = try await api.send("GET", "/users", master: true, query: [
            "where": JSON.object(["$relatedTo": relatedTo("_Role", roleId, "users"), "username": "name"]).jsonText, "limit": "1",
        ])
        #expect(admins.json["results"]?.arrayValue?.first?["objectId"] == .string(admin.id))

        // A relation to itself, then the relation value saved back as the SDK encodes it.
        let ppap = try await api.server.create("PPAP", [:])
        #expect(try await api.request("PUT", ppap, ["aRelation": relation("AddRelation", "PPAP", [ppap])], className: "PPAP").status == 200)
        let value = try await api.server.fetch("PPAP", ppap)["aRelation"]
        #expect(value == ["__type": "Relation", "className": "PPAP"])
        #expect(try await api.request("PUT", ppap, ["aRelation": value ?? .null], className: "PPAP").status == 200)
        #expect(ids(try await find(api, "PPAP", ["where": ["$relatedTo": relatedTo("PPAP", ppap, "aRelation")]])) == [ppap])
    }
}

extension ParseRelationSpecTests {
    /// Parse's `$relatedTo` reads the relation's join table as it is (`DatabaseController.relatedIds`) and
    /// `redirectClassNameForKey` reads only the schema: neither checks that the caller may read the owning object
    /// or its relation field. The related objects' own ACLs and class-level permissions still apply.
    @Test func relatedToDoesNotNeedTheOwnerReadable() async throws {
        let api = try RecordingServer()
        let reader = try await api.signUp("reader", "password")
        let open = try await api.server.create("Item", ["name": "open"])
        let hidden = try await api.server.create("Item", ["name": "hidden", "ACL": [:]])
        let owner = try await api.server.create("Box", [
            "ACL": [:], "items": ["__op": "AddRelation", "objects": [pointer("Item", open), pointer("Item", hidden)]],
        ])
        expectError(try await api.send("GET", "/classes/Box/\(owner)", token: reader.token), 101)
        let related: JSON = ["$relatedTo": ["object": pointer("Box", owner), "key": "items"]]
        for (className, extra) in [("Item", [String: String]()), ("Box", ["redirectClassNameForKey": "items"])] {
            let found = try await api.send("GET", "/classes/\(className)", token: reader.token,
                                           query: extra.merging(["where": related.jsonText]) { $1 })
            #expect(found.json["results"]?.arrayValue?.map { $0["objectId"] } == [.string(open)], "\(className): \(found.text)")
        }
    }
}

private extension RecordingServer {
    /// `PUT /classes/<className>/<id>` with the master key off.
    func request(_ method: String, _ id: String, _ body: JSON, className: String = "ParentObject") async throws -> TestResponse {
        try await send(method, "/classes/\(className)/\(id)", json: body)
    }
}
