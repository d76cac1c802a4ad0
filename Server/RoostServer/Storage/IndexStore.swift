import RoostCore

/// SQLite indexes behind a class's fields, on the same expressions the query compiler emits, so
/// equality, range and `order` on an indexed field read the index.
///
/// Policy: `objectId` is the primary key; every Pointer field gets an index automatically when it
/// is first recorded (pointer equality, `$inQuery`, `include`); other fields get one when declared
/// through `indexes` in `POST/PUT /schemas/<Class>`, as in Parse, or made by `AutoIndexes` for the fields
/// queries keep filtering or sorting on (`IndexStore+Automatic`); `{"field": "text"}` declares a text index
/// (`TextIndex`), which a first `$text` search of the field also creates.
enum IndexStore {
    /// The expression an index on `field` covers: the column for built-in keys, else the JSON path
    /// (a Pointer's objectId, a Date's ISO text). On PostgreSQL, the typed expression `PostgresQueryCompiler`
    /// compares and orders by.
    static func expression(for field: String, in schema: ClassSchema, dialect: SQLDialect = .sqlite) -> String? {
        switch field {
        case "objectId", "createdAt", "updatedAt": return field
        case _ where dialect == .postgres:
            return PostgresQueryCompiler(schema: schema).typedSortExpression(field).map { "(\($0))" }
        default:
            switch schema.fields[field] {
            case .pointer?: return "json_extract(data, '$.\(field).objectId')"
            case .date?: return "json_extract(data, '$.\(field).iso')"
            case .string?, .number?, .boolean?: return "json_extract(data, '$.\(field)')"
            default: return nil
            }
        }
    }

    /// The SQL name of the declared index `name` (`"c12_i_name"`).
    static func declaredSQLName(_ name: String, of schema: ClassSchema) -> String {
        "\"\(schema.tableName.dropFirst().dropLast())_i_\(name)\""
    }

    /// Applies `indexes` from a schema request: `{"name": {"field": 1 | -1, …}}` adds, `{"name": {"__op": "Delete"}}` drops.
    /// - Throws: `ParseError` 102 for a bad name, a missing or unindexable field, or an existing/missing index.
    static func apply(_ request: JSON, to schema: ClassSchema, in db: any SQLConnection) throws -> ClassSchema {
        // An empty array is an empty object, as Parse reads its keys (PHP's `json_encode` of an empty array is `[]`).
        if case .array(let items) = request, items.isEmpty { return schema }
        guard case .object(let entries) = request else { throw ParseError(.invalidQuery, "indexes must be an object") }
        var schema = schema
        var declared = schema.indexes?.objectValue ?? [:]
        for (name, definition) in entries.sorted(by: { $0.key < $1.key }) {
            if name.hasPrefix(automaticPrefix), definition["__op"]?.stringValue == "Delete",
               let field = declared[name]?.objectValue?.keys.first {
                // An automatic index may be dropped like a declared one (it comes back if its queries keep coming).
                schema.indexes = .object(declared)
                try dropAutomatic(field, from: &schema, db: db)
                declared = schema.indexes?.objectValue ?? [:]
                continue
            }
            guard declared[name] == nil || definition["__op"]?.stringValue == "Delete" else {
                throw ParseError(.invalidQuery, "Index \(name) exists, cannot update.")
            }
            guard Names.isValidIdentifier(name) else { throw ParseError(.invalidQuery, "Invalid index name: \(name)") }
            let sqlName = declaredSQLName(name, of: schema)
            if definition["__op"]?.stringValue == "Delete" {
                guard let removed = declared.removeValue(forKey: name) else {
                    throw ParseError(.invalidQuery, "Index \(name) does not exist, cannot delete.")
                }
                try db.execute("DROP INDEX IF EXISTS \(sqlName)", cacheable: false)
                for (field, kind) in removed.objectValue ?? [:] where kind.stringValue == TextIndex.marker {
                    guard !declared.values.contains(where: { $0[field]?.stringValue == TextIndex.marker }) else { continue }
                    try TextIndex.drop(field, of: schema, in: db)
                }
                continue
            }
            guard declared[name] == nil else { throw ParseError(.invalidQuery, "Index \(name) exists, cannot update.") }
            guard case .object(let fields) = definition, !fields.isEmpty else { throw ParseError(.invalidQuery, "Index \(name) needs fields") }
            if fields.values.contains(where: { $0.stringValue == TextIndex.marker }) {
                // A text index (MongoDB's `{"field": "text"}`): one FTS5 table per field (see `TextIndex`).
                for (field, kind) in fields.sorted(by: { $0.key < $1.key }) {
                    guard kind.stringValue == TextIndex.marker else {
                        throw ParseError(.invalidQuery, "Index \(name) mixes text and ordered fields")
                    }
                    guard TextIndex.accepts(schema.fields[field]) else {
                        throw ParseError(.invalidQuery, "Field \(field) is not a String or Array, cannot add text index.")
                    }
                    try TextIndex.create(field, of: schema, in: db)
                }
                declared[name] = definition
                continue
            }
            schema.indexes = declared.isEmpty ? nil : .object(declared)
            let added = try create(sqlName, on: fields, in: &schema, db: db)
            declared = schema.indexes?.objectValue ?? [:]
            declared[name] = definition
            // Indexes already on an added column's expression would no longer be read (queries name the column now):
            // declared ones are made again on it, an automatic one dropped (it comes back on the column if its queries
            // keep coming).
            for (other, otherDefinition) in declared.sorted(by: { $0.key < $1.key }) where other != name {
                guard case .object(let otherFields) = otherDefinition, !added.isDisjoint(with: otherFields.keys),
                      !otherFields.values.contains(where: { $0.stringValue == TextIndex.marker }) else { continue }
                if other.hasPrefix(automaticPrefix) {
                    schema.indexes = .object(declared)
                    for field in otherFields.keys { try dropAutomatic(field, from: &schema, db: db) }
                    declared = schema.indexes?.objectValue ?? [:]
                } else {
                    try db.execute("DROP INDEX IF EXISTS \(declaredSQLName(other, of: schema))", cacheable: false)
                    _ = try create(declaredSQLName(other, of: schema), on: otherFields, in: &schema, db: db)
                }
            }
        }
        schema.indexes = declared.isEmpty ? nil : .object(declared)
        try dropSupersededAutomatic(from: &schema, db: db)
        return schema
    }

