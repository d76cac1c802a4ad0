import Foundation
import RoostCore
@testable import RoostServer
import Testing

/// `GET /aggregate` in SQL (`AggregationPlan`) against the whole pipeline in memory, on the same data: the server runs
/// with `ROOST_TEST_AGGREGATE_IN_MEMORY=1`, so `roostInMemory` asks for the in-memory answer.
@Suite struct AggregationPushdownTests {
    /// Answers from both paths: the SQL one, then the in-memory one.
    private static func both(_ server: TestServer, _ className: String, _ parameters: [String: JSON]) async throws -> (TestResponse, TestResponse) {
        let query = parameters.mapValues(\.jsonText)
        let sql = try await server.request("GET", "/aggregate/\(className)", master: true, query: query)
        let memory = try await server.request("GET", "/aggregate/\(className)", master: true,
                                              query: query.merging([AggregateRoutes.inMemoryParameter: "1"]) { a, _ in a })
        return (sql, memory)
    }

    private static func server() throws -> TestServer {
        try TestServer(environment: ["ROOST_TEST_AGGREGATE_IN_MEMORY": "1"])
    }

    /// Objects whose fields take every kind of value a field of their type can hold, missing and null included.
    private static func randomObjects(_ count: Int, owners: [String], using random: inout SeededRandom) -> [JSON] {
        (0..<count).map { _ in
            var object: [String: JSON] = [:]
            func maybe(_ key: String, _ values: [JSON]) {
                let pick = Int.random(in: 0..<(values.count + 2), using: &random)
                if pick < values.count { object[key] = values[pick] } else if pick == values.count { object[key] = .null }
            }
            maybe("n", [0, 1, 2, 3, -4, 7.5, 0.1, 0.2, 1e15, 12, 2.25])
            maybe("tag", ["", "a", "b", "B", "c", "ab", "é", "x y", "a\"q", "end\u{1}"])
            maybe("flag", [true, false])
            maybe("when", ["2020-01-01T00:00:00.000Z", "2021-06-15T12:30:00.000Z", "2019-12-31T23:59:59.999Z"].map(date))
            maybe("owner", owners.map { pointer("Owner", $0) })
            maybe("tags", [[], ["a"], ["a", "b"], ["c", "a"]])
            maybe("scores", [[1], [2, 3], []])
            maybe("meta", [["group": "x"], ["group": "y", "k": 1], [:]])
            return .object(object)
        }
    }

