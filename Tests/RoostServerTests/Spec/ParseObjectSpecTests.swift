import Foundation
import RoostCore
import Testing

/// Parse Server's spec/ParseObject.spec.js: what the JS SDK's `save`, `fetch`, `increment`, `unset`... send and
/// receive, as REST calls. SDK-local behaviour (dirty keys) is not carried; the unset and clear cases and `fetchAll`, as
/// the requests they make, are `ParseObjectRESTSpecTests`'.
@Suite struct ParseObjectSpecTests {
    private static func put(_ server: TestServer, _ className: String, _ id: String, _ body: JSON) async throws -> TestResponse {
        try await server.request("PUT", "/classes/\(className)/\(id)", json: body)
    }

    // spec: ParseObject.spec.js: create
    // spec: ParseObject.spec.js: update
    // spec: ParseObject.spec.js: save without null
    // spec: ParseObject.spec.js: get
    // spec: ParseObject.spec.js: delete
    // spec: ParseObject.spec.js: find
    // spec: ParseObject.spec.js: save adds no data keys (other than createdAt and updatedAt)
    // spec: ParseObject.spec.js: fetch
    // spec: ParseObject.spec.js: createdAt doesn't change
    // spec: ParseObject.spec.js: createdAt and updatedAt exposed
    // spec: ParseObject.spec.js: updatedAt gets updated
    // spec: ParseObject.spec.js: createdAt is reasonable
    // spec: ParseObject.spec.js: create without data
    // spec: ParseObject.spec.js: Objects with className User
    @Test func lifecycle() async throws {
        let server = try TestServer()
        let before = Date()
        let created = try await server.request("POST", "/classes/TestObject", json: ["test": "test"])
        #expect(created.status == 201)
        #expect(created.json.objectValue?.keys.sorted() == ["createdAt", "objectId"])
        let id = try #require(created.json["objectId"]?.stringValue)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let createdAt = try #require(created.json["createdAt"]?.stringValue.flatMap(formatter.date(from:)))
        #expect(abs(createdAt.timeIntervalSince(before)) < 60)

        let first = try await server.fetch("TestObject", id)
        #expect(first["test"] == "test" && first["createdAt"] == first["updatedAt"])
        try await Task.sleep(nanoseconds: 5_000_000)
        let update = try await Self.put(server, "TestObject", id, ["test": "changed", "foo": "bar"])
        #expect(update.json.objectValue?.keys.sorted() == ["updatedAt"])
        let second = try await server.fetch("TestObject", id)
        #expect(second["test"] == "changed" && second["foo"] == "bar")
        #expect(second["createdAt"] == first["createdAt"])
        #expect(second["updatedAt"] != first["updatedAt"] && second["updatedAt"] == update.json["updatedAt"])
        // A save sending only some keys leaves the others.
        _ = try await Self.put(server, "TestObject", id, ["foo": "baz"])
        #expect(try await server.fetch("TestObject", id)["test"] == "changed")
        #expect(try await server.results("TestObject", ["where": ["foo": "baz"]]).map { $0["objectId"] } == [.string(id)])

        #expect(try await server.request("DELETE", "/classes/TestObject/\(id)").status == 200)
        expectError(try await server.request("GET", "/classes/TestObject/\(id)"), 101, "Object not found.")

        let user = try await server.create("User", ["name": "Me", "height": 181])
        #expect(try await server.fetch("User", user)["height"] == 181)
        #expect(try await server.request("GET", "/schemas/User", master: true).json["className"] == "User")
    }

