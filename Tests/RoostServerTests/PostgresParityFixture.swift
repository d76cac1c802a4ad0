import Foundation
import RoostCore
@testable import RoostServer
import RoostTestSupport

/// One set of objects stored twice: through Roost's SQLite storage (`SchemaStore.create`, `ObjectStore.insert`,
/// `RelationStore.apply`) and, row for row, in a PostgreSQL schema of its own with the layout `PostgresQueryCompiler`
/// reads (`objectId, createdAt, updatedAt, acl text, rperm text, data jsonb`, and `_join`). The PostgreSQL tables
/// are made here, not by the storage migrations, so the compilers can be compared on their own.
final class PostgresParityFixture {
    struct Class {
        let name: String
        let fields: [String: FieldType]
        /// objectId, ACL, fields.
        let objects: [(id: String, acl: JSON?, fields: [String: JSON])]
        /// Relation field → owner objectId → related objectIds.
        var relations: [String: [String: [String]]] = [:]
        /// String fields with a declared text index: SQLite's FTS5 table (`TextIndex`), PostgreSQL's GIN index on
        /// `PostgresQueryCompiler.textIndexExpression`; both compilers then narrow `$text` through them.
        var textIndexes: [String] = []
    }

    let storage: Storage
    let postgres: PostgresConnection
    let directory: URL
    let namespace: String
    private(set) var schemas: [String: ClassSchema] = [:]

    init(_ classes: [Class]) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("roost-parity-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        storage = try Storage(path: directory.appendingPathComponent("roost.sqlite").path)
        postgres = try PostgresConnection(url: try PostgresTestCluster.url())
        namespace = "parity_" + UUID().uuidString.prefix(8).lowercased()
        // A schema of its own, with the internal tables and SQL functions the server's migrations make.
        try postgres.execute("CREATE SCHEMA \(namespace); SET search_path TO \(namespace)")
        try PostgresSchema.migrate(postgres)
        var created = 0
        for spec in classes { try store(spec, createdFrom: &created) }
        try copyJoinTable()
    }

    deinit {
        _ = try? postgres.execute("DROP SCHEMA \(namespace) CASCADE")
        try? storage.close()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Writes one class on SQLite, then copies its rows as stored (`rperm` included) to PostgreSQL.
    private func store(_ spec: Class, createdFrom created: inout Int) throws {
        let base = try ParseDate(iso: "2026-01-01T00:00:00.000Z").orThrow().millisecondsSince1970
        var createdTimes: [Int64] = []
        for _ in spec.objects {
            created += 1
            createdTimes.append(base + Int64(created) * 3_600_000)
        }
        let schema = try storage.write { db -> ClassSchema in
            var schema = try SchemaStore.create(spec.name, fields: spec.fields, classLevelPermissions: nil, in: db)
            for (object, time) in zip(spec.objects, createdTimes) {
                let date = ParseDate(millisecondsSince1970: time)
                try ObjectStore.insert(StoredObject(objectId: object.id, createdAt: date, updatedAt: date, acl: object.acl, fields: object.fields),
                                       into: schema, in: db)
            }
            for (field, owners) in spec.relations {
                guard case .relation(let target)? = spec.fields[field] else { continue }
                for (owner, related) in owners {
                    try RelationStore.apply([field: .relation(targetClass: target, add: related, remove: [])],
                                            className: spec.name, objectId: owner, in: db)
                }
            }
            for field in spec.textIndexes {
                schema = try IndexStore.apply(JSON.object(["\(field)_text": [field: .string(TextIndex.marker)]]), to: schema, in: db)
                try SchemaStore.save(schema, in: db)
            }
            return schema
        }
        schemas[spec.name] = schema
        for statement in PostgresClassTable.createStatements(table: schema.tableName, tableID: schema.id) {
            try postgres.execute(statement)
        }
        let rows = try storage.read { db in
            try db.fetchRows("SELECT objectId, createdAt, updatedAt, acl, rperm, data FROM \(schema.tableName) ORDER BY rowid", [], cacheable: false)
        }
        for row in rows {
            try postgres.query(
                "INSERT INTO \(schema.tableName) (objectId, createdAt, updatedAt, acl, rperm, data) VALUES ($1, $2, $3, $4, $5, $6::jsonb)",
                [.text(row[0].text ?? ""), .int(row[1].integer ?? 0), .int(row[2].integer ?? 0),
                 row[3].text.map(PostgresValue.text) ?? .null, row[4].text.map(PostgresValue.text) ?? .null, .text(row[5].text ?? "{}")])
        }
        for field in spec.textIndexes {
            try postgres.execute("CREATE INDEX ON \(schema.tableName) USING GIN ((\(PostgresQueryCompiler.textIndexExpression(field))))")
        }
    }

    private func copyJoinTable() throws {
        let rows = try storage.read { db in
            try db.fetchRows("SELECT owningClass, field, owningId, relatedId FROM _join", [], cacheable: false)
        }
        for row in rows {
            try postgres.query("INSERT INTO _join (owningClass, field, owningId, relatedId) VALUES ($1, $2, $3, $4)", row.map { PostgresValue.text($0.text ?? "") })
        }
    }

    /// The objectIds SQLite's `ObjectStore.find` answers.
    func sqliteFind(_ className: String, _ query: FindQuery) throws -> [String] {
        let schema = try schemas[className].orThrow()
        return try storage.read { db in try ObjectStore.find(query, in: schema, in: db).map(\.objectId) }
    }

    func sqliteCount(_ className: String, _ query: FindQuery) throws -> Int {
        let schema = try schemas[className].orThrow()
        return try storage.read { db in try ObjectStore.count(query, in: schema, in: db) }
    }

    func postgresCompiler(_ className: String) throws -> PostgresQueryCompiler {
        let schemas = schemas
        return PostgresQueryCompiler(schema: try schemas[className].orThrow(), lookup: { schemas[$0] })
    }

    /// The objectIds `PostgresQueryCompiler.select` finds, and the statement.
    func postgresFind(_ className: String, _ query: FindQuery) throws -> (ids: [String], sql: String) {
        let statement = try postgresCompiler(className).select(query)
        let sql = statement.numbered()
        return (try postgres.query(sql, statement.parameters).rows.map { try $0.string(0) ?? "" }, sql)
    }

    func postgresCount(_ className: String, _ query: FindQuery) throws -> Int {
        let statement = try postgresCompiler(className).count(query)
        return try postgres.query(statement.numbered(), statement.parameters).rows.first?.int(0) ?? -1
    }
}

struct MissingValue: Error {}

extension Optional {
    func orThrow() throws -> Wrapped {
        guard let self else { throw MissingValue() }
        return self
    }
}