    /// One random pipeline from the stages, operators and values the endpoint takes (some the SQL path cannot).
    private static func randomPipeline(owners: [String], using random: inout SeededRandom) -> [JSON] {
        func pick<T>(_ values: [T]) -> T { values[Int.random(in: 0..<values.count, using: &random)] }
        let operands: [JSON] = [0, 1, 2, 7.5, -4, "a", "b", "", "é", true, false, .null, date("2020-06-01T00:00:00.000Z"),
                                date("2021-06-15T12:30:00.000Z"), .string(owners[0]), pointer("Owner", owners[1]), pointer("Other", owners[0]),
                                ["group": "x"], [1], "2020-01-01T00:00:00.000Z"]
        let keys = ["n", "tag", "flag", "when", "owner", "tags", "scores", "meta", "_id", "objectId", "createdAt", "_created_at",
                    "missing", "meta.group"]
        func condition(_ depth: Int) -> JSON {
            if depth < 2 && Int.random(in: 0..<6, using: &random) == 0 {
                return [pick(["$or", "$and", "$nor"]): .array((0..<Int.random(in: 0...2, using: &random)).map { _ in condition(depth + 1) })]
            }
            let key = pick(keys)
            let operand = key == "createdAt" || key == "_created_at"
                ? pick([date("2020-01-01T00:00:00.000Z"), date("2999-01-01T00:00:00.000Z"), date("2020-01-01T00:00:00Z")]) : pick(operands)
            switch Int.random(in: 0..<8, using: &random) {
            case 0: return [key: operand]
            case 1: return [key: ["$exists": pick([true, false, 1])]]
            case 2: return [key: [pick(["$in", "$nin"]): .array((0..<Int.random(in: 0...3, using: &random)).map { _ in pick(operands) })]]
            case 3: return [key: [pick(["$gt", "$gte"]): operand, pick(["$lt", "$lte"]): pick(operands)]]
            default: return [key: [pick(["$eq", "$ne", "$gt", "$gte", "$lt", "$lte"]): operand]]
            }
        }
        let fields: [JSON] = ["$n", "$tag", "$flag", "$when", "$owner", "$tags", "$meta", "$meta.group", "$_id", "$createdAt", "$missing"]
        func accumulators() -> [String: JSON] {
            var result: [String: JSON] = [:]
            for index in 0..<Int.random(in: 0...4, using: &random) {
                let name = pick(["$sum", "$avg", "$min", "$max", "$first", "$last", "$push", "$addToSet", "$count"])
                let argument: JSON = name == "$sum" && Int.random(in: 0..<3, using: &random) == 0 ? pick([1, 0.1, 2]) : pick(fields)
                result["a\(index)"] = [name: argument]
            }
            if Int.random(in: 0..<5, using: &random) == 0 { result["product"] = ["$sum": ["$multiply": ["$n", 2]]] }
            return result
        }
        var stages: [JSON] = []
        for _ in 0..<Int.random(in: 0...2, using: &random) { stages.append(["$match": condition(0)]) }
        let grouping = Int.random(in: 0..<2, using: &random) == 0
        if grouping {
            let key: JSON = pick([.null, "$tag", "$n", "$flag", "$owner", "$when", "$meta.group", "$meta", "$tags", "$createdAt", "$missing",
                                  ["t": "$tag", "f": "$flag"], ["y": ["$year": "$when"]], 1, "literal"])
            var specification = accumulators()
            specification["_id"] = key
            stages.append(["$group": .object(specification)])
        }
        let sortKeys = grouping ? ["_id", "objectId", "a0", "a1"] : ["n", "tag", "flag", "when", "owner", "tags", "_id", "createdAt", "meta"]
        if Int.random(in: 0..<2, using: &random) == 0 {
            var sort: [String: JSON] = [:]
            for _ in 0..<Int.random(in: 1...2, using: &random) { sort[pick(sortKeys)] = pick([1, -1]) }
            stages.append(["$sort": .object(sort)])
        }
        for _ in 0..<Int.random(in: 0...2, using: &random) { stages.append([pick(["$skip", "$limit"]): pick([0, 1, 3, 10, 1e300])]) }
        switch Int.random(in: 0..<6, using: &random) {
        case 0: stages.append(["$count": "total"])
        case 1: stages.append(["$project": [pick(["tag", "n", "a0", "objectId"]): 1]])
        case 2: stages.append(["$match": condition(0)])
        default: break
        }
        return stages
    }