    // spec: ParseObject.spec.js: can set null
    // spec: ParseObject.spec.js: can set boolean
    // spec: ParseObject.spec.js: cannot set invalid date
    // spec: ParseObject.spec.js: can set authData when not user class
    // spec: ParseObject.spec.js: invalid class name
    // spec: ParseObject.spec.js: invalid key name
    // spec: ParseObject.spec.js: invalid __type
    // spec: ParseObject.spec.js: cannot save object with invalid field
    // spec: ParseObject.spec.js: bytes work
    // spec: ParseObject.spec.js: should create nested keys with _
    // spec: ParseObject.spec.js: dictionary fetched pointers do not lose data on fetch
    // spec: ParseObject.spec.js: Update object field should store exactly same sent object
    @Test func values() async throws {
        let server = try TestServer()
        let nulled = try await server.create("TestObject", ["foo": nil, "yes": true, "no": false])
        let stored = try await server.fetch("TestObject", nulled)
        #expect(stored["foo"] == .null)
        #expect(stored["yes"] == true && stored["no"] == false)
        #expect(try await server.request("POST", "/classes/TestObject", json: ["when": ["__type": "Date", "iso": "Invalid Date"]]).status == 400)
        let authData = try await server.create("TestObject", ["authData": "random"])
        #expect(try await server.request("GET", "/classes/TestObject/\(authData)", master: true).json["authData"] == "random")

        #expect(try await server.request("POST", "/classes/Foo%5Ebar", json: [:]).status == 400)
        expectError(try await server.request("POST", "/classes/Item", json: ["foo^bar": "baz"]), 105)
        for type in ["Pointer", "File", "Date", "GeoPoint", "Bytes", "Polygon", "Relation"] {
            expectError(try await server.request("POST", "/classes/Item", json: ["foo": ["__type": .string(type)]]), 111)
        }
        #expect(try await server.request("POST", "/classes/Item", json: ["foo": ["__type": "IvalidName"]]).status == 400)
        for field in ["className", "length"] {
            expectError(try await server.request("POST", "/classes/TestObject", json: [.init(stringLiteral: field): "bar"]), 105,
                        "Invalid field name: \(field).")
        }

        let bytes = try await server.create("TestObject", ["bytes": ["__type": "Bytes", "base64": "ZnJveW8="]])
        #expect(try await server.fetch("TestObject", bytes)["bytes"] == ["__type": "Bytes", "base64": "ZnJveW8="])
        let underscores: JSON = ["_bar": "_", "baz_bar": 1, "__foo_bar": true, "_0": "underscore_zero", "_more": ["_nested": "key"]]
        let nested = try await server.create("AnObject", ["foo": underscores])
        #expect(try await server.fetch("AnObject", nested)["foo"] == underscores)

        let children = try await server.createAll("Child", (0..<5).map { ["name": .string("testname\($0)")] })
        var dictionary: [String: JSON] = [:]
        for (index, child) in children.enumerated() { dictionary["\(index)"] = pointer("Child", child) }
        let parent = try await server.create("Parent", ["childDict": .object(dictionary)])
        #expect(try await server.fetch("Parent", parent)["childDict"] == .object(dictionary))

        let json = try await server.create("TestObject", ["jsonData": ["a": "b"]])
        for value: JSON in [[:], ["c": "d"]] {
            _ = try await Self.put(server, "TestObject", json, ["jsonData": value])
            #expect(try await server.fetch("TestObject", json)["jsonData"] == value)
        }
    }

