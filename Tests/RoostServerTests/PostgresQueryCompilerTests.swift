import Foundation
import RoostCore
@testable import RoostServer
import RoostTestSupport
import Testing

/// `PostgresQueryCompiler`'s SQL, run against a real PostgreSQL cluster on a table of four objects: each `where`
/// finds exactly the objects Parse (and `QueryCompiler` on SQLite) would.
@Suite struct PostgresQueryCompilerTests {
    static let schema = ClassSchema(
        id: 1, className: "Thing",
        fields: ["score": .number, "name": .string, "tags": .array, "owner": .pointer(targetClass: "_User"), "when": .date,
                 "flag": .boolean, "info": .object, "loose": .object],
        classLevelPermissions: nil, indexes: nil)

    static let objects: [(id: String, createdAt: String, data: String)] = [
        ("a", "2026-01-01T00:00:00.000Z", #"""
            {"score": 10, "name": "alpha", "tags": ["x", "y"], "owner": {"__type": "Pointer", "className": "_User", "objectId": "u1"},
             "when": {"__type": "Date", "iso": "2026-01-01T00:00:00.000Z"}, "flag": true, "info": {"rank": 1, "group": ["A", "B"]}, "loose": 5}
            """#),
        ("b", "2026-02-01T00:00:00.000Z", #"""
            {"score": 20, "name": "beta", "tags": ["y"], "owner": {"__type": "Pointer", "className": "_User", "objectId": "u2"},
             "when": {"__type": "Date", "iso": "2026-06-01T00:00:00.000Z"}, "flag": false, "info": {"rank": 2, "group": "A"}, "loose": "5"}
            """#),
        ("c", "2026-03-01T00:00:00.000Z", #"""
            {"score": -3.5, "name": "Gamma\nline", "tags": [], "info": {"rank": "3"}, "loose": null}
            """#),
        ("d", "2026-04-01T00:00:00.000Z", #"""
            {"tags": [1, 2], "info": {}}
            """#),
    ]

    /// `where` → the objectIds it finds.
    static let cases: [(where: String, ids: [String])] = [
        (#"{"score": 10}"#, ["a"]),
        (#"{"score": {"$lt": 15}}"#, ["a", "c"]),
        (#"{"score": {"$gte": 10, "$lte": 20}}"#, ["a", "b"]),
        (#"{"score": {"$ne": 10}}"#, ["b", "c", "d"]),  // A missing field is not equal.
        (#"{"score": {"$gt": "1"}}"#, []),  // A string never compares with numbers.
        (#"{"name": {"$gt": "b"}}"#, ["b"]),  // Byte order: "Gamma" < "b".
        (#"{"name": {"$in": ["alpha", "Gamma\nline", "zeta"]}}"#, ["a", "c"]),
        (#"{"name": {"$nin": ["alpha", "beta"]}}"#, ["c", "d"]),
        (#"{"tags": "y"}"#, ["a", "b"]),
        (#"{"tags": {"$all": ["x", "y"]}}"#, ["a"]),
        (#"{"tags": {"$in": ["x", 2]}}"#, ["a", "d"]),
        (#"{"tags": {"$nin": ["y"]}}"#, ["c", "d"]),
        (#"{"tags": {"$gt": 1}}"#, ["d"]),
        (#"{"tags": {"$regex": "^x"}}"#, ["a"]),
        (#"{"owner": {"__type": "Pointer", "className": "_User", "objectId": "u1"}}"#, ["a"]),
        (#"{"owner": {"$in": ["u2"]}}"#, ["b"]),  // Plain ids on a Pointer field, as Parse reads them.
        (#"{"owner": {"$ne": "u2"}}"#, ["a", "c", "d"]),
        (#"{"owner": {"$exists": false}}"#, ["c", "d"]),
        (#"{"owner": {"$exists": true}}"#, ["a", "b"]),
        (#"{"when": {"$lt": {"__type": "Date", "iso": "2026-03-01T00:00:00.000Z"}}}"#, ["a"]),
        (#"{"when": {"$gte": {"__type": "Date", "iso": "2026-01-01T00:00:00.000Z"}}}"#, ["a", "b"]),
        (#"{"createdAt": {"$gt": {"__type": "Date", "iso": "2026-02-01T00:00:00.000Z"}}}"#, ["c", "d"]),
        (#"{"createdAt": {"$lte": "2026-02-01T00:00:00.000Z"}}"#, ["a", "b"]),
        (#"{"flag": true}"#, ["a"]),
        (#"{"flag": {"$ne": true}}"#, ["b", "c", "d"]),
        (#"{"info.rank": {"$gte": 2}}"#, ["b"]),  // c's rank is the string "3".
        (#"{"info.rank": "3"}"#, ["c"]),
        (#"{"info.group": "A"}"#, ["a", "b"]),  // Through the array where the path ends, and the scalar.
        (#"{"info.group": {"$in": ["B"]}}"#, ["a"]),
        (#"{"info.group.1": "B"}"#, ["a"]),  // A numeric part indexes the array.
        (#"{"info": {"rank": 1, "group": ["A", "B"]}}"#, ["a"]),  // Whole Objects, key order aside.
        // A field recorded as an Object never matches a number or string (`QueryCompiler.fieldGuard`); a real Object
        // field holds none (writes are type-checked).
        (#"{"loose": 5}"#, []),
        (#"{"loose": "5"}"#, []),
        (#"{"loose": null}"#, ["c", "d"]),
        (#"{"loose": {"$in": [5, "x"]}}"#, []),
        (#"{"name": {"$regex": "^gam", "$options": "i"}}"#, ["c"]),
        (#"{"name": {"$regex": "line$"}}"#, ["c"]),
        (#"{"name": {"$regex": "^line"}}"#, []),
        (#"{"name": {"$regex": "^line", "$options": "m"}}"#, ["c"]),
        (#"{"name": {"$regex": "a.l", "$options": "s"}}"#, ["c"]),  // "Gamm[a\nl]ine".
        (#"{"name": {"$regex": "a.l"}}"#, []),
        (#"{"score": {"$regex": "1"}}"#, []),  // Only strings match a regex.
        (#"{"tags": {"$containedBy": ["x", "y"]}}"#, ["a", "b", "c"]),  // c's empty array too.
        (#"{"tags": {"$containedBy": [1, 2, 3]}}"#, ["c", "d"]),
        (#"{"when": {"$lt": {"$relativeTime": "1 day ago"}}}"#, ["a", "b"]),
        (#"{"when": {"$gt": {"$relativeTime": "in 1 day"}}}"#, []),
        (#"{"createdAt": {"$gte": {"$relativeTime": "100 years ago"}}}"#, ["a", "b", "c", "d"]),
        (#"{"$or": [{"score": 10}, {"flag": false}]}"#, ["a", "b"]),
        (#"{"$and": [{"tags": "y"}, {"score": {"$gt": 15}}]}"#, ["b"]),
        (#"{"$nor": [{"score": 10}, {"tags": [1, 2]}]}"#, ["b", "c"]),
        (#"{"objectId": {"$in": ["a", "c"]}}"#, ["a", "c"]),
        (#"{"objectId": {"$gt": "b"}}"#, ["c", "d"]),
        (#"{"objectId": {"$nin": ["a"]}, "score": {"$exists": true}}"#, ["b", "c"]),
    ]

    @Test func eachWhereFindsWhatParseFinds() throws {
        let db = try PostgresConnection(url: try PostgresTestCluster.url())
        let table = "things_" + UUID().uuidString.prefix(8).lowercased()
        // The class table as the server makes it (`PostgresClassTable`), under a name of its own.
        for statement in PostgresClassTable.createStatements(table: table, tableID: Int64.random(in: 1_000_000...Int64.max)) {
            try db.execute(statement)
        }
        defer { _ = try? db.execute("DROP TABLE \(table)") }
        for object in Self.objects {
            let millis = Int64(try #require(ParseDate(iso: object.createdAt)).millisecondsSince1970)
            try db.query("INSERT INTO \(table) (objectId, createdAt, updatedAt, data) VALUES ($1, $2, $2, $3::jsonb)",
                         [.text(object.id), .int(millis), .text(object.data)])
        }
        let compiler = PostgresQueryCompiler(schema: Self.schema)
        for (whereText, expected) in Self.cases {
            let constraint = try QueryConstraint.parse(where: try JSONParser.parse(whereText))
            let fragment = try compiler.compile(constraint)
            let sql = "SELECT objectId FROM \(table) WHERE \(fragment.numbered()) ORDER BY objectId"
            do {
                let ids = try db.query(sql, fragment.parameters).rows.map { try $0.string(0) ?? "" }
                #expect(ids == expected, "\(whereText)\n\(sql)")
            } catch {
                Issue.record("\(whereText): \(error)\n\(sql)")
            }
        }
    }

    /// A comparison on a recorded Number field is the expression a declared index is made of.
    @Test func aNumberComparisonUsesTheExpressionIndex() throws {
        let db = try PostgresConnection(url: try PostgresTestCluster.url())
        let table = "indexed_" + UUID().uuidString.prefix(8).lowercased()
        try db.execute("""
            CREATE TABLE \(table) (objectId text PRIMARY KEY, createdAt bigint, updatedAt bigint, data jsonb NOT NULL);
            INSERT INTO \(table) SELECT 'o' || i, 0, 0, jsonb_build_object('score', i) FROM generate_series(1, 5000) AS i;
            CREATE INDEX \(table)_score ON \(table) (((data ->> 'score')::float8));
            ANALYZE \(table);
            """)
        defer { _ = try? db.execute("DROP TABLE \(table)") }
        let fragment = try PostgresQueryCompiler(schema: Self.schema).compile(.field("score", .lessThan(10)))
        let plan = try db.query("EXPLAIN SELECT * FROM \(table) WHERE \(fragment.numbered())", fragment.parameters)
            .rows.map { try $0.string(0) ?? "" }.joined(separator: "\n")
        #expect(plan.contains("\(table)_score"), "\(plan)")
    }

    /// An ordered page on a recorded Number field walks an index on the comparison's expression declared `NULLS FIRST`
    /// (SQLite's place for missing values), whichever the direction, with the read permission tested on the way.
    @Test func anOrderedPageWalksTheExpressionIndex() throws {
        let db = try PostgresConnection(url: try PostgresTestCluster.url())
        let namespace = "ordered_" + UUID().uuidString.prefix(8).lowercased()
        let table = "c9"  // `ClassSchema.tableName` of id 9, in a schema of its own.
        try db.execute("CREATE SCHEMA \(namespace); SET search_path TO \(namespace)")
        try PostgresSchema.migrate(db)  // The SQL functions the read filter uses (`instr`).
        try db.execute("""
            CREATE TABLE \(table) (objectId text PRIMARY KEY, createdAt bigint, updatedAt bigint, acl text, rperm text, data jsonb NOT NULL);
            INSERT INTO \(table) SELECT 'o' || i, 0, 0, NULL, CASE WHEN i % 3 = 0 THEN '["u1"]' END, jsonb_build_object('score', i)
                FROM generate_series(1, 20000) AS i;
            CREATE INDEX \(table)_score ON \(table) (((data ->> 'score')::float8) NULLS FIRST);
            ANALYZE \(table);
            """)
        defer { _ = try? db.execute("DROP SCHEMA \(namespace) CASCADE") }
        let schema = ClassSchema(id: 9, className: "Thing", fields: ["score": .number], classLevelPermissions: nil, indexes: nil)
        for descending in [false, true] {
            var query = FindQuery(limit: 10, skip: 100)
            query.order = [SortKey(key: "score", descending: descending)]
            query.readableBy = ["*", "u2"]
            let statement = try PostgresQueryCompiler(schema: schema).select(query)
            let plan = try db.query("EXPLAIN " + statement.numbered(), statement.parameters).rows.map { try $0.string(0) ?? "" }.joined(separator: "\n")
            #expect(plan.contains("Index Scan") && plan.contains("\(table)_score") && !plan.contains("Sort"), "\(plan)")
            let ids = try db.query(statement.numbered(), statement.parameters).rows.map { try $0.string(0) ?? "" }
            // u2 reads the public rows alone (i % 3 != 0): the 101st to 110th of them.
            let expected = (descending ? Array((1...20000).reversed()) : Array(1...20000)).filter { $0 % 3 != 0 }.dropFirst(100).prefix(10)
            #expect(ids == expected.map { "o\($0)" })
        }
    }

    /// `$text` on a String field with a declared text index reads the GIN index on `textIndexExpression` for the rows
    /// holding a form of its words, then tests those; it answers what the unindexed search answers.
    @Test func aTextSearchNarrowsThroughTheGINIndex() throws {
        let db = try PostgresConnection(url: try PostgresTestCluster.url())
        let namespace = "text_" + UUID().uuidString.prefix(8).lowercased()
        try db.execute("CREATE SCHEMA \(namespace); SET search_path TO \(namespace)")
        try PostgresSchema.migrate(db)  // The SQL functions the read filter uses (`instr`).
        try db.execute("""
            CREATE TABLE c9 (objectId text PRIMARY KEY, createdAt bigint, updatedAt bigint, acl text, rperm text, data jsonb NOT NULL);
            INSERT INTO c9 SELECT 'o' || i, 0, 0, NULL, NULL, jsonb_build_object('body', CASE WHEN i % 1000 = 0 THEN 'Bagels at Café ' || i
                ELSE 'plain words number ' || i END) FROM generate_series(1, 20000) AS i;
            CREATE INDEX c9_body_words ON c9 USING GIN ((\(PostgresQueryCompiler.textIndexExpression("body"))));
            ANALYZE c9;
            """)
        defer { _ = try? db.execute("DROP SCHEMA \(namespace) CASCADE") }
        let indexes: JSON = ["body_text": ["body": "text"]]
        let indexed = ClassSchema(id: 9, className: "Thing", fields: ["body": .string], classLevelPermissions: nil, indexes: indexes)
        let plain = ClassSchema(id: 9, className: "Thing", fields: ["body": .string], classLevelPermissions: nil, indexes: nil)
        for term in ["bagel cafe", "\"bagels at\"", "CAFÉS"] {
            let query = FindQuery(constraint: .field("body", .matchesText(TextSearch(term: term))), limit: 1000)
            let statement = try PostgresQueryCompiler(schema: indexed).select(query)
            let plan = try db.query("EXPLAIN " + statement.numbered(), statement.parameters).rows.map { try $0.string(0) ?? "" }.joined(separator: "\n")
            #expect(plan.contains("Bitmap Index Scan on c9_body_words"), "\(term)\n\(plan)")
            let found = try db.query(statement.numbered(), statement.parameters).rows.map { try $0.string(0) ?? "" }.sorted()
            let unindexed = try PostgresQueryCompiler(schema: plain).select(query)
            #expect(found == (try db.query(unindexed.numbered(), unindexed.parameters).rows.map { try $0.string(0) ?? "" }.sorted()), "\(term)")
            #expect(found.count == 20, "\(term)")
        }
    }

    /// Parse's 107s for operands, as on SQLite.
    @Test func badOperandsAre107() throws {
        let compiler = PostgresQueryCompiler(schema: Self.schema)
        for whereText in [#"{"score": {"$lt": {"$relativeTime": "1 day ago"}}}"#,  // Not a Date field.
                          #"{"when": {"$ne": {"$relativeTime": "1 day ago"}}}"#,  // Only comparisons.
                          #"{"when": {"$lt": {"$relativeTime": "yesterday-ish"}}}"#,
                          #"{"name": {"$lt": {"a": 1}}}"#] {  // bad atom
            let constraint = try QueryConstraint.parse(where: try JSONParser.parse(whereText))
            let error = try #require(throws: ParseError.self, "\(whereText)") { try compiler.compile(constraint) }
            #expect(error.code == .invalidJSON, "\(whereText)")
        }
    }

    @Test func regexOptionsBecomeEmbeddedAREOptions() {
        #expect(PostgresQueryCompiler.embeddedOptions("") == "(?p)")
        #expect(PostgresQueryCompiler.embeddedOptions("i") == "(?pi)")
        #expect(PostgresQueryCompiler.embeddedOptions("m") == "(?n)")
        #expect(PostgresQueryCompiler.embeddedOptions("s") == "(?s)")
        #expect(PostgresQueryCompiler.embeddedOptions("msx") == "(?wx)")
    }
}

/// PCRE's `\Q...\E`, which the Parse SDKs send for startsWith, endsWith and contains, has no ARE spelling: the
/// quoted characters are escaped one by one.
@Suite struct PostgresRegexQuoteTests {
    @Test func quotedTextBecomesEscapedCharacters() {
        #expect(PostgresQueryCompiler.literalizingQuotes(#"^\Qa.b(\E"#) == #"^a\.b\("#)
        #expect(PostgresQueryCompiler.literalizingQuotes(#"\Q)+d\E$"#) == #"\)\+d$"#)
        #expect(PostgresQueryCompiler.literalizingQuotes(#"\Qé_1\E"#) == "é_1")
        // Unterminated: quoted to the end, as in PCRE.
        #expect(PostgresQueryCompiler.literalizingQuotes(#"\Q[x"#) == #"\[x"#)
        // An escaped backslash before Q is no quote; other escapes and text outside quotes stay.
        #expect(PostgresQueryCompiler.literalizingQuotes(#"\\Q\d+\Q.\E"#) == #"\\Q\d+\."#)
        #expect(PostgresQueryCompiler.literalizingQuotes(#"^\w+$"#) == #"^\w+$"#)
    }
}
