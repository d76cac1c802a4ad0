/// A declared text index on PostgreSQL: a GIN index over the words `PostgresQueryCompiler` narrows `$text` with
/// (`textIndexExpression`), kept in step with writes by PostgreSQL itself (SQLite's is an FTS5 table, `TextIndex`).
enum PostgresTextIndex {
    static func createSQL(_ field: String, of schema: ClassSchema) -> String {
        "CREATE INDEX IF NOT EXISTS \(name(field, of: schema)) ON \(schema.tableName) USING GIN ((\(PostgresQueryCompiler.textIndexExpression(field))))"
    }

    static func dropSQL(_ field: String, of schema: ClassSchema) -> String {
        "DROP INDEX IF EXISTS \(name(field, of: schema))"
    }

    /// `field` is a validated field name (letters, digits, `_`).
    private static func name(_ field: String, of schema: ClassSchema) -> String { "\"c\(schema.id)_text_\(field)\"" }
}