    /// Creates the declared index `sqlName` on `fields` (each 1 or -1), ending with `rperm`; on PostgreSQL a Number or
    /// String field's term is its typed column (`PostgresTypedColumns`), added if it has none, and the index includes
    /// `rowid`, which a deep page walks it for (`ObjectStore.selectSQL`). Returns the fields whose column it added.
    private static func create(_ sqlName: String, on fields: [String: JSON], in schema: inout ClassSchema,
                               db: any SQLConnection) throws -> Set<String> {
        var terms: [String] = []
        var added: Set<String> = []
        for (field, direction) in fields.sorted(by: { $0.key < $1.key }) {
            guard var expression = expression(for: field, in: schema, dialect: db.dialect) else {
                throw ParseError(.invalidQuery, "Field \(field) does not exist, cannot add index.")
            }
            guard direction == 1 || direction == -1 else { throw ParseError(.invalidQuery, "Index direction must be 1 or -1") }
            switch db.dialect {
            case .sqlite: terms.append(expression + (direction == -1 ? " DESC" : ""))
            // Missing values first ascending, last descending, as `PostgresQueryCompiler` orders them.
            case .postgres:
                let had = schema.typedColumns.contains(field)
                if let column = try PostgresTypedColumns.add(field, to: &schema, in: db) {
                    expression = column
                    if !had { added.insert(field) }
                }
                terms.append(expression + (direction == -1 ? " DESC NULLS LAST" : " NULLS FIRST"))
            }
        }
        let included = db.dialect == .postgres ? " INCLUDE (rowid)" : ""
        try db.execute("CREATE INDEX \(sqlName) ON \(schema.tableName) (\(terms.joined(separator: ", "))\(ReadPermission.indexSuffix))\(included)",
                       cacheable: false)
        return added
    }

    /// On PostgreSQL, a deleted field's declared indexes go with it (as a dropped column's do there, where Parse keeps
    /// fields as columns), and so does its typed column (`PostgresTypedColumns`): their typed expressions would refuse
    /// the field's values if it came back with another type. SQLite's indexes read any type, and stay. Indexes the same
    /// request deletes (`deletedByRequest`) are left to `apply`. A query compiled just before, on another node (whose
    /// schema cache has not heard yet), may still name the column and fail once.
    static func dropDeclared(on field: String, from schema: inout ClassSchema, deletedByRequest: Set<String>,
                             db: any SQLConnection) throws {
        guard db.dialect == .postgres else { return }
        var declared = schema.indexes?.objectValue ?? [:]
        for (name, definition) in declared.sorted(by: { $0.key < $1.key })
        where !name.hasPrefix(automaticPrefix) && !deletedByRequest.contains(name) && definition[field] != nil
            && definition[field]?.stringValue != TextIndex.marker {
            try db.execute("DROP INDEX IF EXISTS \(declaredSQLName(name, of: schema))", cacheable: false)
            declared.removeValue(forKey: name)
        }
        schema.indexes = declared.isEmpty ? nil : .object(declared)
        // Whether or not the schema lists it: a column left behind would refuse the field's next type.
        schema.typedColumns.remove(field)
        if let column = PostgresTypedColumns.column(field), schema.view == nil {
            try db.execute("ALTER TABLE \(schema.tableName) DROP COLUMN IF EXISTS \(column)", cacheable: false)
        }
    }

    /// Indexes Pointer fields among `added` (the automatic part of the policy).
    static func indexNewPointers(_ added: [String: FieldType], of schema: ClassSchema, in db: any SQLConnection) throws {
        for (field, type) in added {
            guard case .pointer = type, let expression = expression(for: field, in: schema, dialect: db.dialect) else { continue }
            let sqlName = "\"\(schema.tableName.dropFirst().dropLast())_p_\(field)\""
            try db.execute("CREATE INDEX IF NOT EXISTS \(sqlName) ON \(schema.tableName) (\(expression)\(ReadPermission.indexSuffix))", cacheable: false)
        }
    }
}
