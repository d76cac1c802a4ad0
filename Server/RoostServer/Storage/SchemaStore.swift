import RoostCore
import Synchronization

/// Reads and writes class schemas (`_schema`) and creates or drops their tables.
enum SchemaStore {
    private static let columns = "id, className, fields, classLevelPermissions, indexes, typedColumns"

    static func load(_ className: String, in db: some SQLQuerying) throws -> ClassSchema? {
        let connection = db as? SQLiteConnection, postgres = db as? PostgresConnection
        // A write transaction's own cache (on PostgreSQL emptied as each transaction starts: other nodes change schemas).
        let writer: (any SQLConnection)?
        if let connection {
            writer = connection.isReadOnly ? nil : connection
        } else {
            writer = postgres?.readerSchemas == nil ? postgres : nil
        }
        if let cached = writer?.schemaCache[className] { return cached }
        let shared = connection?.readerSchemas ?? postgres?.readerSchemas
        if let shared, let cached = shared.cache.lookup(className, generation: shared.generation) { return cached }
        let schema = try db.fetchRows("SELECT \(columns) FROM _schema WHERE className = ?", [.text(className)], cacheable: true)
            .first.map(decode)
        if let schema, let writer { writer.writeState.schemaCache[className] = schema }
        if let schema, let shared { shared.cache.store(schema, generation: shared.generation) }
        return schema
    }

    static func all(in db: some SQLQuerying) throws -> [ClassSchema] {
        try db.fetchRows("SELECT \(columns) FROM _schema ORDER BY className", [], cacheable: true).map(decode)
    }

    /// Records a new class and creates its table.
    ///
    /// A rowid table with a unique `objectId`: new rows append at the table's end and only the small
    /// objectId index takes random inserts. (Tables keyed by the random objectId itself, as before,
    /// spread every insert over the whole table: creates slowed as it grew, 9.8k → 12.6k req/s
    /// measured over 50 s of creates. Such tables from older data dirs keep working as they are.)
    static func create(_ className: String, fields: [String: FieldType], classLevelPermissions: JSON?,
                       in db: any SQLConnection) throws -> ClassSchema {
        db.schemaChanged()
        let inserted = try db.fetchRows(
            "INSERT INTO _schema (className, fields, classLevelPermissions) VALUES (?, ?, ?) RETURNING id",
            [.text(className), .text(encode(fields)), classLevelPermissions.map { .text($0.jsonText) } ?? .null], cacheable: true)
        guard let id = inserted.first?.first?.integer else { throw StorageError.corruptRow(className: "_schema", objectId: className) }
        let schema = ClassSchema(id: id, className: className, fields: fields,
                                 classLevelPermissions: classLevelPermissions.map(ClassSchema.completed), indexes: nil)
        switch db.dialect {
        case .sqlite:
            try db.execute("""
                CREATE TABLE \(schema.tableName) (
                    objectId TEXT NOT NULL UNIQUE,
                    createdAt INTEGER NOT NULL,
                    updatedAt INTEGER NOT NULL,
                    acl TEXT,
                    rperm TEXT,
                    data TEXT NOT NULL
                )
                """, cacheable: false)
            try db.execute(ReadPermission.restrictedIndexSQL(table: schema.tableName, tableID: schema.id), cacheable: false)
            try RowCount.install(tableID: schema.id) { try db.execute($0, cacheable: false) }
        case .postgres:
            for statement in PostgresClassTable.createStatements(table: schema.tableName, tableID: schema.id) {
                try db.execute(statement, cacheable: false)
            }
        }
        return schema
    }

    /// Stores the schema's fields, permissions and indexes.
    static func save(_ schema: ClassSchema, in db: any SQLConnection) throws {
        db.schemaChanged()
        try db.execute(
            "UPDATE _schema SET fields = ?, classLevelPermissions = ?, indexes = ?, typedColumns = ? WHERE id = ?",
            [.text(encode(schema.fields, options: schema.fieldOptions)), schema.classLevelPermissions.map { .text($0.jsonText) } ?? .null,
             schema.indexes.map { .text($0.jsonText) } ?? .null, PostgresTypedColumns.recorded(schema.typedColumns), .integer(schema.id)])
    }

    /// Forgets the class and drops its table.
    static func drop(_ schema: ClassSchema, in db: any SQLConnection) throws {
        db.schemaChanged()
        try db.execute("DELETE FROM _schema WHERE id = ?", [.integer(schema.id)])
        for field in TextIndex.fields(of: schema) { try TextIndex.drop(field, of: schema, in: db) }
        try db.execute("DROP TABLE IF EXISTS \(schema.tableName)", cacheable: false)
        try RowCount.remove(tableID: schema.id, in: db)
        try db.execute("DELETE FROM _join WHERE owningClass = ?", [.text(schema.className)])
    }

    private static func encode(_ fields: [String: FieldType], options: [String: JSON] = [:]) -> String {
        JSON.object(FieldOptions.declarations(fields, options: options)).jsonText
    }

    /// Decoded schemas by their stored text: every request reads its class's row (so it always sees
    /// its own snapshot), but only a changed row is parsed again.
    private static let decoded = Mutex<[String: (row: [SQLValue], schema: ClassSchema)]>([:])

    private static func decode(_ row: [SQLValue]) throws -> ClassSchema {
        let className = row[1].text ?? ""
        if let cached = decoded.withLock({ $0[className] }), cached.row == row { return cached.schema }
        let schema = try parse(row, className: className)
        decoded.withLock { $0[className] = (row, schema) }
        return schema
    }

    private static func parse(_ row: [SQLValue], className: String) throws -> ClassSchema {
        let fieldsText = row[2].text ?? "{}"
        var fields: [String: FieldType] = [:], options: [String: JSON] = [:]
        if case .object(let members) = try JSONParser.parse(fieldsText) {
            for (name, json) in members {
                guard let type = FieldType(schemaJSON: json) else { throw StorageError.corruptRow(className: "_schema", objectId: className) }
                fields[name] = type
                options[name] = FieldOptions.of(json)
            }
        }
        let clpText = row[3].text
        let indexesText = row[4].text
        var schema = ClassSchema(
            id: row[0].integer ?? 0, className: className, fields: fields,
            classLevelPermissions: try clpText.map { ClassSchema.completed(try JSONParser.parse($0)) },
            indexes: try indexesText.map { try JSONParser.parse($0) })
        schema.typedColumns = PostgresTypedColumns.fields(recorded: row[5].text)
        schema.fieldOptions = options
        return schema
    }
}
