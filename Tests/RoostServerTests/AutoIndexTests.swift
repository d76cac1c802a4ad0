import Foundation
import RoostCore
import Testing

/// Automatic indexes (`--auto-index`): made in the background for the fields queries keep filtering or sorting on,
/// listed in `GET /schemas` as `_auto_<field>_1`, used by SQLite's planner, bounded per class, dropped when unused.
/// In TIMED_SUITES: builds run 100 ms after the query that asked, and the unused time is seconds here.
@Suite struct AutoIndexTests {
    /// Small numbers so a test needs 40 objects, not 1,000 (`minObjects`), and 3 queries (`afterQueries`).
    static func server(_ environment: [String: String] = [:], arguments: [String] = []) throws -> TestServer {
        try TestServer(arguments: arguments, environment: [
            "ROOST_TEST_AUTO_INDEX_MIN_OBJECTS": "20", "ROOST_TEST_AUTO_INDEX_AFTER_QUERIES": "3",
        ].merging(environment) { _, given in given })
    }

    /// 40 objects with distinct `n` and `title` (so orders have no ties); the last has no `n`.
    static func seed(_ server: TestServer, className: String = "Task", count: Int = 40) async throws {
        _ = try await server.createAll(className, (0..<count).map { i -> JSON in
            var object: [String: JSON] = [
                "n": .number(Double((i * 17) % count)), "tag": .string("t\(i % 4)"), "done": .bool(i % 3 == 0),
                "due": date("2026-01-\(String(format: "%02d", 1 + i % 28))T00:00:00.000Z"), "title": .string("task \(i)"),
            ]
            if i == count - 1 { object["n"] = nil }
            return .object(object)
        })
    }

    static func automaticIndexes(_ server: TestServer, className: String = "Task") async throws -> [String: JSON] {
        let response = try await server.request("GET", "/schemas/\(className)", master: true)
        return (response.json["indexes"]?.objectValue ?? [:]).filter { $0.key.hasPrefix("_auto_") }
    }

    /// Polls `GET /schemas` until `done` holds (builds and drops run in the background), at most `seconds`.
    static func waitForIndexes(_ server: TestServer, className: String = "Task", seconds: Double = 10,
                               until done: ([String: JSON]) -> Bool) async throws -> [String: JSON] {
        let deadline = Date().addingTimeInterval(seconds)
        var indexes = try await automaticIndexes(server, className: className)
        while !done(indexes), Date() < deadline {
            try await Task.sleep(for: .milliseconds(50))
            indexes = try await automaticIndexes(server, className: className)
        }
        return indexes
    }

    static func plan(_ server: TestServer, _ parameters: [String: JSON], className: String = "Task") async throws -> String {
        let response = try await server.find(className, parameters.merging(["explain": "true"]) { a, _ in a }, master: true)
        return (response.json["results"]?.arrayValue ?? []).compactMap { $0["detail"]?.stringValue }.joined(separator: "; ")
    }

    static let rangeQuery: [String: JSON] = ["where": ["n": ["$lt": 25]], "order": "n", "limit": 20]

    @Test func anIndexAppearsAfterThePatternRecursIsUsedAndShownAsAutomatic() async throws {
        let server = try Self.server()
        try await Self.seed(server)
        #expect(try await Self.plan(server, Self.rangeQuery).contains("SCAN"))
        let before = try await server.queryResults("Task", Self.rangeQuery)
        _ = try await server.queryResults("Task", Self.rangeQuery)
        try await Task.sleep(for: .milliseconds(400))
        #expect(try await Self.automaticIndexes(server).isEmpty, "two queries are not yet a pattern")

        _ = try await server.queryResults("Task", Self.rangeQuery)
        let indexes = try await Self.waitForIndexes(server) { $0["_auto_n_1"] != nil }
        #expect(indexes == ["_auto_n_1": ["n": 1]])
        // Listed with the declared ones, which stay as they were.
        #expect(try await server.request("PUT", "/schemas/Task", json: ["indexes": ["tag_1": ["tag": 1]]], master: true).status == 200)
        let listed = try await server.request("GET", "/schemas/Task", master: true).json["indexes"]
        #expect(listed?["_auto_n_1"] == ["n": 1])
        #expect(listed?["tag_1"] == ["tag": 1])

        let plan = try await Self.plan(server, Self.rangeQuery)
        #expect(plan.contains("_a_n") && !plan.contains("SCAN"), "\(plan)")
        #expect(try await server.queryResults("Task", Self.rangeQuery) == before)
        #expect(try await server.logShows("automatic index on Task.n built"))
    }

