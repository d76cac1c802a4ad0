import RoostCore

/// How `GET /aggregate` answers a pipeline: its leading stages in SQL over the class table, the rest in memory
/// (`Aggregation`) over what SQL produced.
///
/// SQL takes, in this order: the `$match` stages at the start that `AggregationMatch` translates (one `WHERE` with
/// `where`, compiled by `QueryCompiler` with the finds' read-permission test); then either a `$group` that
/// `StreamedGroup` reads (or, on PostgreSQL, `TypedGroup` computes), or a `$sort` on fields of a sortable type, any
/// `$skip` and `$limit` stages and a `$count`. The first stage it cannot take and every one after it run in memory.
/// Rows are read in rowid order (creation order), which is the order the in-memory stages saw before, so ties, group
/// order and `$first` agree.
struct AggregationPlan {
    private(set) var constraint: QueryConstraint
    private(set) var head: Head
    /// The stages left to memory.
    private(set) var rest: ArraySlice<(name: String, argument: JSON)>

    enum Head {
        /// The matching objects (in `order`, then rowid), `skip` and `limit` applied.
        case documents(order: [(sql: String, descending: Bool)], skip: Int, limit: Int?)
        /// `$count` of those objects.
        case count(field: String, skip: Int, limit: Int?)
        /// Streamed, unless `typed` (PostgreSQL's `GROUP BY`, when it can be exact) answers.
        case group(StreamedGroup, typed: TypedGroup?)
    }

    /// - Parameter inMemory: SQL only reads the objects `constraint` matches (the path before, kept for tests).
    /// - Parameter dialect: the database's, which the plan's SQL is written for.
    init(_ aggregation: Aggregation, where constraint: QueryConstraint, schema: ClassSchema, dialect: SQLDialect = .sqlite,
         inMemory: Bool = false) {
        var stages = aggregation.stages[...]
        var parts = [constraint]
        head = .documents(order: [], skip: 0, limit: nil)
        // A view (`_Session`) has no rowid to keep the order by: it takes the path before.
        if !inMemory && schema.view == nil {
            // Within the size a `where` may have (SQLite refuses much deeper expressions); a larger `$match` runs in memory.
            var complexity = constraint.complexity
            while let stage = stages.first, stage.name == "$match", let match = AggregationMatch.constraint(stage.argument, schema: schema),
                complexity + match.complexity <= QueryConstraint.maximumComplexity {
                complexity += match.complexity
                parts.append(match)
                stages.removeFirst()
            }
            if let stage = stages.first, stage.name == "$group", let group = StreamedGroup(stage.argument, schema: schema, dialect: dialect) {
                head = .group(group, typed: TypedGroup(stage.argument, schema: schema, dialect: dialect))
                stages.removeFirst()
            } else {
                head = Self.rowStages(&stages, schema: schema, dialect: dialect)
            }
        }
        self.constraint = parts.count == 1 ? constraint : .and(parts)
        rest = stages
    }

    /// Takes `$sort`, `$skip`, `$limit` and `$count` from the front of `stages` while SQL can answer them.
    private static func rowStages(_ stages: inout ArraySlice<(name: String, argument: JSON)>, schema: ClassSchema,
                                  dialect: SQLDialect) -> Head {
        var order: [(sql: String, descending: Bool)] = []
        // The sort terms are SQLite's order (NULLs first, json_extract's types); on PostgreSQL a `$sort` runs in memory.
        if let stage = stages.first, stage.name == "$sort", dialect == .sqlite, let terms = sortTerms(stage.argument, schema: schema) {
            order = terms
            stages.removeFirst()
        }
        var skip = 0, limit: Int?
        while let stage = stages.first, ["$skip", "$limit"].contains(stage.name), let count = try? Aggregation.count(stage.argument, stage.name) {
            if stage.name == "$skip" {
                let (sum, overflow) = skip.addingReportingOverflow(count)
                skip = overflow ? Int.max : sum
                limit = limit.map { max(0, $0 - count) }
            } else {
                limit = min(limit ?? count, count)
            }
            stages.removeFirst()
        }
        if let stage = stages.first, stage.name == "$count", let field = stage.argument.stringValue, !field.isEmpty {
            stages.removeFirst()
            return .count(field: field, skip: skip, limit: limit)
        }
        return .documents(order: order, skip: skip, limit: limit)
    }

