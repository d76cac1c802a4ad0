import RoostCore

/// `explain=true` on a find: SQLite's `EXPLAIN QUERY PLAN` of the query's SQL instead of its results, as Parse
/// Server answers its database's explain document. A plan tells how data is stored and indexed, so, as Parse
/// Server does by default (`databaseOptions.allowPublicExplain` false), only the master key may ask.
enum QueryExplanation {
    /// - Throws: `ParseError` 102 without the master key, with Parse Server's message.
    static func checkAllowed(context: RequestContext) throws {
        guard context.isMaster, !context.isMaintenance else {
            throw ParseError(.invalidQuery, "Using the explain query parameter requires the master key")
        }
    }

    /// `{"results": [{"id", "parent", "detail"}, ...]}`: one entry per plan step, in SQLite's order.
    /// On PostgreSQL, Parse Server's answer there: `{"results": [{"QUERY PLAN": <EXPLAIN (FORMAT JSON)>}]}`.
    static func answer(_ query: FindQuery, in schema: ClassSchema, db: some SQLQuerying) throws -> APIResponse {
        let (sql, arguments) = try ObjectStore.selectSQL(query, in: schema, in: db)
        if db.dialect == .postgres {
            let plans = try db.fetchRows("EXPLAIN (FORMAT JSON) " + sql, arguments, cacheable: false).map { row -> JSON in
                ["QUERY PLAN": (try? JSONParser.parse(row.first?.text ?? "")) ?? .null]
            }
            return APIResponse(body: ["results": .array(plans)])
        }
        // A read connection whose schema came from the shared cache may not have run a statement since an index was
        // made: SQLite notices a changed schema when a statement runs, and an EXPLAIN runs none, so it would show the
        // plan without that index (the query itself is prepared again and uses it). One read first brings it up to date.
        _ = try db.fetchRows("SELECT 1 FROM sqlite_master LIMIT 1", [], cacheable: true)
        let rows = try db.fetchRows("EXPLAIN QUERY PLAN " + sql, arguments, cacheable: false)
        let steps: [JSON] = rows.map { row in
            ["id": .number(Double(row[0].integer ?? 0)), "parent": .number(Double(row[1].integer ?? 0)),
             "detail": .string(row.count > 3 ? row[3].text ?? "" : "")]
        }
        return APIResponse(body: ["results": .array(steps)])
    }
}