    @Test func resultsAreTheSameWithAndWithoutAutomaticIndexes() async throws {
        let with = try Self.server(["ROOST_TEST_AUTO_INDEX_AFTER_QUERIES": "1"])
        let without = try Self.server(arguments: ["--no-auto-index"])
        try await Self.seed(with)
        try await Self.seed(without)
        let queries: [[String: JSON]] = [
            Self.rangeQuery,
            ["where": ["n": ["$gte": 10, "$lte": 30]], "order": "-n"],
            ["where": ["tag": "t1"], "order": "n"],
            ["where": ["tag": ["$in": ["t0", "t3"]]], "order": "n"],
            ["where": ["done": true], "order": "n"],
            ["where": ["due": ["$lt": date("2026-01-10T00:00:00.000Z")]], "order": "n"],
            ["where": ["n": ["$gt": 5]], "order": "title", "limit": 7, "skip": 3],
            ["where": ["createdAt": ["$gt": date("2020-01-01T00:00:00.000Z")]], "order": "-title", "limit": 5],
            ["where": ["n": ["$lt": 30]], "count": 1, "limit": 0],
        ]
        func answers(_ server: TestServer) async throws -> [JSON] {
            var all: [JSON] = []
            for query in queries {
                let response = try await server.query("Task", query)
                #expect(response.status == 200, "\(response.text)")
                all.append(.array((response.json["results"]?.arrayValue ?? []).map { $0["title"] ?? .null }))
                all.append(response.json["count"] ?? .null)
            }
            return all
        }
        let expected = try await answers(without)
        #expect(try await answers(with) == expected)  // Each query is now a pattern: builds are queued.
        let built = try await Self.waitForIndexes(with) { $0.count >= 6 }
        #expect(Set(built.keys) == ["_auto_n_1", "_auto_tag_1", "_auto_done_1", "_auto_due_1", "_auto_title_1", "_auto_createdAt_1"])
        #expect(try await answers(with) == expected)
        // `--no-auto-index`: the same queries, many times over, make none.
        for _ in 0..<3 { _ = try await answers(without) }
        try await Task.sleep(for: .milliseconds(400))
        #expect(try await Self.automaticIndexes(without).isEmpty)
    }

    @Test func theNumberPerClassIsBounded() async throws {
        let server = try Self.server(["ROOST_TEST_AUTO_INDEX_MAX_PER_CLASS": "2"])
        try await Self.seed(server)
        for field in ["n", "tag", "done", "title"] {
            for _ in 0..<3 { _ = try await server.queryResults("Task", ["where": [field: ["$exists": true]], "order": .string(field)]) }
        }
        _ = try await Self.waitForIndexes(server) { $0.count >= 2 }
        try await Task.sleep(for: .milliseconds(500))  // The other two builds ran too, and stopped at the bound.
        for _ in 0..<3 { _ = try await server.queryResults("Task", ["where": ["title": ["$exists": true]], "order": "title"]) }
        try await Task.sleep(for: .milliseconds(500))
        #expect(try await Self.automaticIndexes(server).count == 2)
    }

    @Test func aSmallClassGetsNone() async throws {
        let server = try Self.server()
        try await Self.seed(server, count: 10)
        for _ in 0..<6 { _ = try await server.queryResults("Task", Self.rangeQuery) }
        try await Task.sleep(for: .milliseconds(500))
        #expect(try await Self.automaticIndexes(server).isEmpty)
    }

    @Test func aClassTooLargeGetsNoneAndALogLineSaysWhatToDeclare() async throws {
        let server = try Self.server(["ROOST_TEST_AUTO_INDEX_MAX_OBJECTS": "30"])
        try await Self.seed(server)
        for _ in 0..<6 { _ = try await server.queryResults("Task", Self.rangeQuery) }
        try await Task.sleep(for: .milliseconds(500))
        #expect(try await Self.automaticIndexes(server).isEmpty)
        #expect(try await server.logShows("no automatic index on Task.n: 40 objects, more than 30"))
        #expect(server.log().components(separatedBy: "no automatic index on Task.n").count == 2, "looked at once, not every 3 queries")
    }

    @Test func anIndexNoQueryUsesIsDropped() async throws {
        let server = try Self.server(["ROOST_TEST_AUTO_INDEX_UNUSED_S": "2"])
        try await Self.seed(server)
        for _ in 0..<3 { _ = try await server.queryResults("Task", Self.rangeQuery) }
        for _ in 0..<3 { _ = try await server.queryResults("Task", ["where": ["tag": "t2"]]) }
        _ = try await Self.waitForIndexes(server) { $0.count == 2 }
        // `n` keeps being queried for 3 s (longer than the unused time), `tag` is not.
        for _ in 0..<12 {
            _ = try await server.queryResults("Task", Self.rangeQuery)
            try await Task.sleep(for: .milliseconds(250))
        }
        let remaining = try await Self.waitForIndexes(server) { $0["_auto_tag_1"] == nil }
        #expect(remaining == ["_auto_n_1": ["n": 1]])
        #expect(try await server.logShows("automatic index on Task.tag dropped: unused for 2 s"))
        #expect(try await Self.plan(server, ["where": ["tag": "t2"]]).contains("SCAN"))
        // Unused in turn, `n`'s goes too.
        #expect(try await Self.waitForIndexes(server) { $0.isEmpty }.isEmpty)
        #expect(!(try await Self.plan(server, Self.rangeQuery).contains("_a_n")))
    }