    /// `ORDER BY` terms sorting as `Aggregation` does (keys by name; MongoDB's order, which within one type is
    /// SQLite's), or nil when a key's values are not all of one type SQL orders the same way.
    private static func sortTerms(_ specification: JSON, schema: ClassSchema) -> [(sql: String, descending: Bool)]? {
        // As for a group's columns: SQLite allows 2,000 terms; a sort on more keys runs in memory.
        guard case .object(let fields) = specification, !fields.isEmpty, fields.count <= StreamedGroup.maximumColumns else { return nil }
        var terms: [(sql: String, descending: Bool)] = []
        for (key, direction) in fields.sorted(by: { $0.key < $1.key }) {
            guard let number = direction.numberValue, number == 1 || number == -1 else { return nil }
            let name = ["_id": "objectId", "_created_at": "createdAt", "_updated_at": "updatedAt"][key] ?? key
            let sql: String
            switch name {
            // createdAt's wire form is an ISO text, which sorts as its instant.
            case "objectId", "createdAt", "updatedAt": sql = name
            default:
                guard Names.isValidIdentifier(name) else { return nil }
                switch schema.fields[name] {
                case .number?, .boolean?, .string?: sql = "json_extract(data, '$.\(name)')"
                case .date?: sql = "json_extract(data, '$.\(name).iso')"
                default: return nil
                }
            }
            terms.append((sql, number < 0))
        }
        return terms
    }

    /// Runs the plan; `query` carries the caller's read permission (its constraint is replaced by the plan's).
    func run(_ query: FindQuery, in schema: ClassSchema, in db: some SQLQuerying) throws -> [Aggregation.Document] {
        var query = query
        query.constraint = constraint
        let documents: [Aggregation.Document]
        switch head {
        case .group(let group, let typed):
            let filter = try ObjectStore.condition(query, in: schema, in: db)
            if let typed, let grouped = try typed.run(filter: filter, in: db) {
                documents = grouped
            } else if group.scannedFields != nil, let sqlite = db as? SQLiteConnection {
                let sql = "SELECT data FROM \(schema.tableName) WHERE \(filter.sql)\(Self.rowOrder(schema))"
                documents = try group.run(scanning: { body in try sqlite.forEachText(sql, filter.arguments, body) }, className: schema.className)
            } else {
                let columns = group.columns.isEmpty ? "1" : group.columns.map(\.sql).joined(separator: ", ")
                let sql = "SELECT \(columns) FROM \(schema.tableName) WHERE \(filter.sql)\(Self.rowOrder(schema))"
                documents = try group.run { body in try db.forEachRow(sql, filter.arguments, cacheable: false, body) }
            }
        case .count(let field, let skip, let limit):
            // Which rows a skip or limit keeps does not change how many there are.
            let matching = try ObjectStore.count(query, in: schema, in: db)
            let counted = min(max(0, matching - skip), limit ?? Int.max)
            documents = counted == 0 ? [] : [[field: .number(Double(counted))]]
        case .documents(let order, let skip, let limit):
            let filter = try ObjectStore.condition(query, in: schema, in: db)
            var sql = "SELECT objectId, createdAt, updatedAt, acl, data FROM \(schema.tableName) WHERE \(filter.sql)"
            if order.isEmpty {
                sql += Self.rowOrder(schema)
            } else {
                sql += " ORDER BY " + order.map { $0.sql + ($0.descending ? " DESC" : " ASC") }.joined(separator: ", ") + ", rowid"
            }
            sql += " LIMIT ? OFFSET ?"
            // Decoded once SQLite is done: the query time limit counts the reading, as before.
            let rows = try db.fetchRows(sql, filter.arguments + [.integer(Int64(limit ?? Int(Int64.max))), .integer(Int64(skip))], cacheable: false)
            documents = try rows.map { try StoredRow($0, className: schema.className).decoded().wireJSON(excluding: []).objectValue ?? [:] }
        }
        return try Aggregation(checked: rest).run(documents)
    }

