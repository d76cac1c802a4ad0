import Foundation
import RoostCore
import RoostServer
import Testing

/// `EXPLAIN QUERY PLAN` checks: equality, range + order and `$in` on declared indexes, and pointer
/// equality on the automatic pointer index, read an index instead of scanning the class table.
@Suite struct QueryPlanTests {
    /// An `EmbeddedStore` on a fresh directory with `count` `Task`s {title, n, tag, done, due, owner},
    /// removed when the closure returns.
    func withStore(count: Int = 500, _ body: (EmbeddedStore) throws -> Void) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("roost-plan-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try EmbeddedStore(dataDirectory: directory.path)
        defer { try? store.close() }
        var objects: [[String: JSON]] = []
        for i in 0..<count {
            var object: [String: JSON] = [:]
            object["title"] = .string("task \(i)")
            object["n"] = .number(Double(i))
            object["tag"] = .string("tag\(i % 10)")
            object["done"] = .bool(i % 2 == 0)
            object["due"] = date(String(format: "2026-01-%02dT00:00:00.000Z", 1 + i % 28))
            object["owner"] = pointer("Person", String(format: "person%04d", i % 50))
            objects.append(object)
        }
        _ = try store.insert(className: "Task", objects: objects)
        try body(store)
    }

    func declareDefaultIndexes(_ store: EmbeddedStore) throws {
        try store.declareIndex(className: "Task", name: "n_1", fields: ["n": 1])
        try store.declareIndex(className: "Task", name: "tag_1", fields: ["tag": 1])
    }

    /// The plan's lines, recorded in the test's output for diagnosis.
    func plan(_ store: EmbeddedStore, _ parameters: [String: JSON]) throws -> [String] {
        let lines = try store.queryPlan(className: "Task", parameters: parameters)
        print("plan for \(JSON.object(parameters).jsonText):\n  " + lines.joined(separator: "\n  "))
        return lines
    }

    /// Whether a plan line reads the class table by a full scan (a scan of `json_each` is not one).
    func scansTheTable(_ lines: [String]) -> Bool {
        lines.contains { $0.hasPrefix("SCAN") && !$0.contains("json_each") && !$0.contains("CONSTANT ROW") }
    }

    /// The results of `find`, decoded (the store answers with the stored JSON text as is).
    func results(_ store: EmbeddedStore, _ parameters: [String: JSON]) throws -> [JSON] {
        let answer = try store.find(className: "Task", parameters: parameters)
        return try JSONParser.parse(answer.encoded())["results"]?.arrayValue ?? []
    }

    @Test func equalityOnAnIndexedFieldUsesTheIndex() throws {
        try withStore { store in
            try declareDefaultIndexes(store)
            let parameters: [String: JSON] = ["where": ["tag": "tag3"], "limit": 20]
            let lines = try plan(store, parameters)
            #expect(lines.contains { $0.contains("USING INDEX") && $0.contains("tag_1") }, "\(lines)")
            #expect(!scansTheTable(lines), "\(lines)")
            let found = try results(store, parameters)
            #expect(found.count == 20)
            #expect(found.allSatisfy { $0["tag"] == "tag3" })
        }
    }

    @Test func rangeWithOrderOnAnIndexedFieldUsesTheIndexWithoutSorting() throws {
        try withStore { store in
            try declareDefaultIndexes(store)
            let parameters: [String: JSON] = ["where": ["n": ["$gte": 100, "$lt": 200]], "order": "-n", "limit": 20]
            let lines = try plan(store, parameters)
            #expect(lines.contains { $0.contains("USING INDEX") && $0.contains("n_1") }, "\(lines)")
            #expect(!lines.contains { $0.hasPrefix("SCAN") }, "\(lines)")
            #expect(!lines.contains { $0.contains("TEMP B-TREE") }, "\(lines)")
            let found = try results(store, parameters)
            #expect(found.map { $0["n"] } == (180..<200).reversed().map { JSON.number(Double($0)) })
            // Ascending, and a one-sided range.
            let ascending = try plan(store, ["where": ["n": ["$gt": 450]], "order": "n", "limit": 20])
            #expect(ascending.contains { $0.contains("USING INDEX") && $0.contains("n_1") }, "\(ascending)")
            #expect(!ascending.contains { $0.contains("TEMP B-TREE") }, "\(ascending)")
        }
    }