    /// The build runs 100 ms after the query that asked: a field deleted in between is seen by the build, which makes
    /// nothing (or, on a slow machine, the build came first and the delete drops it). Either way no index and no error.
    @Test func aFieldDeletedWhileItsBuildIsQueuedEndsWithNone() async throws {
        let server = try Self.server()
        try await Self.seed(server)
        for _ in 0..<3 { _ = try await server.queryResults("Task", Self.rangeQuery) }
        let deleted = try await server.request("PUT", "/schemas/Task", json: ["fields": ["n": ["__op": "Delete"]]], master: true)
        #expect(deleted.status == 200, "\(deleted.text)")
        try await Task.sleep(for: .milliseconds(500))
        #expect(try await Self.automaticIndexes(server).isEmpty)
        #expect(!server.log().contains("not built"))
        #expect(try await server.queryResults("Task", ["where": ["tag": "t1"]]).count == 10)
    }

    /// An export lists the automatic indexes as `GET /schemas` does; an import leaves them out (its server makes its own).
    @Test func anExportWithAutomaticIndexesImports() async throws {
        let server = try Self.server()
        try await Self.seed(server)
        for _ in 0..<3 { _ = try await server.queryResults("Task", Self.rangeQuery) }
        _ = try await Self.waitForIndexes(server) { !$0.isEmpty }
        // Sent back as it was listed, it is refused as Parse refuses an existing index.
        expectParseError(try await server.request("PUT", "/schemas/Task", json: ["indexes": ["_auto_n_1": ["n": 1]]], master: true),
                         102, "Index _auto_n_1 exists, cannot update.")
        let exportPath = CommandLineTests.freshPath() + ".jsonl"
        defer { unlink(exportPath) }
        let exported = try CommandLineTests.run(["export", "--data-dir", server.dataDirectory.path, "--out", exportPath])
        #expect(exported.status == 0, "\(exported.output)")
        #expect(try String(contentsOfFile: exportPath, encoding: .utf8).contains("_auto_n_1"))
        let target = CommandLineTests.freshPath()
        let imported = try CommandLineTests.run(["import", "--data-dir", target, exportPath])
        #expect(imported.status == 0, "\(imported.output)")
        let second = try TestServer(dataDirectory: URL(fileURLWithPath: target))
        #expect(try await Self.automaticIndexes(second).isEmpty)
        #expect(try await second.queryResults("Task", Self.rangeQuery) == (try await server.queryResults("Task", Self.rangeQuery)))
    }

    @Test func deletingTheFieldOrTheClassOrDeclaringAnIndexCleansUp() async throws {
        let server = try Self.server()
        try await Self.seed(server)
        for field in ["n", "tag", "title"] {
            for _ in 0..<3 { _ = try await server.queryResults("Task", ["where": [field: ["$exists": true]], "order": .string(field)]) }
        }
        _ = try await Self.waitForIndexes(server) { $0.count == 3 }

        // A field deleted takes its automatic index along.
        let deleted = try await server.request("PUT", "/schemas/Task", json: ["fields": ["tag": ["__op": "Delete"]]], master: true)
        #expect(deleted.status == 200, "\(deleted.text)")
        #expect(Set(try await Self.automaticIndexes(server).keys) == ["_auto_n_1", "_auto_title_1"])
        // A declared index leading with the same field replaces the automatic one.
        #expect(try await server.request("PUT", "/schemas/Task", json: ["indexes": ["n_title": ["n": 1, "title": 1]]], master: true).status == 200)
        #expect(Set(try await Self.automaticIndexes(server).keys) == ["_auto_title_1"])
        // An automatic index may be deleted as a declared one is.
        let dropped = try await server.request("PUT", "/schemas/Task", json: ["indexes": ["_auto_title_1": ["__op": "Delete"]]], master: true)
        #expect(dropped.status == 200, "\(dropped.text)")
        #expect(try await Self.automaticIndexes(server).isEmpty)
        #expect(try await Self.plan(server, ["where": ["title": "task 3"]]).contains("SCAN"))

        // The class dropped and made again starts from nothing: two queries are not a pattern on the new one.
        for _ in 0..<2 { _ = try await server.queryResults("Task", ["where": ["done": true]]) }
        for object in try await server.queryResults("Task", ["limit": 100], master: true) {
            #expect(try await server.request("DELETE", "/classes/Task/\(object["objectId"]?.stringValue ?? "")", master: true).status == 200)
        }
        #expect(try await server.request("DELETE", "/schemas/Task", master: true).status == 200)
        try await Self.seed(server)
        _ = try await server.queryResults("Task", ["where": ["done": true]])
        try await Task.sleep(for: .milliseconds(400))
        #expect(try await Self.automaticIndexes(server).isEmpty)
        for _ in 0..<2 { _ = try await server.queryResults("Task", ["where": ["done": true]]) }
        #expect(try await Self.waitForIndexes(server) { !$0.isEmpty } == ["_auto_done_1": ["done": 1]])
    }
}