    // spec: ParseObject.spec.js: simple field deletion
    // spec: ParseObject.spec.js: field deletion before first save
    // spec: ParseObject.spec.js: relation deletion
    // spec: ParseObject.spec.js: deleted keys get cleared
    // spec: ParseObject.spec.js: setting after deleting
    // spec: ParseObject.spec.js: increment
    // spec: ParseObject.spec.js: addUnique
    // spec: ParseObject.spec.js: addUnique with object
    // spec: ParseObject.spec.js: removes with object
    // spec: ParseObject.spec.js: add with an object
    // spec: ParseObject.spec.js: remove object from array
    // spec: ParseObject.spec.js: remove from new field creates array key
    // spec: ParseObject.spec.js: increment with type conflict fails
    // spec: ParseObject.spec.js: increment with empty field solidifies type
    // spec: ParseObject.spec.js: increment update with type conflict fails
    // spec: ParseObject.spec.js: acl attribute
    @Test func operations() async throws {
        let server = try TestServer()
        let simple = try await server.create("SimpleObject", ["foo": "bar"])
        _ = try await Self.put(server, "SimpleObject", simple, ["foo": ["__op": "Delete"]])
        #expect(try await server.fetch("SimpleObject", simple)["foo"] == nil)
        let neverSet = try await server.create("SimpleObject", ["foo": ["__op": "Delete"]])
        #expect(try await server.fetch("SimpleObject", neverSet)["foo"] == nil)
        _ = try await Self.put(server, "SimpleObject", neverSet, ["foo": "baz"])
        #expect(try await server.fetch("SimpleObject", neverSet)["foo"] == "baz")
        let child = try await server.create("Child", [:])
        let withChild = try await server.create("SimpleObject", ["child": pointer("Child", child)])
        _ = try await Self.put(server, "SimpleObject", withChild, ["child": ["__op": "Delete"]])
        #expect(try await server.fetch("SimpleObject", withChild)["child"] == nil)

        let counter = try await server.create("SimpleObject", ["count": 5])
        #expect(try await Self.put(server, "SimpleObject", counter, ["count": ["__op": "Increment", "amount": 1]]).json["count"] == 6)
        #expect(try await server.fetch("SimpleObject", counter)["count"] == 6)

        let x = try await server.create("X", ["stuff": [1, 2]])
        _ = try await Self.put(server, "X", x, ["stuff": ["__op": "AddUnique", "objects": [2, 4]]])
        #expect(try await server.fetch("X", x)["stuff"] == [1, 2, 4])
        let objects = try await server.create("X", ["stuff": [1, ["hello": "world"], ["foo": "bar"]]])
        _ = try await Self.put(server, "X", objects, ["stuff": ["__op": "AddUnique", "objects": [["hello": "world"], ["bar": "baz"]]]])
        #expect(try await server.fetch("X", objects)["stuff"] == [1, ["hello": "world"], ["foo": "bar"], ["bar": "baz"]])
        _ = try await Self.put(server, "X", objects, ["stuff": ["__op": "Remove", "objects": [["hello": "world"]]]])
        #expect(try await server.fetch("X", objects)["stuff"] == [1, ["foo": "bar"], ["bar": "baz"]])
        let added = try await server.create("X", ["stuff": ["__op": "Add", "objects": [["foo": "bar"]]]])
        _ = try await Self.put(server, "X", added, ["stuff": ["__op": "Add", "objects": [["foo": "bar"]]]])
        #expect(try await server.fetch("X", added)["stuff"] == [["foo": "bar"], ["foo": "bar"]])
        let removed = try await server.create("X", ["stuff": ["a", "b"]])
        _ = try await Self.put(server, "X", removed, ["stuff": ["__op": "Remove", "objects": ["a"]]])
        #expect(try await server.fetch("X", removed)["stuff"] == ["b"])
        let fresh = try await server.create("X", ["shouldBeArray": ["__op": "Remove", "objects": ["foo"]]])
        #expect(try await server.fetch("X", fresh)["shouldBeArray"] == [])

        _ = try await server.create("Typed", ["astring": "foo"])
        expectError(try await server.request("POST", "/classes/Typed", json: ["astring": ["__op": "Increment", "amount": 1]]), 111)
        _ = try await server.create("Typed", ["aninc": ["__op": "Increment", "amount": 1]])
        expectError(try await server.request("POST", "/classes/Typed", json: ["aninc": "foo"]), 111)
        let someString = try await server.create("Typed", ["someString": "foo"])
        expectError(try await Self.put(server, "Typed", someString, ["someString": ["__op": "Increment", "amount": 1]]), 111)

        let acl: JSON = ["*": ["read": true], "role:admin": ["write": true]]
        let withACL = try await server.create("TestObject", ["ACL": acl])
        #expect(try await server.fetch("TestObject", withACL)["ACL"] == acl)
    }