    @Test func inOnAnIndexedFieldUsesTheIndex() throws {
        try withStore { store in
            try declareDefaultIndexes(store)
            let values: [JSON] = (0..<50).map { .number(Double($0 * 7)) }
            let parameters: [String: JSON] = ["where": ["n": ["$in": .array(values)]]]
            let lines = try plan(store, parameters)
            #expect(lines.contains { $0.contains("USING INDEX") && $0.contains("n_1") }, "\(lines)")
            #expect(!scansTheTable(lines), "\(lines)")
            #expect(try results(store, parameters).count == 50)
            // Strings too.
            let tags = try plan(store, ["where": ["tag": ["$in": ["tag1", "tag2"]]]])
            #expect(tags.contains { $0.contains("USING INDEX") && $0.contains("tag_1") }, "\(tags)")
        }
    }

    @Test func pointerFieldsGetAnIndexAutomatically() throws {
        try withStore { store in
            let parameters: [String: JSON] = ["where": ["owner": pointer("Person", "person0007")]]
            let lines = try plan(store, parameters)
            #expect(lines.contains { $0.contains("USING INDEX") }, "\(lines)")
            #expect(!scansTheTable(lines), "\(lines)")
            let found = try results(store, parameters)
            #expect(found.count == 10)
            #expect(found.allSatisfy { $0["owner"] == pointer("Person", "person0007") })
            // $in of pointers.
            let many = try plan(store, ["where": ["owner": ["$in": [pointer("Person", "person0001"), pointer("Person", "person0002")]]]])
            #expect(many.contains { $0.contains("USING INDEX") }, "\(many)")
        }
    }

    @Test func objectIdUsesThePrimaryKey() throws {
        try withStore(count: 50) { store in
            let first = try #require(try results(store, ["limit": 1]).first?["objectId"]?.stringValue)
            let lines = try plan(store, ["where": ["objectId": .string(first)]])
            #expect(lines.contains { $0.contains("USING") && ($0.contains("PRIMARY KEY") || $0.contains("INDEX")) }, "\(lines)")
            #expect(!scansTheTable(lines), "\(lines)")
        }
    }

    @Test func declaredIndexesOnDatesAndBuiltInDates() throws {
        try withStore { store in
            try store.declareIndex(className: "Task", name: "due_1", fields: ["due": 1])
            try store.declareIndex(className: "Task", name: "created", fields: ["createdAt": -1])
            let range = try plan(store, ["where": ["due": ["$gte": date("2026-01-10T00:00:00.000Z"),
                                                          "$lt": date("2026-01-12T00:00:00.000Z")]]])
            #expect(range.contains { $0.contains("USING INDEX") && $0.contains("due_1") }, "\(range)")
            #expect(!scansTheTable(range), "\(range)")
            let newest = try plan(store, ["order": "-createdAt", "limit": 20])
            #expect(newest.contains { $0.contains("USING INDEX") && $0.contains("created") }, "\(newest)")
            #expect(!newest.contains { $0.contains("TEMP B-TREE") }, "\(newest)")
        }
    }

    /// An index declared on a Boolean field serves equality on it too.
    @Test func declaredIndexOnABooleanField() throws {
        try withStore { store in
            try store.declareIndex(className: "Task", name: "done_1", fields: ["done": 1])
            let parameters: [String: JSON] = ["where": ["done": true], "limit": 20]
            let lines = try plan(store, parameters)
            #expect(lines.contains { $0.contains("USING INDEX") && $0.contains("done_1") }, "\(lines)")
            #expect(try results(store, parameters).allSatisfy { $0["done"] == true })
        }
    }

    /// Without a declared index, a field is read by scanning (the stated policy: only pointers and
    /// declared fields are indexed) — which also shows the plan checks above can fail.
    @Test func undeclaredFieldsScan() throws {
        try withStore(count: 50) { store in
            let lines = try plan(store, ["where": ["title": "task 3"]])
            #expect(scansTheTable(lines), "\(lines)")
            #expect(!lines.contains { $0.contains("USING INDEX") }, "\(lines)")
        }
    }

    @Test func declaringAnIndexOnAMissingFieldThrows() throws {
        try withStore(count: 5) { store in
            #expect(throws: ParseError.self) {
                try store.declareIndex(className: "Task", name: "missing_1", fields: ["missing": 1])
            }
            #expect(throws: (any Error).self) {
                try store.declareIndex(className: "NoSuchClass", name: "n_1", fields: ["n": 1])
            }
        }
    }
}
