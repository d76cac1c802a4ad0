import Foundation
import RoostCore
@testable import RoostServer
import RoostTestSupport
import Testing

/// The server on PostgreSQL (`--database-url`), checked where SQLite has no equivalent: the plans PostgreSQL picks
/// for what the server asks. (The end-to-end suites run on PostgreSQL in `make test`'s second pass.)
@Suite struct PostgresServerTests {
    /// A declared index (`PUT /schemas`) is made on the typed expression `PostgresQueryCompiler` compares and orders
    /// by, so a filtered, ordered page reads it, in both directions and with the caller's read permission.
    @Test func aDeclaredIndexAnswersTheQueriesItNames() async throws {
        let server = try TestServer(onPostgres: true)
        let database = try #require(server.postgres)
        let objects: [JSON] = (0..<3_000).map { i in ["n": .number(Double(i)), "label": .string("item \(i)")] }
        _ = try await server.createAll("Thing", objects)
        let declared = try await server.request("PUT", "/schemas/Thing", json: ["className": "Thing",
                                                "indexes": ["byN": ["n": 1], "byLabel": ["label": 1]]], master: true)
        #expect(declared.status == 200, "\(declared.text)")
        // What the server answers: the right page.
        let page = try await server.results("Thing", ["where": ["n": ["$lt": 100]], "order": "-n", "limit": 5])
        #expect(page.compactMap { $0["n"]?.numberValue } == [99, 98, 97, 96, 95])

        let db = try database.connect()
        try db.execute("ANALYZE")
        let schema = try #require(try SchemaStore.load("Thing", in: db))
        for order in [SortKey(key: "n", descending: false), SortKey(key: "n", descending: true)] {
            for readers in [nil, ["*"], ["*", "someUser"]] as [[String]?] {
                var query = FindQuery(constraint: try QueryConstraint.parse(where: ["n": ["$lt": 100]]), order: [order], limit: 5)
                query.readableBy = readers
                let (sql, arguments) = try ObjectStore.selectSQL(query, in: schema, in: db)
                let plan = try db.fetchRows("EXPLAIN " + sql, arguments, cacheable: false).compactMap { $0.first?.text }.joined(separator: "\n")
                #expect(plan.contains("Index Scan") && plan.contains("_i_byN"), "\(plan)")
                #expect(!plan.contains("Sort"), "\(plan)")
            }
        }
        // Equality and `$in` on a String or Number field read their index too (compared in the index's collation).
        for (constraint, index) in [(["label": "item 7"], "_i_byLabel"), (["label": ["$in": ["item 7", "item 9"]]], "_i_byLabel"),
                                    (["n": ["$in": [7, 9, 11]]], "_i_byN")] as [(JSON, String)] {
            let query = FindQuery(constraint: try QueryConstraint.parse(where: constraint), order: [], limit: 5)
            let (sql, arguments) = try ObjectStore.selectSQL(query, in: schema, in: db)
            let plan = try db.fetchRows("EXPLAIN " + sql, arguments, cacheable: false).compactMap { $0.first?.text }.joined(separator: "\n")
            #expect(plan.contains("Index") && plan.contains(index) && !plan.contains("Seq Scan"), "\(constraint.jsonText): \(plan)")
            #expect(try await server.results("Thing", ["where": constraint]).count == (constraint["n"] == nil ? (constraint["label"]?.stringValue == nil ? 2 : 1) : 3))
        }
    }

    /// Automatic indexes on PostgreSQL: the recurring query's field gets one, on the compiler's typed expression, which
    /// the plan then reads (`explain=true` answers Parse Server's `EXPLAIN (FORMAT JSON)` there); answers do not change.
    @Test func anAutomaticIndexAppearsAndAnswersTheQueryThatAskedForIt() async throws {
        let server = try TestServer(environment: ["ROOST_TEST_AUTO_INDEX_AFTER_QUERIES": "3"], onPostgres: true)
        let database = try #require(server.postgres)
        let objects: [JSON] = (0..<3_000).map { i in ["n": .number(Double((i * 7) % 3_000)), "label": .string("item \(i)")] }
        _ = try await server.createAll("Thing", objects)
        let query: [String: JSON] = ["where": ["n": ["$lt": 100]], "order": "-n", "limit": 5]
        let before = try await server.results("Thing", query)
        #expect(before.compactMap { $0["n"]?.numberValue } == [99, 98, 97, 96, 95])
        for _ in 0..<2 { _ = try await server.results("Thing", query) }

        var indexes: JSON?
        for _ in 0..<100 {
            indexes = try await server.request("GET", "/schemas/Thing", master: true).json["indexes"]
            if indexes?["_auto_n_1"] != nil { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(indexes == ["_auto_n_1": ["n": 1]])
        try database.connect().execute("ANALYZE")
        let explained = try await server.find("Thing", query.merging(["explain": "true"]) { a, _ in a }, master: true)
        let plan = explained.json["results"]?.arrayValue?.first?["QUERY PLAN"]?.jsonText ?? explained.text
        #expect(plan.contains("Index Scan") && plan.contains("_a_n") && !plan.contains("\"Sort\""), "\(plan)")
        #expect(try await server.results("Thing", query) == before)
    }
}