    // spec: ParseObject.spec.js: can increment array nested fields
    // spec: ParseObject.spec.js: can increment array nested fields missing index
    @Test func nestedKeyPaths() async throws {
        let server = try TestServer()
        let items = try await server.create("TestObject", ["items": [["value": "a", "count": 5], ["value": "b", "count": 1]]])
        let reply = try await Self.put(server, "TestObject", items, [
            "items.0.count": ["__op": "Increment", "amount": 15], "items.1.count": ["__op": "Increment", "amount": 4],
        ])
        #expect(reply.status == 200, "\(reply.text)")
        #expect(try await server.fetch("TestObject", items)["items"] == [["value": "a", "count": 20], ["value": "b", "count": 5]])
        let empty = try await server.create("TestObject", ["items": []])
        _ = try await Self.put(server, "TestObject", empty, ["items.1.count": ["__op": "Increment", "amount": 15]])
        #expect(try await server.fetch("TestObject", empty)["items"] == [nil, ["count": 15]])
        // An Object field: the reply shows the changed key at its path.
        let object = try await server.create("TestObject", ["stats": ["wins": 1, "name": "x"]])
        let increment = try await Self.put(server, "TestObject", object, ["stats.wins": ["__op": "Increment", "amount": 2]])
        #expect(increment.json["stats"] == ["wins": 3])
        #expect(try await server.fetch("TestObject", object)["stats"] == ["wins": 3, "name": "x"])
        expectError(try await Self.put(server, "TestObject", object, ["stats.wins.deeper": 1]), 111)
    }

    // spec: ParseObject.spec.js: should have undefined includes when object is missing
    // spec: ParseObject.spec.js: should have undefined includes when object is missing on deeper path
    // spec: ParseObject.spec.js: should handle includes on null arrays #2752
    // spec: ParseObject.spec.js: should handle select and include #2786
    // spec: ParseObject.spec.js: should include ACLs with select
    @Test func includes() async throws {
        let server = try TestServer()
        let ids = try await server.createAll("AnObject", [[:], [:], [:]])
        _ = try await Self.put(server, "AnObject", ids[0], ["obj": pointer("AnObject", ids[1])])
        _ = try await Self.put(server, "AnObject", ids[1], ["obj": pointer("AnObject", ids[2])])
        #expect(try await server.request("DELETE", "/classes/AnObject/\(ids[2])").status == 200)
        let deep = try await server.request("GET", "/classes/AnObject/\(ids[0])", query: ["include": "obj.obj"])
        #expect(deep.json["obj"]?["objectId"] == .string(ids[1]))
        #expect(deep.json["obj"]?["obj"] == nil, "\(deep.text)")
        let shallow = try await server.find("AnObject", ["include": "obj", "where": ["objectId": .string(ids[1])]])
        #expect(shallow.json["results"]?.arrayValue?.count == 1, "\(shallow.text)")
        #expect(shallow.json["results"]?.arrayValue?.first?["obj"] == nil, "\(shallow.text)")
        #expect(try await server.fetch("AnObject", ids[1])["obj"] == pointer("AnObject", ids[2]))

        let nestedObject = try await server.create("NestedObject", ["foo": "bar"])
        let another = try await server.create("AnotherObject", ["key": pointer("NestedObject", nestedObject)])
        _ = try await server.create("Holder", ["objects": [nil, nil, pointer("AnotherObject", another)]])
        let withNulls = try await server.find("Holder", ["include": "objects.key"])
        let array = try #require(withNulls.json["results"]?.arrayValue?.first?["objects"]?.arrayValue)
        #expect(array.count == 3 && array[0] == .null && array[1] == .null)
        #expect(array[2]["key"]?["foo"] == "bar")

        let score = try await server.create("GameScore", ["score": 1234])
        _ = try await server.create("Player", ["gameScore": pointer("GameScore", score), "other": "value",
                                               "ACL": ["*": ["read": true]]])
        let selected = try await server.find("Player", ["include": "gameScore", "keys": "gameScore"])
        let player = try #require(selected.json["results"]?.arrayValue?.first)
        #expect(player["other"] == nil)
        #expect(player["gameScore"]?["score"] == 1234)
        #expect(player["ACL"] == ["*": ["read": true]])
    }
}
