import RoostCore

/// A query over one class in storage terms: constraint tree, order, paging.
struct FindQuery {
    var constraint: QueryConstraint = .all
    var order: [SortKey] = []
    var limit: Int = 100
    var skip: Int = 0
    /// The caller's ACL subjects (`*`, user id, `role:<name>`); `nil` reads everything (master key).
    var readableBy: [String]?
}

struct SortKey: Equatable {
    var key: String
    var descending: Bool
}

/// Rows of one class table ↔ `StoredObject`s. Every statement binds its values; the only text
/// spliced into SQL is the table name (built from an integer) and validated field paths.
enum ObjectStore {
    private static let columns = "objectId, createdAt, updatedAt, acl, data"

    /// - Throws: `ParseError` 137 when the objectId is taken.
    static func insert(_ object: StoredObject, into schema: ClassSchema, in db: SQLiteConnection) throws {
        let sql = "INSERT INTO \(schema.tableName) (objectId, createdAt, updatedAt, acl, rperm, data) VALUES (?, ?, ?, ?, ?, ?)"
        do {
            try db.execute(sql, arguments(for: object))
        } catch let error as SQLiteError where error.isPrimaryKeyViolation {
            throw ParseError(.duplicateValue, "A duplicate value for a field with unique values was provided")
        }
    }

    static func update(_ object: StoredObject, in schema: ClassSchema, in db: SQLiteConnection) throws {
        let sql = "UPDATE \(schema.tableName) SET createdAt = ?, updatedAt = ?, acl = ?, rperm = ?, data = ? WHERE objectId = ?"
        var values = arguments(for: object)
        values.append(values.removeFirst())  // objectId goes last, for the WHERE.
        try db.execute(sql, values)
    }

    /// - Parameter readableBy: see `FindQuery.readableBy`; an object the caller may not read is not found.
    static func fetch(_ objectId: String, from schema: ClassSchema, readableBy: [String]? = nil,
                      in db: some SQLQuerying) throws -> StoredRow? {
        let acl = readFilter(readableBy)
        let rows = try db.fetchRows("SELECT \(columns) FROM \(schema.tableName) WHERE objectId = ? AND \(acl.sql)",
                                    [.text(objectId)] + acl.arguments, cacheable: true)
        return rows.first.map { StoredRow($0, className: schema.className) }
    }

    /// The ACL as part of the SQL `WHERE`: no ACL, or one that grants read to one of the subjects.
    private static func readFilter(_ subjects: [String]?) -> SQLFragment {
        guard let subjects else { return SQLFragment(sql: "1", arguments: []) }
        let list = JSON.array(subjects.map { .string($0) }).jsonText
        return SQLFragment(
            sql: "(rperm IS NULL OR EXISTS (SELECT 1 FROM json_each(rperm) WHERE value IN (SELECT value FROM json_each(?))))",
            arguments: [.text(list)])
    }

    /// Returns whether a row was deleted.
    static func delete(_ objectId: String, from schema: ClassSchema, in db: SQLiteConnection) throws -> Bool {
        try db.execute("DELETE FROM \(schema.tableName) WHERE objectId = ?", [.text(objectId)])
        return db.changes > 0
    }

    static func find(_ query: FindQuery, in schema: ClassSchema, in db: some SQLQuerying) throws -> [StoredRow] {
        let filter = try QueryCompiler(schema: schema).compile(query.constraint)
        let acl = readFilter(query.readableBy)
        var sql = "SELECT \(columns) FROM \(schema.tableName) WHERE (\(filter.sql)) AND \(acl.sql)"
        let order = QueryCompiler(schema: schema).orderBy(query.order)
        if !order.isEmpty { sql += " ORDER BY " + order }
        sql += " LIMIT ? OFFSET ?"
        let arguments = filter.arguments + acl.arguments + [.integer(Int64(query.limit)), .integer(Int64(query.skip))]
        return try db.fetchRows(sql, arguments, cacheable: true).map { StoredRow($0, className: schema.className) }
    }

    static func count(_ constraint: QueryConstraint, in schema: ClassSchema, readableBy: [String]? = nil,
                      in db: some SQLQuerying) throws -> Int {
        let filter = try QueryCompiler(schema: schema).compile(constraint)
        let acl = readFilter(readableBy)
        let rows = try db.fetchRows("SELECT COUNT(*) FROM \(schema.tableName) WHERE (\(filter.sql)) AND \(acl.sql)",
                                    filter.arguments + acl.arguments, cacheable: true)
        return Int(rows.first?.first?.integer ?? 0)
    }

    /// `objectId, createdAt, updatedAt, acl, rperm, data`.
    private static func arguments(for object: StoredObject) -> [SQLValue] {
        let readers = object.acl.map { JSON.array(ACL.subjects(of: $0, granting: "read").map { .string($0) }).jsonText }
        return [
            .text(object.objectId), .integer(object.createdAt.millisecondsSince1970),
            .integer(object.updatedAt.millisecondsSince1970), object.acl.map { .text($0.jsonText) } ?? .null,
            readers.map(SQLValue.text) ?? .null, .text(JSON.object(object.fields).jsonText),
        ]
    }
}
