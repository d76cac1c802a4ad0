import Foundation
import RoostCore
import Testing

/// Parse Server's spec/ParseObject.spec.js: the cases `ParseObjectSpecTests` left out because the JS SDK does part of
/// the work (saving unsaved children first, queueing saves, turning `unset`/`clear` into operations, `fetchAll`), written
/// as the REST requests the SDK sends for them: a child saved with its parent goes first, in a `/batch`; `saveAll` is
/// one `/batch` per round; `fetchAll` is one query `objectId $in` the ids, `limit` their count.
@Suite struct ParseObjectRESTSpecTests {
    /// `/batch` with one `PUT /classes/<C>/<id>` per update, failing the caller unless all succeed.
    private static func updateAll(_ server: TestServer, _ className: String, _ updates: [(String, JSON)]) async throws {
        let requests = updates.map { (id, body) -> JSON in
            ["method": "PUT", "path": .string("/parse/classes/\(className)/\(id)"), "body": body]
        }
        let response = try await server.request("POST", "/batch", json: ["requests": .array(requests)])
        guard response.status == 200, let items = response.json.arrayValue, items.count == updates.count,
            items.allSatisfy({ $0["success"]?["updatedAt"]?.stringValue != nil })
        else { throw TestServerError.unexpected(response.status, response.text) }
    }

    // spec: ParseObject.spec.js: save cycle
    // spec: ParseObject.spec.js: relational fields
    // spec: ParseObject.spec.js: recursive save
    // spec: ParseObject.spec.js: saving children in an array
    /// Pointers to objects saved in the same call: the SDK first saves the unsaved children in a `/batch`, then the
    /// parent with pointers to them (in a second `/batch` for `saveAll`). Reading back, each pointer leads to the child
    /// with its fields; a cycle (a → b, then b → a) is two saves and an update.
    @Test func pointerSaves() async throws {
        let server = try TestServer()
        // Save cycle: a.save() saves b first; then b.save() with a pointer back.
        let b = try #require(try await server.createAll("TestObject", [[:]]).first)
        let a = try await server.create("TestObject", ["b": pointer("TestObject", b)])
        try await server.update("TestObject", b, ["a": pointer("TestObject", a)])
        #expect(!a.isEmpty && !b.isEmpty)
        #expect(try await server.fetch("TestObject", a)["b"] == pointer("TestObject", b))
        #expect(try await server.fetch("TestObject", b)["a"] == pointer("TestObject", a))

        // Relational fields: saveAll([item, container]) is two rounds, the container's after the item's.
        let item = try #require(try await server.createAll("Item", [["property": "x"]]).first)
        _ = try await server.createAll("Container", [["item": pointer("Item", item)]])
        let containers = try await server.results("Container")
        #expect(containers.count == 1)
        let itemAgain = try #require(containers.first?["item"]?["objectId"]?.stringValue)
        #expect(try await server.fetch("Item", itemAgain)["property"] == "x")

        // Recursive save: container.save() saves its item first (own classes: the query expects one container).
        let child = try #require(try await server.createAll("RecursiveItem", [["property": "x"]]).first)
        _ = try await server.create("RecursiveContainer", ["item": pointer("RecursiveItem", child)])
        let recursive = try await server.results("RecursiveContainer")
        #expect(recursive.count == 1)
        let childAgain = try #require(recursive.first?["item"]?["objectId"]?.stringValue)
        #expect(try await server.fetch("RecursiveItem", childAgain)["property"] == "x")

        // Children in an array: both children in one batch, then the parent.
        let children = try await server.createAll("Child", [["name": "jamie"], ["name": "cersei"]])
        let parent = try await server.create("Parent", ["children": .array(children.map { pointer("Child", $0) })])
        #expect(try await server.fetch("Parent", parent)["children"] == .array(children.map { pointer("Child", $0) }))
        #expect(try await server.orderedNames("Child", ["order": "name"]) == ["cersei", "jamie"])
    }

    // spec: ParseObject.spec.js: can query array nested fields
    /// Key paths into arrays by index (`items.1.value`, `items.0`) in `$gt`, `$lt`, equality and `$ne` constraints.
    @Test func queriesOnArrayNestedFields() async throws {
        let server = try TestServer()
        _ = try await server.createAll("TestObject", (0..<10).map { (i: Int) -> JSON in
            ["items": [.number(Double(i)), ["value": .number(Double(i))]]]
        })
        #expect(try await server.results("TestObject", ["where": ["items.1.value": ["$gt": 5]]]).count == 4)
        #expect(try await server.results("TestObject", ["where": ["items.0": ["$lt": 3]]]).count == 3)
        #expect(try await server.results("TestObject", ["where": ["items.0": 5]]).count == 1)
        #expect(try await server.results("TestObject", ["where": ["items.0": ["$ne": 5]]]).count == 9)
    }

