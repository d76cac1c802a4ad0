import RoostCore

/// A query over one class in storage terms: constraint tree, order, paging.
struct FindQuery {
    var constraint: QueryConstraint = .all
    var order: [SortKey] = []
    var limit: Int = 100
    var skip: Int = 0
    /// The caller's ACL subjects (`*`, user id, `role:<name>`); `nil` reads everything (master key).
    var readableBy: [String]?
    /// Checks the caller may query the class of a subquery (`$inQuery`, `$select`...) and restricts it.
    var authorizeSubquery: SubqueryAuthorizer = { _, subquery, _ in subquery.constraint }
    /// A condition on the table's own columns that the server adds (never built from client input),
    /// e.g. `userId = ?` on `_session_objects`, where it can use the table's index.
    var rowFilter: SQLFragment?
}

/// Checks that the caller may run a subquery on its class (`$select` and `$dontSelect` pass the key they
/// read) and returns its constraint as the caller may run it there, e.g. with the class's `pointerFields`.
typealias SubqueryAuthorizer = (ClassSchema, Subquery, _ selectedKey: String?) throws -> QueryConstraint

struct SortKey: Equatable {
    var key: String
    var descending: Bool

    /// `order=$score`: by `$text` relevance.
    static let textScore = "$score"
}

/// Rows of one class table ↔ `StoredObject`s. Every statement binds its values; the only text
/// spliced into SQL is the table name (built from an integer) and validated field paths.
enum ObjectStore {
    private static let columns = "objectId, createdAt, updatedAt, acl, data"

    /// - Throws: `ParseError` 137 when the objectId is taken (inside `answeringLater`, the database's error later).
    static func insert(_ object: StoredObject, into schema: ClassSchema, in db: any SQLConnection) throws {
        let sql = "INSERT INTO \(schema.tableName) (objectId, createdAt, updatedAt, acl, rperm, data) VALUES (?, ?, ?, ?, ?, ?)"
        let values = arguments(for: object)
        do {
            try db.runAnsweredLater(sql, values)
        } catch let error as any DatabaseError where error.isPrimaryKeyViolation || error.isUniqueViolation {
            throw ParseError(.duplicateValue, "A duplicate value for a field with unique values was provided")
        }
        db.countRows(1, in: schema)
        try db.recorder(for: schema.className)?.record(schema.className, before: nil, after: row(values, schema), in: db)
    }

    static func update(_ object: StoredObject, in schema: ClassSchema, in db: any SQLConnection) throws {
        let sql = "UPDATE \(schema.tableName) SET createdAt = ?, updatedAt = ?, acl = ?, rperm = ?, data = ? WHERE objectId = ?"
        var values = arguments(for: object)
        let recorder = db.recorder(for: schema.className)
        // The version before, as stored: decoded only if a subscriber needs it.
        let before = recorder != nil ? try fetch(object.objectId, from: schema, in: db) : nil
        let after = recorder != nil ? row(values, schema) : nil
        values.append(values.removeFirst())  // objectId goes last, for the WHERE.
        do {
            try db.execute(sql, values)
        } catch let error as any DatabaseError where error.isUniqueViolation {
            throw ParseError(.duplicateValue, "A duplicate value for a field with unique values was provided")
        }
        if let recorder, db.changes > 0 { try recorder.record(schema.className, before: before, after: after, in: db) }
    }

    /// - Parameter readableBy: see `FindQuery.readableBy`; an object the caller may not read is not found.
    static func fetch(_ objectId: String, from schema: ClassSchema, readableBy: [String]? = nil,
                      in db: some SQLQuerying) throws -> StoredRow? {
        let acl = QueryCompiler.readFilter(readableBy)
        let rows = try db.fetchRows("SELECT \(columns) FROM \(schema.tableName) WHERE objectId = ? AND \(acl.sql)",
                                    [.text(objectId)] + acl.arguments, cacheable: true)
        return rows.first.map { StoredRow($0, className: schema.className) }
    }

    /// The objects with these ids that the caller may read (for `include`).
    static func fetchMany(_ objectIds: [String], from schema: ClassSchema, readableBy: [String]?,
                          in db: some SQLQuerying) throws -> [StoredRow] {
        let acl = QueryCompiler.readFilter(readableBy)
        let ids = JSON.array(objectIds.map { .string($0) }).jsonText
        return try db.fetchRows(
            "SELECT \(columns) FROM \(schema.tableName) WHERE objectId IN (SELECT value FROM json_each(?)) AND \(acl.sql)",
            [.text(ids)] + acl.arguments, cacheable: true).map { StoredRow($0, className: schema.className) }
    }

    /// Returns whether a row was deleted.
    static func delete(_ objectId: String, from schema: ClassSchema, in db: any SQLConnection) throws -> Bool {
        let recorder = db.recorder(for: schema.className)
        let before = recorder != nil ? try fetch(objectId, from: schema, in: db) : nil
        try db.execute("DELETE FROM \(schema.tableName) WHERE objectId = ?", [.text(objectId)])
        let deleted = db.changes > 0
        if deleted { db.countRows(-1, in: schema) }
        if deleted, let recorder, let before { try recorder.record(schema.className, before: before, after: nil, in: db) }
        return deleted
    }

    static func find(_ query: FindQuery, in schema: ClassSchema, in db: some SQLQuerying) throws -> [StoredRow] {
        let (sql, arguments) = try selectSQL(query, in: schema, in: db)
        return try db.fetchRows(sql, arguments, cacheable: true).map { StoredRow($0, className: schema.className) }
    }

