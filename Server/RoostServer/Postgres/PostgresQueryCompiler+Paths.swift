import RoostCore

/// Dot paths through Arrays of Objects, as `PathValues` (SQLite's `roost_path_values`) walks them, in plain SQL.
extension PostgresQueryCompiler {
    /// The values a dot path reaches, as a `FROM` item `element(value)` of jsonb: each part reads a member of an
    /// Object, or of each Object in an Array (nested Arrays are not entered), a numeric part also indexes an Array; an
    /// Array where the path ends counts as itself and as each of its elements. (`PathValues` stops a hostile walk after
    /// 10,000 nodes; here each step is one lateral join, bounded by the document.)
    func pathValues(_ key: String) -> String {
        let parts = key.split(separator: ".").map(String.init)
        // Parts are letters, digits and `_` (`QueryConstraint.parse`): nothing to escape.
        var sql = "(SELECT data -> '\(parts[0])' AS v) AS step0"
        for (index, part) in parts.enumerated().dropFirst() {
            let previous = "step\(index - 1).v"
            var branches = [
                "SELECT \(previous) -> '\(part)' WHERE jsonb_typeof(\(previous)) = 'object'",
                """
                SELECT inner_element.value -> '\(part)' FROM jsonb_array_elements(CASE WHEN jsonb_typeof(\(previous)) = 'array' \
                THEN \(previous) END) AS inner_element(value) WHERE jsonb_typeof(inner_element.value) = 'object'
                """,
            ]
            if part.utf8.count <= 9, part.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let position = Int(part) {
                branches.append("SELECT \(previous) -> \(position) WHERE jsonb_typeof(\(previous)) = 'array'")
            }
            sql += " CROSS JOIN LATERAL (\(branches.joined(separator: " UNION ALL "))) AS step\(index)(v)"
        }
        let last = "step\(parts.count - 1).v"
        return """
            (SELECT \(last) FROM \(sql) WHERE \(last) IS NOT NULL \
            UNION ALL SELECT ended.value FROM \(sql) CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(\(last)) = 'array' \
            THEN \(last) END) AS ended(value)) AS element(value)
            """
    }

    /// A dot path reaches something: directly, or through Arrays of Objects on the way.
    func dotPathExists(_ key: String) -> PostgresFragment {
        PostgresFragment(sql: "\(json(key)) IS NOT NULL OR EXISTS (SELECT 1 FROM \(pathValues(key)))")
    }
}
