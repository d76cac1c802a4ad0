import RoostCore

/// Stored generated columns holding a Number or String field's typed value, behind the field's declared indexes on
/// PostgreSQL, so that counts and deep pages read the index alone.
///
/// Why: PostgreSQL never answers a query from an expression index alone (its planner wants every column the query
/// names, here `data`, in the index), so `count=1` on an indexed equality visits the table for every match and a
/// `skip` walks the table for every skipped row. Over 1,000,000 objects (`roost-query-bench --database-url`) a
/// `count=1` matching 10 % took 124 ms and read every page of the table; on a generated column the same count is an
/// index-only scan. The cost: adding the column rewrites the table under an exclusive lock (reads of the class wait
/// too, where `CREATE INDEX` alone holds back writes only), once per field, when its first index is declared.
///
/// Only declared indexes get one (`IndexStore.apply`): automatic indexes are made in the background while clients
/// read, and a rewrite would stop them. The compiler compares and sorts on a field's column wherever it would use the
/// expression (`PostgresQueryCompiler.typedValue`) once the class's schema lists it (`ClassSchema.typedColumns`, recorded
/// in `_schema` with the rest of it); a database from before keeps its expression indexes and answers as it did.
enum PostgresTypedColumns {
    /// The column of `field`'s typed value; nil for a field whose name would not fit PostgreSQL's 63-byte identifiers.
    static func column(_ field: String) -> String? {
        field.utf8.count <= 57 ? "\"typed_\(field)\"" : nil
    }

    /// The column's type and expression for a field of this type: the expression its index would otherwise be on.
    private static func definition(_ field: String, _ type: FieldType?) -> String? {
        switch type {
        case .number?: "float8 GENERATED ALWAYS AS ((data ->> '\(field)')::float8) STORED"
        case .string?: "text COLLATE \"C\" GENERATED ALWAYS AS (data ->> '\(field)') STORED"
        default: nil
        }
    }

    /// Adds `field`'s column unless it has one, and notes it in `schema`; returns the column, or nil when the field
    /// gets none (another type, a long name, a class read through a view).
    static func add(_ field: String, to schema: inout ClassSchema, in db: any SQLConnection) throws -> String? {
        guard schema.view == nil, let column = column(field), let definition = definition(field, schema.fields[field]) else { return nil }
        if !schema.typedColumns.contains(field) {
            // IF NOT EXISTS: another node may have added it since this transaction's schema was read.
            try db.execute("ALTER TABLE \(schema.tableName) ADD COLUMN IF NOT EXISTS \(column) \(definition)", cacheable: false)
            schema.typedColumns.insert(field)
        }
        return column
    }

    /// `_schema.typedColumns`: the fields with a column, recorded with the schema in the transaction that adds or drops
    /// one (never read from the catalog: a schema row read from a cache or an older snapshot then names exactly the
    /// columns its class had with it).
    static let schemaSQL = "ALTER TABLE _schema ADD COLUMN typedColumns text"

    /// The recorded form of `fields` (NULL for none; SQLite always has none).
    static func recorded(_ fields: Set<String>) -> SQLValue {
        fields.isEmpty ? .null : .text(fields.sorted().joined(separator: ","))
    }

    /// The fields in a recorded `_schema.typedColumns`.
    static func fields(recorded text: String?) -> Set<String> {
        Set((text ?? "").split(separator: ",").map(String.init))
    }
}