    /// The SQL and arguments of a query (also what `EXPLAIN QUERY PLAN` checks in tests).
    static func selectSQL(_ query: FindQuery, in schema: ClassSchema, in db: some SQLQuerying) throws -> (String, [SQLValue]) {
        let compiler = compiler(for: schema, readableBy: query.readableBy, authorize: query.authorizeSubquery, in: db)
        let condition = try whereClause(query, compiler)
        var sql = "SELECT \(columns) FROM \(schema.tableName) WHERE \(condition.sql)"
        var arguments = condition.arguments
        let order = compiler.orderBy(query.order, constraint: query.constraint)
        if !order.sql.isEmpty {
            sql += " ORDER BY " + order.sql
            arguments += order.arguments
        } else if let nearest = compiler.nearestFirst(query.constraint) {
            sql += " ORDER BY " + nearest.sql
            arguments += nearest.arguments
        }
        sql += " LIMIT ? OFFSET ?"
        arguments += [.integer(Int64(query.limit)), .integer(Int64(query.skip))]
        if db.dialect == .postgres, query.skip >= deferredReadSkip, schema.view == nil {
            // A deep page on PostgreSQL: the skipped rows are walked for their `rowid` alone (an index-only scan when
            // the order and the test are on a declared index's typed columns, `PostgresTypedColumns`, which include
            // `rowid`), and only the page's own rows are read. Otherwise every skipped row is fetched from the table
            // and its `data` converted to text: 270 ms at skip 100,000 over 1,000,000 objects.
            let table = schema.tableName
            let walk = "SELECT rowid" + sql.dropFirst("SELECT \(columns)".count)
            sql = "SELECT \(columns) FROM unnest(ARRAY(\(walk))) WITH ORDINALITY AS page(id, position) "
                + "JOIN \(table) ON \(table).rowid = page.id ORDER BY page.position"
        }
        return (sql, arguments)
    }

    /// From this `skip` on, a page on PostgreSQL is read after walking to it (`selectSQL`).
    static let deferredReadSkip = 1_000

    static func count(_ query: FindQuery, in schema: ClassSchema, in db: some SQLQuerying) throws -> Int {
        let compiler = compiler(for: schema, readableBy: query.readableBy, authorize: query.authorizeSubquery, in: db)
        var filter = try compiler.compile(query.constraint)
        if let rowFilter = query.rowFilter {
            filter = SQLFragment(sql: "(\(filter.sql)) AND (\(rowFilter.sql))", arguments: filter.arguments + rowFilter.arguments)
        }
        return try ReadPermission.count(schema, where: filter, readableBy: query.readableBy, in: db)
    }

    /// The `WHERE` condition of a query: its constraint, the caller's read permission and the server's `rowFilter`.
    static func condition(_ query: FindQuery, in schema: ClassSchema, in db: some SQLQuerying) throws -> SQLFragment {
        try whereClause(query, compiler(for: schema, readableBy: query.readableBy, authorize: query.authorizeSubquery, in: db))
    }

    /// The query's constraint, the caller's ACL filter and the server's `rowFilter`, together.
    private static func whereClause(_ query: FindQuery, _ compiler: any ConstraintCompiling) throws -> SQLFragment {
        let filter = try compiler.compile(query.constraint)
        let acl = QueryCompiler.readFilter(query.readableBy)
        var clause = SQLFragment(sql: "(\(filter.sql)) AND \(acl.sql)", arguments: filter.arguments + acl.arguments)
        if let rowFilter = query.rowFilter {
            clause.sql += " AND (\(rowFilter.sql))"
            clause.arguments += rowFilter.arguments
        }
        return clause
    }

    /// The compiler for the connection's SQL: `QueryCompiler` for SQLite, `PostgresQueryCompiler` for PostgreSQL.
    private static func compiler(for schema: ClassSchema, readableBy: [String]?, authorize: @escaping SubqueryAuthorizer,
                                 in db: some SQLQuerying) -> any ConstraintCompiling {
        let lookup = { (className: String) in try SchemaStore.load(className, in: db) }
        switch db.dialect {
        case .sqlite:
            return QueryCompiler(schema: schema, lookup: lookup, readableBy: readableBy, authorizeSubquery: authorize)
        case .postgres:
            return PostgresConstraintCompiler(compiler: PostgresQueryCompiler(
                schema: schema, lookup: lookup, readableBy: readableBy, authorizeSubquery: authorize))
        }
    }

    /// The stored row of `arguments(for:)`'s values (their text as written, for the change log).
    private static func row(_ values: [SQLValue], _ schema: ClassSchema) -> StoredRow {
        StoredRow(className: schema.className, objectId: values[0].text ?? "", createdAt: values[1].integer ?? 0,
                  updatedAt: values[2].integer ?? 0, aclText: values[3].text, dataText: values[5].text ?? "{}")
    }

    /// `objectId, createdAt, updatedAt, acl, rperm, data` (also LiveQuery's matching row).
    static func arguments(for object: StoredObject) -> [SQLValue] {
        return [
            .text(object.objectId), .integer(object.createdAt.millisecondsSince1970),
            .integer(object.updatedAt.millisecondsSince1970), object.acl.map { .text($0.jsonText) } ?? .null,
            ReadPermission.readers(of: object.acl), .text(JSON.object(object.fields).jsonText),
        ]
    }
}