    // spec: ParseObject.spec.js: two saves at the same time
    // spec: ParseObject.spec.js: many saves after a failure
    // spec: ParseObject.spec.js: async methods
    /// Saves as the SDK sends them. Two saves of one new object: the SDK queues the second, so a create then an update,
    /// and the object has both fields. A save whose type conflicts with the schema fails with 111 each time it is
    /// retried with more fields, and the new field never reaches the schema. Save, fetch, destroy, find: gone.
    @Test func saves() async throws {
        let server = try TestServer()
        let object = try await server.create("TestObject", ["cat": "meow"])
        try await server.update("TestObject", object, ["dog": "bark"])
        let both = try await server.results("TestObject")
        #expect(both.count == 1)
        #expect(both.first?["cat"] == "meow" && both.first?["dog"] == "bark")

        _ = try await server.create("TestObjectMS", ["number": 1])
        for body: JSON in [["number": "two"], ["number": "two", "other": "foo"], ["number": "two", "other": "bar"]] {
            expectError(try await server.request("POST", "/classes/TestObjectMS", json: body), 111,
                        "schema mismatch for TestObjectMS.number; expected Number but got String")
        }
        let schema = try await server.request("GET", "/schemas/TestObjectMS", master: true)
        #expect(schema.json["fields"]?["number"] == ["type": "Number"], "\(schema.text)")
        #expect(schema.json["fields"]?["other"] == nil, "\(schema.text)")
        #expect(try await server.results("TestObjectMS").count == 1)

        // Async methods (own class: the last find expects none).
        let adventure = try await server.create("AsyncObject", ["time": "adventure"])
        #expect(!adventure.isEmpty)
        #expect(try await server.fetch("AsyncObject", adventure)["time"] == "adventure")
        #expect(try await server.request("DELETE", "/classes/AsyncObject/\(adventure)").status == 200)
        #expect(try await server.results("AsyncObject").isEmpty)
    }

    // spec: ParseObject.spec.js: fetchAll
    // spec: ParseObject.spec.js: fetchAll updates dates
    /// `fetchAll` is one query, `objectId $in` the ids with `limit` their count: it brings each object's values as last
    /// saved (11 items updated in a batch) and its dates (`createdAt` as created, `updatedAt` of the last update).
    @Test func fetchAll() async throws {
        let server = try TestServer()
        let items = try await server.createAll("Item", (0..<11).map { (i: Int) -> JSON in ["x": .number(Double(i))] })
        let container = try await server.create("Container", ["items": .array(items.map { pointer("Item", $0) })])
        let itemsAgain = try await server.fetch("Container", container)["items"]?.arrayValue ?? []
        #expect(itemsAgain.count == 11)
        #expect(itemsAgain == items.map { pointer("Item", $0) })
        try await Self.updateAll(server, "Item", itemsAgain.enumerated().map { (index, item) -> (String, JSON) in
            (item["objectId"]?.stringValue ?? "?", ["x": .number(Double(index * 2))])
        })
        let fetched = try await server.results("Item", ["where": ["objectId": ["$in": .array(items.map { .string($0) })]], "limit": 11])
        #expect(fetched.count == 11)
        for (index, id) in items.enumerated() {
            let object = fetched.first { $0["objectId"] == .string(id) }
            #expect(object?["x"] == .number(Double(index * 2)), "item \(index)")
        }

        let created = try await server.request("POST", "/classes/TestObject", json: ["x": 7])
        let id = try #require(created.json["objectId"]?.stringValue)
        let found = try await server.results("TestObject")
        #expect(found.count == 1)
        let update = try await server.update("TestObject", id, ["x": 11])
        let refreshed = try await server.results("TestObject", ["where": ["objectId": ["$in": [.string(id)]]], "limit": 1])
        #expect(refreshed.count == 1)
        #expect(refreshed.first?["createdAt"] == created.json["createdAt"])
        #expect(refreshed.first?["createdAt"] == found.first?["createdAt"])
        #expect(refreshed.first?["updatedAt"] == update.json["updatedAt"])
        #expect(refreshed.first?["x"] == 11)
    }

