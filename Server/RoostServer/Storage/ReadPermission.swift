import RoostCore

/// The read-permission test in a shape SQLite's indexes can answer.
///
/// A class table's `rperm` is NULL for every row anyone may read (no ACL, or one that grants `*` read,
/// which is most objects) and the JSON array of its readers otherwise. So a caller's test is
/// `rperm IS NULL OR instr(rperm, …)`, and:
/// - every declared or pointer index ends with `rperm`: an ordered walk (`order=n&skip=100000`) tests
///   the ACL from the index entry and reads the table row only for the rows it returns; before, each
///   skipped row cost a table seek to read its `rperm` (150–170 ms at skip 100,000 vs 4 ms for the master key);
/// - a partial index holds the restricted rows alone, so a count is "all rows" (`RowCount`, or the
///   query's own index) minus the restricted rows the caller may not read.
enum ReadPermission {
    /// `rperm` for an object with this ACL: NULL when anyone may read it.
    static func readers(of acl: JSON?) -> SQLValue {
        guard let acl else { return .null }
        let subjects = ACL.subjects(of: acl, granting: "read")
        if subjects.contains("*") { return .null }
        return .text(JSON.array(subjects.map { .string($0) }).jsonText)
    }

    /// The partial index of a class table's restricted rows (see `count`).
    static func restrictedIndexSQL(table: String, tableID: Int64) -> String {
        "CREATE INDEX IF NOT EXISTS \"c\(tableID)_restricted\" ON \(table) (rperm) WHERE rperm IS NOT NULL"
    }

    /// The column every class index ends with, so the ACL test reads the index rather than the row.
    static let indexSuffix = ", rperm"

    /// How many rows match `filter` that a caller holding `subjects` (nil: master key) may read.
    static func count(_ schema: ClassSchema, where filter: SQLFragment, readableBy subjects: [String]?,
                      in db: some SQLQuerying) throws -> Int {
        let table = schema.tableName
        // No `WHERE 1` (`TRUE` on PostgreSQL): the whole class is counted by `RowCount` (a `WHERE` would read every row).
        let everything = filter.sql == "1" || filter.sql == "TRUE"
        let matching = everything ? "" : " WHERE (\(filter.sql))"
        var sql = matching.isEmpty ? RowCount.totalSQL(of: schema, dialect: db.dialect) : "SELECT COUNT(*) FROM \(table)\(matching)"
        var arguments = filter.arguments
        if let subjects {
            // The restricted rows that name none of the caller's subjects (`*` is never named: see `readers`).
            let named = subjects.filter { $0 != "*" }
            let tests = named.isEmpty ? "" : " AND NOT (" + Array(repeating: "instr(rperm, ?) > 0", count: named.count).joined(separator: " OR ") + ")"
            let hidden = (everything ? " WHERE " : " AND ") + "rperm IS NOT NULL" + tests
            sql = "SELECT (\(sql)) - (SELECT COUNT(*) FROM \(table)\(matching)\(hidden))"
            arguments += filter.arguments + named.map { .text(JSON.string($0).jsonText) }
        }
        let rows = try db.fetchRows(sql, arguments, cacheable: true)
        return Int(rows.first?.first?.integer ?? 0)
    }

    /// Brings a class table from before these shapes up to date: public rows lose their reader list,
    /// the restricted-rows index appears, and indexes made by `IndexStore` are rebuilt ending with `rperm`.
    /// The first step rewrites the rows whose ACL grants public read; the rebuilds cost what declaring them did.
    static func migrate(table: String, tableID: Int64, execute: (String) throws -> Void,
                        indexes: () throws -> [(name: String, sql: String)]) throws {
        try execute("UPDATE \(table) SET rperm = NULL WHERE rperm IS NOT NULL AND instr(rperm, '\"*\"')")
        try execute(restrictedIndexSQL(table: table, tableID: tableID))
        for index in try indexes() {
            let made = index.name.hasPrefix("c\(tableID)_i_") || index.name.hasPrefix("c\(tableID)_p_")
            guard made, !index.sql.contains("rperm"), index.sql.hasSuffix(")") else { continue }
            try execute("DROP INDEX \"\(index.name)\"")
            try execute(String(index.sql.dropLast()) + indexSuffix + ")")
        }
    }
}