    /// Hundreds of random pipelines and `distinct`s: the SQL answer is the in-memory one, to the order and to the bit.
    @Test func sqlAnswersAsMemoryOnRandomData() async throws {
        let server = try Self.server()
        let seed = UInt64(ProcessInfo.processInfo.environment["AGGREGATION_TEST_SEED"] ?? "") ?? 22
        var random = SeededRandom(seed: seed)
        let owners = try await server.createAll("Owner", [["name": "o1"], ["name": "o2"], ["name": "o3"]])
        // The first object fixes each field's type, as a schema does.
        let typed: JSON = ["n": 1, "tag": "a", "flag": true, "when": date("2020-01-01T00:00:00.000Z"), "owner": pointer("Owner", owners[0]),
                           "tags": ["a"], "scores": [1], "meta": ["group": "x"]]
        _ = try await server.createAll("Thing", [typed] + Self.randomObjects(300, owners: owners, using: &random))
        // The schema those objects make: to count what the plans gave to SQL.
        let schema = ClassSchema(id: 1, className: "Thing", fields: [
            "n": .number, "tag": .string, "flag": .boolean, "when": .date, "owner": .pointer(targetClass: "Owner"), "tags": .array,
            "scores": .array, "meta": .object,
        ], classLevelPermissions: nil, indexes: nil)
        var compared = 0, failed = 0, matchesInSQL = 0, groupsInSQL = 0, rowStagesInSQL = 0
        for _ in 0..<400 {
            let pipeline = Self.randomPipeline(owners: owners, using: &random)
            if let aggregation = try? Aggregation(pipeline: pipeline) {
                let plan = AggregationPlan(aggregation, where: .all, schema: schema)
                if plan.constraint != .all { matchesInSQL += 1 }
                switch plan.head {
                case .group: groupsInSQL += 1
                case .count: rowStagesInSQL += 1
                case .documents(let order, let skip, let limit): if !order.isEmpty || skip > 0 || limit != nil { rowStagesInSQL += 1 }
                }
            }
            let (sql, memory) = try await Self.both(server, "Thing", ["pipeline": .array(pipeline)])
            #expect(sql.status == memory.status && sql.json == memory.json,
                    "\(JSON.array(pipeline).jsonText)\nSQL: \(sql.text.prefix(600))\nmemory: \(memory.text.prefix(600))")
            #expect(sql.status != 500, "\(JSON.array(pipeline).jsonText): \(sql.text)")
            compared += 1
            if sql.status != 200 { failed += 1 }
        }
        for field in ["n", "tag", "flag", "when", "owner", "tags", "meta", "meta.group", "objectId", "createdAt", "missing", "_id"] {
            for constraint: JSON? in [nil, ["n": ["$gt": 1]], ["tag": "a"]] {
                var parameters: [String: JSON] = ["distinct": .string(field)]
                parameters["where"] = constraint
                let (sql, memory) = try await Self.both(server, "Thing", parameters)
                #expect(sql.status == 200 && sql.json == memory.json, "distinct \(field) \(constraint?.jsonText ?? ""): \(sql.text) vs \(memory.text)")
            }
        }
        // Most pipelines are valid, and SQL answers a good share of them: the comparison is about SQL's answers.
        #expect(failed < compared / 4, "\(failed) of \(compared) pipelines failed")
        #expect(matchesInSQL > 50 && groupsInSQL > 60 && rowStagesInSQL > 30, "\(matchesInSQL) \(groupsInSQL) \(rowStagesInSQL)")
        print("AggregationPushdownTests: \(compared) pipelines, \(failed) refused; in SQL: \(matchesInSQL) with $match, \(groupsInSQL) $group, \(rowStagesInSQL) $sort/$skip/$limit/$count")
    }

    /// The stages `AggregationPlan` gives to SQL, and where it stops.
    @Test func planTakesTheLeadingStagesSQLCanAnswer() throws {
        let schema = ClassSchema(id: 1, className: "Thing", fields: ["n": .number, "tag": .string, "tags": .array, "meta": .object],
                                 classLevelPermissions: nil, indexes: nil)
        func plan(_ pipeline: [JSON]) throws -> AggregationPlan {
            AggregationPlan(try Aggregation(pipeline: pipeline), where: .all, schema: schema)
        }
        let grouped = try plan([["$match": ["tag": "a"]], ["$group": ["_id": "$tag", "total": ["$sum": "$n"]]], ["$sort": ["total": -1]]])
        guard case .group(let group, let typed) = grouped.head else { Issue.record("\(grouped.head)"); return }
        #expect(group.columns.map(\.sql) == ["(data -> '$.tag')", "json_extract(data, '$.n')"])
        // On SQLite, top-level fields are scanned from `data`; a path into an object or a built-in field is read by SQL.
        #expect(group.scannedFields == ["tag", "n"] && typed == nil)
        for (key, sql) in [("$meta.group", "(data -> '$.meta.group')"), ("$createdAt", "createdAt")] {
            guard case .group(let byPath, _) = try plan([["$group": ["_id": .string(key), "total": ["$sum": "$n"]]]]).head else { continue }
            #expect(byPath.scannedFields == nil && byPath.columns.first?.sql == sql)
        }
        #expect(grouped.constraint != .all && grouped.rest.map(\.name) == ["$sort"])
        // On PostgreSQL: the same stages, read through jsonb paths; a `$sort` of rows stays in memory there.
        let onPostgres = AggregationPlan(try Aggregation(pipeline: [["$group": ["_id": "$tag", "total": ["$sum": "$n"]]]]), where: .all,
                                         schema: schema, dialect: .postgres)
        guard case .group(let postgresGroup, let postgresTyped) = onPostgres.head else { Issue.record("\(onPostgres.head)"); return }
        #expect(postgresGroup.columns.map(\.sql) == ["(data #> '{tag}')", "(data #> '{n}')"])
        #expect(postgresGroup.scannedFields == nil)
        // No typed columns (no declared index on the fields): streamed there too (`typedGroupAnswersAsStreamed`).
        #expect(postgresTyped == nil)
        let sorted = AggregationPlan(try Aggregation(pipeline: [["$sort": ["n": -1]], ["$limit": 10]]), where: .all, schema: schema, dialect: .postgres)
        #expect(sorted.rest.map(\.name) == ["$sort", "$limit"])

        let paged = try plan([["$match": ["n": ["$gte": 2]]], ["$sort": ["n": -1]], ["$skip": 5], ["$limit": 10], ["$count": "c"]])
        guard case .count(let field, let skip, let limit) = paged.head else { Issue.record("\(paged.head)"); return }
        #expect(field == "c" && skip == 5 && limit == 10 && paged.rest.isEmpty)

        // A $match on an Array with a comparison, $unwind, a sort on an Object field: left to memory from there on.
        let unwound = try plan([["$match": ["tags": ["$gt": "a"]]], ["$group": ["_id": "$tag"]]])
        #expect(unwound.constraint == .all && unwound.rest.map(\.name) == ["$match", "$group"], "\(unwound.constraint) \(unwound.head) \(unwound.rest)")
        #expect(try plan([["$unwind": "$tags"], ["$group": ["_id": "$tags"]]]).rest.count == 2)
        #expect(try plan([["$sort": ["meta": 1]], ["$limit": 1]]).rest.map(\.name) == ["$sort", "$limit"])
    }

    /// The scan of a row's `data` finds each field's value where `JSONParser` finds it, or gives the text up.
    @Test func topLevelFieldsAsTheParserFindsThem() throws {
        let names = ["a", "b", "c"]
        let scan = TopLevelFields(names)
        let followed = [
            #"{"a":1,"b":"x}","c":{"d":[1,{"e":"]"}],"f":"\"{"}}"#, #" { "a" : 1 , "b" : [ ] , "c":"q\"u\\" } "#, #"{"a":"x","a":2}"#,
            #"{}"#, #"{"a":true,"c":null}"#, #"{"ab":1,"b":-1.5e3,"a":[]}"#, #"{"b":"é\u0001","zz":{"a":3}}"#, "{\"a\":\n1}",
        ]
        for text in followed {
            var ranges = [Range<Int>?](repeating: 0..<1, count: names.count)
            let object = try JSONParser.parse(text).objectValue ?? [:]
            try Array(text.utf8).withUnsafeBufferPointer { bytes in
                #expect(scan.ranges(in: bytes, into: &ranges), "\(text)")
                for (position, name) in names.enumerated() {
                    let value = try ranges[position].map { try JSONParser.parse(UnsafeBufferPointer(rebasing: bytes[$0])) }
                    #expect(value == object[name], "\(text): \(name)")
                }
            }
        }
        // An escaped key, not an object, cut short: the caller parses these whole (or finds them corrupt).
        for text in [#"{"\u0061":1}"#, "[1]", #"{"a":1"#, #"{"a":"x}"#, #""x""#, "", #"{"a":1}x"#, #"{"a":}"#, #"{"a" 1}"#] {
            var ranges = [Range<Int>?](repeating: nil, count: names.count)
            let scanned = Array(text.utf8).withUnsafeBufferPointer { scan.ranges(in: $0, into: &ranges) }
            #expect(!scanned, "\(text)")
        }
    }

    /// Pipelines SQL cannot take answer through the in-memory stages, as before.
    /// On PostgreSQL, a `$group` over fields with typed columns (declared indexes) is PostgreSQL's `GROUP BY`
    /// (`TypedGroup`), and answers as the in-memory path does to the bit and to the order, including where it gives
    /// the group back to streaming: a fraction, a sum past 2^53, keys SQL spells apart ("é" in two normalizations,
    /// "" and null; their bytes compared, so the first-seen spelling is the one kept); and `distinct` of such a field.
    /// On SQLite the same requests compare the streamed path.
    @Test func typedGroupAnswersAsStreamed() async throws {
        let server = try Self.server()
        let tags: [JSON] = ["a", "b", "", .null, "\u{e9}", "e\u{301}", "x y"]
        var objects: [JSON] = []
        for index in 0..<120 {
            var object: [String: JSON] = ["tag": tags[index % tags.count], "k": .number(Double(index % 4))]
            if index % 5 != 0 { object["n"] = .number(Double(index * 37 % 101 - 50)) }
            objects.append(.object(object))
        }
        _ = try await server.createAll("Typed", objects)
        let declared = try await server.request("PUT", "/schemas/Typed", json: ["indexes": ["by_n": ["n": 1], "by_tag": ["tag": 1], "by_k": ["k": 1]]],
                                                master: true)
        #expect(declared.status == 200, "\(declared.text)")
        let schema = ClassSchema(id: 1, className: "Typed", fields: ["n": .number, "tag": .string, "k": .number],
                                 classLevelPermissions: nil, indexes: nil, typedColumns: ["n", "tag", "k"])
        // On PostgreSQL: whether PostgreSQL's GROUP BY answered (`run` gives nil where it cannot be exact).
        let db = try server.postgres?.connect()
        func groupedInSQL(_ group: JSON) throws -> Bool? {
            guard let db, let stored = try SchemaStore.load("Typed", in: db) else { return nil }
            #expect(stored.typedColumns == ["n", "tag", "k"])
            // A column found inexact is not summed in SQL again (in this process too).
            guard let typed = TypedGroup(group, schema: stored, dialect: .postgres) else { return false }
            let filter = try ObjectStore.condition(FindQuery(), in: stored, in: db)
            return try typed.run(filter: filter, in: db) != nil
        }
        // With whether an accumulator reads n (the field given fractions and large numbers below).
        let groups: [(JSON, readsN: Bool)] = [
            (["_id": "$tag", "total": ["$sum": "$n"], "mean": ["$avg": "$n"], "rows": ["$count": [:]], "twice": ["$sum": 2]], true),
            (["_id": "$k", "total": ["$sum": "$n"], "rows": ["$sum": 1]], true),
            (["_id": .null, "total": ["$sum": "$n"], "mean": ["$avg": "$k"]], true),
            (["_id": "$n", "rows": ["$sum": 1]], false),
            (["_id": "fixed", "total": ["$sum": "$k"]], false),
        ]
        func compare(_ note: String, inSQL: Bool) async throws {
            for (group, readsN) in groups {
                // A sum of fractions or past 2^53 gives the group back to streaming; sums of integers of k do not.
                if let answered = try groupedInSQL(group) { #expect(answered == (inSQL || !readsN), "\(note) \(group.jsonText)") }
                let plan = AggregationPlan(try Aggregation(pipeline: [["$group": group]]), where: .all, schema: schema, dialect: .postgres)
                guard case .group(_, let typed) = plan.head else { Issue.record("\(plan.head)"); continue }
                #expect(typed != nil, "\(group.jsonText)")
                for pipeline: [JSON] in [[["$group": group]], [["$match": ["k": ["$gte": 1]]], ["$group": group], ["$sort": ["objectId": 1]]]] {
                    let (sql, memory) = try await Self.both(server, "Typed", ["pipeline": .array(pipeline)])
                    #expect(sql.status == 200 && sql.text == memory.text, "\(note) \(JSON.array(pipeline).jsonText)\nSQL: \(sql.text)\nmemory: \(memory.text)")
                }
            }
        }
        // `distinct` of a typed column: PostgreSQL's GROUP BY too, each value once, in the order of its first object.
        for field in ["n", "tag", "k"] {
            for constraint: JSON? in [nil, ["k": ["$gte": 2]]] {
                var parameters: [String: JSON] = ["distinct": .string(field)]
                parameters["where"] = constraint
                let (sql, memory) = try await Self.both(server, "Typed", parameters)
                #expect(sql.status == 200 && sql.text == memory.text, "distinct \(field): \(sql.text) vs \(memory.text)")
            }
        }
        try await compare("integers", inSQL: true)
        let fractions = try await server.createAll("Typed", [["tag": "a", "n": 0.1, "k": 1], ["tag": "a", "n": 0.2, "k": 1]])
        try await compare("fractions", inSQL: false)
        for id in fractions { _ = try await server.request("DELETE", "/classes/Typed/\(id)", master: true) }
        _ = try await server.createAll("Typed", [["tag": "b", "n": 4_503_599_627_370_497, "k": 2], ["tag": "b", "n": 4_503_599_627_370_497, "k": 2],
                                                 ["tag": "b", "n": 3, "k": 2]])
        try await compare("past 2^53", inSQL: false)
        // What a key or an accumulator TypedGroup does not take leaves the stage to streaming.
        for group: JSON in [["_id": "$tag", "top": ["$max": "$n"]], ["_id": "$tag", "total": ["$sum": 0.5]], ["_id": ["t": "$tag"]]] {
            let plan = AggregationPlan(try Aggregation(pipeline: [["$group": group]]), where: .all, schema: schema, dialect: .postgres)
            guard case .group(_, let typed) = plan.head else { Issue.record("\(plan.head)"); continue }
            #expect(typed == nil, "\(group.jsonText)")
        }
    }

    @Test func pipelinesSQLCannotExpressStillAnswer() async throws {
        let server = try Self.server()
        _ = try await server.createAll("Bag", [["tags": ["a", "b"], "n": 1], ["tags": ["b"], "n": 2], ["tags": [], "n": 3], ["n": 4]])
        let unwound = try await Self.both(server, "Bag", ["pipeline": [["$unwind": "$tags"], ["$group": ["_id": "$tags", "n": ["$sum": "$n"]]],
                                                                       ["$sort": ["_id": 1]]]])
        #expect(unwound.0.json == ["results": [["objectId": "a", "n": 1], ["objectId": "b", "n": 3]]], "\(unwound.0.text)")
        #expect(unwound.0.json == unwound.1.json)
        let arrays = try await Self.both(server, "Bag", ["pipeline": [["$match": ["tags": ["$exists": true]]], ["$project": ["_id": 0, "n": 1]],
                                                                      ["$group": ["_id": nil, "total": ["$sum": "$n"]]]]])
        #expect(arrays.0.json == ["results": [["objectId": nil, "total": 6]]], "\(arrays.0.text)")
        #expect(arrays.0.json == arrays.1.json)
        // Larger than a `where` may be: matched in memory, not refused by SQLite.
        let branches = JSON.array((0..<600).map { ["n": .number(Double($0))] })
        let wide = try await Self.both(server, "Bag", ["pipeline": [["$match": ["$or": branches]], ["$group": ["_id": nil, "c": ["$sum": 1]]]]])
        #expect(wide.0.json == ["results": [["objectId": nil, "c": 4]]], "\(wide.0.text)")
        #expect(wide.0.json == wide.1.json)
        // More fields than a group reads in SQL (and more than SQLite's 2,000 columns): in memory.
        var many: [String: JSON] = ["_id": nil]
        for index in 0..<2_100 { many["s\(index)"] = ["$sum": .string("$f\(index)")] }
        // (Too long for a URL: sent as a POST with `_method`, as Parse's JavaScript SDK sends long queries.)
        var answers: [TestResponse] = []
        for inMemory in [false, true] {
            var body: [String: JSON] = ["_method": "GET", "pipeline": [["$group": .object(many)]]]
            if inMemory { body[AggregateRoutes.inMemoryParameter] = true }
            answers.append(try await server.request("POST", "/aggregate/Bag", json: .object(body), master: true))
        }
        #expect(answers[0].status == 200 && answers[0].json == answers[1].json, "\(answers[0].status) \(answers[0].text.prefix(300))")
        #expect(answers[0].json["results"]?.arrayValue?.first?["s0"] == 0)
    }

    /// Bad pipelines get Parse's 102 on both paths, whatever the data; never a 500.
    @Test func badPipelinesGetParseErrors() async throws {
        let server = try Self.server()
        _ = try await server.createAll("Bad", [["n": 1, "tag": "a"], ["n": 2, "tag": "b"]])
        let pipelines: [JSON] = [
            [["$group": ["total": ["$sum": 1]]]], [["$group": ["_id": "$tag", "x": ["$median": "$n"]]]], [["$group": ["_id": "$tag", "x": 1]]],
            [["$sort": ["n": 2]]], [["$sort": [:]]], [["$limit": -1]], [["$skip": 1.5]], [["$count": ""]], [["$count": 1]], [["$lookup": [:]]],
            [["$match": ["n": ["$regex": "1"]]]], [["$match": "n"]], [["$match": ["$or": ["n"]]]], [["$match": ["$or": "n"]]],
            [["$match": ["n": 1], "$limit": 1]], [["$project": [:]]], [["$unwind": "tags"]], [["group": ["_id": nil]]],
            [["$match": ["n": ["$gt": 0]]], ["$group": ["_id": "$tag", "x": ["$median": "$n"]]]],
            [["$match": ["n": ["$gt": 0]]], ["$sort": ["n": 1]], ["$limit": 1], ["$count": ""]],
        ]
        for pipeline in pipelines {
            let (sql, memory) = try await Self.both(server, "Bad", ["pipeline": pipeline])
            expectError(sql, 102)
            #expect(sql.json == memory.json, "\(pipeline.jsonText): \(sql.text) vs \(memory.text)")
        }
        expectError(try await server.request("GET", "/aggregate/Bad", master: true, query: ["pipeline": "3"]), 102)
        expectError(try await server.request("GET", "/aggregate/Bad", master: true, query: ["distinct": "{}"]), 102)
        #expect(try await server.request("GET", "/aggregate/Bad", query: ["distinct": "n"]).status == 403)
    }
}

/// SplitMix64: the same data and pipelines on every run.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