    // spec: ParseObject.spec.js: returns correct field values
    /// Each value the spec lists, saved alone in a new object, reads back equal: strings, numbers, booleans, arrays,
    /// objects with numeric-looking keys, a Date (now, to the millisecond), a File (uploaded first; its URL is the server's
    /// own), a GeoPoint and Bytes.
    @Test func returnsCorrectFieldValues() async throws {
        let server = try TestServer()
        let upload = try await server.request("POST", "/files/name", body: Data("hello".utf8),
                                              headers: ["Content-Type": "text/plain"], master: true)
        #expect(upload.status == 201, "\(upload.text)")
        let fileName = try #require(upload.json["name"]?.stringValue)
        let fileURL = "\(server.baseURL)/files/\(TestServer.applicationId)/\(fileName)"
        #expect(upload.json["url"] == .string(fileURL))
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let now = formatter.string(from: Date())

        let values: [(String, JSON)] = [
            ("string", "string"),
            ("number", 1),
            ("boolean", true),
            ("array", [0, 1, 2]),
            ("array", [1, 2, 3]),
            ("array", [["0": "a"], 2, 3]),
            ("object", ["key": "value"]),
            ("object", ["key1": "value1", "key2": "value2"]),
            ("object", ["key1": 1, "key2": 2]),
            ("object", ["1x1": 1]),
            ("object", ["1x1": 1, "2": 2]),
            ("object", ["0": 0]),
            ("object", ["1": 1]),
            ("object", ["0": ["0": "a", "1": "b"]]),
            ("date", date(now)),
            ("file", ["__type": "File", "name": .string(fileName), "url": .string(fileURL)]),
            ("geoPoint", geoPoint(40, -30)),
            ("bytes", ["__type": "Bytes", "base64": "ZnJveW8="]),
        ]
        #expect(values.count == 18)
        for (field, value) in values {
            let id = try await server.create("TestObject", .object([field: value]))
            let stored = try await server.fetch("TestObject", id)
            #expect(stored[field] == value, "\(field): \(value.jsonText) came back as \(stored.jsonText)")
        }
    }

    /// What the JS SDK sends for an `unset`/`clear` pair, by the attribute's state before them.
    private enum UnsetSave {
        /// Saved earlier (`old`): an update with a Delete operation.
        case deleteInUpdate
        /// Set only locally (`new`), or unset without being set (`unknown`): a create with a Delete operation.
        case deleteInCreate
        /// `clear` twice on an object without attributes: nothing to unset, a create without fields.
        case emptyCreate
    }

    // spec: ParseObject.spec.js: old attribute unset then unset
    // spec: ParseObject.spec.js: new attribute unset then unset
    // spec: ParseObject.spec.js: unknown attribute unset then unset
    // spec: ParseObject.spec.js: old attribute unset then clear
    // spec: ParseObject.spec.js: new attribute unset then clear
    // spec: ParseObject.spec.js: unknown attribute unset then clear
    // spec: ParseObject.spec.js: old attribute clear then unset
    // spec: ParseObject.spec.js: new attribute clear then unset
    // spec: ParseObject.spec.js: unknown attribute clear then unset
    // spec: ParseObject.spec.js: old attribute clear then clear
    // spec: ParseObject.spec.js: new attribute clear then clear
    // spec: ParseObject.spec.js: unknown attribute clear then clear
    /// Each case, as the save the SDK sends for it (`UnsetSave`), each in a class of its own: the save's reply has no `x`,
    /// nor has the object read back; a create with a Delete operation (or without fields) adds no `x` to the schema.
    @Test func unsetAndClear() async throws {
        let server = try TestServer()
        let cases: [(String, UnsetSave)] = [
            ("old attribute unset then unset", .deleteInUpdate),
            ("new attribute unset then unset", .deleteInCreate),
            ("unknown attribute unset then unset", .deleteInCreate),
            ("old attribute unset then clear", .deleteInUpdate),
            ("new attribute unset then clear", .deleteInCreate),
            ("unknown attribute unset then clear", .deleteInCreate),
            ("old attribute clear then unset", .deleteInUpdate),
            ("new attribute clear then unset", .deleteInCreate),
            ("unknown attribute clear then unset", .deleteInCreate),
            ("old attribute clear then clear", .deleteInUpdate),
            ("new attribute clear then clear", .deleteInCreate),
            ("unknown attribute clear then clear", .emptyCreate),
        ]
        for (name, save) in cases {
            // "old attribute unset then unset" → OldAttributeUnsetThenUnset
            let className = name.split(separator: " ").map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
            let id: String
            let reply: TestResponse
            switch save {
            case .deleteInUpdate:
                id = try await server.create(className, ["x": 3])
                reply = try await server.request("PUT", "/classes/\(className)/\(id)", json: ["x": ["__op": "Delete"]])
                #expect(reply.status == 200, "\(name): \(reply.text)")
            case .deleteInCreate, .emptyCreate:
                let body: JSON = save == .emptyCreate ? [:] : ["x": ["__op": "Delete"]]
                reply = try await server.request("POST", "/classes/\(className)", json: body)
                #expect(reply.status == 201, "\(name): \(reply.text)")
                id = try #require(reply.json["objectId"]?.stringValue, "\(name): \(reply.text)")
            }
            #expect(reply.json["x"] == nil, "\(name): \(reply.text)")
            let stored = try await server.fetch(className, id)
            #expect(stored["objectId"] == .string(id), "\(name)")
            #expect(stored["x"] == nil, "\(name): \(stored.jsonText)")
            if save != .deleteInUpdate {
                let schema = try await server.request("GET", "/schemas/\(className)", master: true)
                #expect(schema.json["fields"]?["objectId"] != nil, "\(name): \(schema.text)")
                #expect(schema.json["fields"]?["x"] == nil, "\(name): \(schema.text)")
            }
        }
    }
}
