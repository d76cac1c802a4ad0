import RoostCore

/// Automatic indexes as stored: an index `c<id>_a_<field>` on the field's expression and `rperm`, listed in
/// the class's `indexes` as `_auto_<field>_1: {<field>: 1}` (a name no client can declare: Parse's index names start
/// with a letter, and its own start with `_`, as `_id_`), so `GET /schemas` shows which indexes are automatic.
extension IndexStore {
    static let automaticPrefix = "_auto_"

    static func automaticName(_ field: String) -> String { "\(automaticPrefix)\(field)_1" }

    private static func automaticSQLName(_ field: String, in schema: ClassSchema) -> String {
        "\"c\(schema.id)_a_\(field)\""
    }

    /// The fields of the class's automatic indexes.
    static func automaticFields(of schema: ClassSchema) -> [String] {
        (schema.indexes?.objectValue ?? [:]).compactMap { name, definition in
            name.hasPrefix(automaticPrefix) ? definition.objectValue?.keys.first : nil
        }
    }

    /// Whether an index already leads with `field`: a declared one (its fields are in name order, see `apply`),
    /// an automatic one, or a Pointer's.
    static func leadsAnIndex(_ field: String, in schema: ClassSchema) -> Bool {
        let leading = indexesLeading(with: field, in: schema)
        return leading.declared || leading.automatic
    }

    /// The class's ordered indexes (declared and automatic) by name: text indexes (`TextIndex`) answer no
    /// comparison or sort, so they neither cover nor lead a field here.
    private static func orderedIndexes(of schema: ClassSchema) -> [String: JSON] {
        (schema.indexes?.objectValue ?? [:]).filter { _, definition in
            !(definition.objectValue ?? [:]).values.contains { $0.stringValue == TextIndex.marker }
        }
    }

    /// Whether any ordered index, declared or automatic, has `field` among its fields.
    static func coversField(_ field: String, in schema: ClassSchema) -> Bool {
        orderedIndexes(of: schema).values.contains { $0.objectValue?[field] != nil }
    }

    /// Which kinds of index lead with `field`: declared (or a Pointer's), automatic.
    static func indexesLeading(with field: String, in schema: ClassSchema) -> (declared: Bool, automatic: Bool) {
        if case .pointer? = schema.fields[field] { return (true, false) }
        var declared = false, automatic = false
        for (name, definition) in orderedIndexes(of: schema) where definition.objectValue?.keys.min() == field {
            if name.hasPrefix(automaticPrefix) { automatic = true } else { declared = true }
        }
        return (declared, automatic)
    }

    /// Builds the index (in the caller's write: SQLite builds it in one pass, holding the writer) and lists it.
    static func createAutomatic(_ field: String, expression: String, in schema: ClassSchema, db: any SQLConnection) throws -> ClassSchema {
        // Missing values first, as both compilers order them (PostgreSQL's own default puts them last).
        let term = db.dialect == .postgres ? expression + " NULLS FIRST" : expression
        try db.execute("CREATE INDEX IF NOT EXISTS \(automaticSQLName(field, in: schema)) ON \(schema.tableName) (\(term)\(ReadPermission.indexSuffix))",
                       cacheable: false)
        var schema = schema
        var listed = schema.indexes?.objectValue ?? [:]
        listed[automaticName(field)] = .object([field: 1])
        schema.indexes = .object(listed)
        try SchemaStore.save(schema, in: db)
        return schema
    }

    /// Drops the automatic index on `field`, if there is one; the caller saves the schema.
    static func dropAutomatic(_ field: String, from schema: inout ClassSchema, db: any SQLConnection) throws {
        guard var listed = schema.indexes?.objectValue, listed.removeValue(forKey: automaticName(field)) != nil else { return }
        try db.execute("DROP INDEX IF EXISTS \(automaticSQLName(field, in: schema))", cacheable: false)
        schema.indexes = listed.isEmpty ? nil : .object(listed)
    }

    /// Drops the automatic indexes a declared index now makes redundant (one leading with the same field).
    static func dropSupersededAutomatic(from schema: inout ClassSchema, db: any SQLConnection) throws {
        let declaredLeads = Set(orderedIndexes(of: schema).compactMap { name, definition in
            name.hasPrefix(automaticPrefix) ? nil : definition.objectValue?.keys.min()
        })
        for field in automaticFields(of: schema) where declaredLeads.contains(field) {
            try dropAutomatic(field, from: &schema, db: db)
        }
    }
}