    /// The distinct values at `path` of the objects `query` matches, as `Aggregation.distinct` finds them, read
    /// one value per row.
    static func distinct(_ path: String, _ query: FindQuery, in schema: ClassSchema, in db: some SQLQuerying,
                         inMemory: Bool = false) throws -> [JSON] {
        guard !inMemory, schema.view == nil, let column = AggregationColumn(path: path, schema: schema, dialect: db.dialect) else {
            let everything = AggregationPlan(Aggregation(checked: []), where: query.constraint, schema: schema, dialect: db.dialect, inMemory: true)
            return Aggregation.distinct(path, in: try everything.run(query, in: schema, in: db))
        }
        let filter = try ObjectStore.condition(query, in: schema, in: db)
        var seen: Set<JSON> = [], values: [JSON] = []
        func add(_ value: JSON) {
            for element in value.arrayValue ?? [value] where element != .null && seen.insert(element).inserted {
                values.append(element)
            }
        }
        if let field = column.topLevelField, let sqlite = db as? SQLiteConnection {
            // As `StreamedGroup` on SQLite: the field found in each row's text (`TopLevelFields`), and a value text
            // seen before never parsed again. Over 1,000,000 objects (`roost-query-bench`, 10 distinct values):
            // 943 ms with `json_extract`.
            let scan = TopLevelFields([field])
            var ranges: [Range<Int>?] = [nil]
            var seenTexts = KeyTexts()
            let sql = "SELECT data FROM \(schema.tableName) WHERE \(filter.sql) ORDER BY rowid"
            try sqlite.forEachText(sql, filter.arguments) { text in
                guard scan.ranges(in: text, into: &ranges) else {
                    guard case .object(let object) = try? JSONParser.parse(text) else {
                        throw StorageError.corruptRow(className: schema.className, objectId: "?")
                    }
                    return add(object[field] ?? .null)
                }
                guard let range = ranges[0] else { return }
                let valueText = UnsafeBufferPointer(rebasing: text[range])
                guard seenTexts.group(valueText) == nil else { return }
                guard let value = try? JSONParser.parse(valueText) else {
                    throw StorageError.corruptRow(className: schema.className, objectId: "?")
                }
                add(value)
                seenTexts.insert(valueText, group: 0, groups: values.count)
            }
            return values
        }
        if db.dialect == .postgres, let field = column.topLevelField, let typed = TypedGroup.typedColumn(field, of: schema) {
            // PostgreSQL groups its typed column (`TypedGroup`'s reason: 672 ms streamed over 1,000,000 objects, ~100 ms
            // so); each value comes once, in the order of its first row, and `add` merges what SQL spelt apart.
            let sql = "SELECT \(typed) FROM \(schema.tableName) WHERE (\(filter.sql)) AND \(typed) IS NOT NULL"
                + " GROUP BY \(typed) ORDER BY min(rowid)"
            try db.forEachRow(sql, filter.arguments, cacheable: false) { row in
                switch row[0] {
                case .text(let text): add(.string(text))
                case .real(let number): add(.number(number))
                default: add(column.value(row[0]))
                }
            }
            return values
        }
        let sql = "SELECT \(column.sql) FROM \(schema.tableName) WHERE \(filter.sql) ORDER BY rowid"
        try db.forEachRow(sql, filter.arguments, cacheable: false) { row in add(column.value(row[0])) }
        return values
    }

    private static func rowOrder(_ schema: ClassSchema) -> String { schema.view == nil ? " ORDER BY rowid" : "" }
}
