import RoostCore

/// Roost's storage used in-process, without HTTP: bulk imports, maintenance scripts, benchmarks.
///
/// It acts with the master key's rights (no ACL or class-level permission applies) and goes
/// through the same schema checks, query compiler and SQL as the server. Do not open a data
/// directory that a running server is using for writes: both would be writers.
public final class EmbeddedStore {
    let storage: Storage
    private let config: ServerConfig

    /// Opens (creating if needed) the database of `dataDirectory`.
    /// - Parameter queryTimeout: seconds one read may run (0: no limit), as `--query-timeout`.
    public init(dataDirectory: String, queryTimeout: Double = 5) throws {
        var config = ServerConfig()
        config.dataDirectory = dataDirectory
        config.queryTimeoutSeconds = queryTimeout
        self.config = config
        storage = try Storage(path: TransferDatabase.path(dataDirectory: dataDirectory), queryTimeout: queryTimeout)
    }

    /// Opens the PostgreSQL database at `databaseURL` (as `roost serve --database-url`), bringing its tables up to date.
    public init(databaseURL: String, dataDirectory: String, queryTimeout: Double = 5) throws {
        var config = ServerConfig()
        config.dataDirectory = dataDirectory
        config.databaseURL = databaseURL
        config.queryTimeoutSeconds = queryTimeout
        self.config = config
        storage = try Storage(databaseURL: databaseURL, poolSize: 2, queryTimeout: queryTimeout)
    }

    /// Stores new objects in one transaction; returns their ids.
    /// - Throws: `ParseError` for invalid fields or a type mismatch with the schema.
    public func insert(className: String, objects: [[String: JSON]]) throws -> [String] {
        let decoded = try objects.map { try ObjectWriter.decode($0, isCreate: true) }
        let context = masterContext()
        return try storage.write { db in
            var ids: [String] = []
            ids.reserveCapacity(objects.count)
            for changes in decoded {
                let schema = try ObjectWriter.schemaForWrite(className, changes, context: context, in: db)
                let now = ParseDate.now()
                let object = StoredObject(objectId: try SecureRandom.objectId(), createdAt: now, updatedAt: now,
                                          acl: changes.acl, fields: try ObjectWriter.apply(changes.operations, to: nil))
                try ObjectStore.insert(object, into: schema, in: db)
                ids.append(object.objectId)
            }
            return ids
        }
    }

    /// Declares an index, as `indexes` in `PUT /schemas/<Class>` does: `fields` maps names to 1 or -1.
    public func declareIndex(className: String, name: String, fields: [String: Int]) throws {
        try storage.write { db in
            guard let schema = try SchemaStore.load(className, in: db) else { throw SchemaRoutes.classMissing(className) }
            let request = JSON.object([name: .object(fields.mapValues { .number(Double($0)) })])
            try SchemaStore.save(try IndexStore.apply(request, to: schema, in: db), in: db)
        }
    }

    /// Declares a text index on a String or Array field, as `indexes: {"name": {"field": "text"}}` does (see `TextIndex`).
    public func declareTextIndex(className: String, field: String) throws {
        try storage.write { db in
            guard let schema = try SchemaStore.load(className, in: db) else { throw SchemaRoutes.classMissing(className) }
            let request = JSON.object(["\(field)_text": [field: .string(TextIndex.marker)]])
            try SchemaStore.save(try IndexStore.apply(request, to: schema, in: db), in: db)
        }
    }

    /// Runs a query given as Parse parameters (`where`, `order`, `limit`, `skip`, `keys`, `count`...),
    /// and answers as `GET /classes/<Class>` would.
    public func find(className: String, parameters: [String: JSON]) throws -> JSON {
        let request = APIRequest(method: "GET", segments: ["classes", className], body: .object(parameters))
        return try ClassRoutes.find(className, request: request, context: masterContext()).body
    }

    /// Runs a query as a caller without the master key would: ACLs and class-level permissions apply.
    /// - Parameters:
    ///   - userId: the caller's user id (nil: a caller with no session); it is not looked up.
    ///   - roles: the names of the roles the caller holds.
    public func find(className: String, parameters: [String: JSON], asUser userId: String?, roles: [String] = []) throws -> JSON {
        let request = APIRequest(method: "GET", segments: ["classes", className], body: .object(parameters))
        let user = userId.map { AuthenticatedUser(id: $0, sessionId: "embedded", sessionToken: "", roles: roles) }
        return try ClassRoutes.find(className, request: request, context: context(isMaster: false, user: user)).body
    }

    /// Runs `GET /aggregate/<Class>` with these parameters (`pipeline`, stage parameters, `distinct`, `where`) and
    /// answers as it does.
    /// - Parameter inMemory: the whole pipeline in memory over every matching object (the path before SQL took
    ///   the stages it can), for comparisons.
    public func aggregate(className: String, parameters: [String: JSON], inMemory: Bool = false) throws -> JSON {
        var parameters = parameters
        var config = config
        if inMemory {
            config.aggregateInMemoryParameter = true
            parameters[AggregateRoutes.inMemoryParameter] = true
        }
        let context = context(isMaster: true, user: nil, config: config)
        let request = APIRequest(method: "GET", segments: ["aggregate", className], body: .object(parameters))
        return try AggregateRoutes.aggregate(className, request: request, context: context).body
    }

    /// Refreshes PostgreSQL's planner statistics and visibility map (`VACUUM ANALYZE`, outside any transaction), as
    /// autovacuum does some time after a bulk load: until then an index-only scan still visits the table for every
    /// row (`PostgresTypedColumns`). Under the store's query time limit (`queryTimeout`; the bench sets none). On
    /// SQLite nothing (its plans use no statistics unless asked).
    public func analyze() throws {
        try storage.read(.eachStatement) { db in
            if db.dialect == .postgres { _ = try db.fetchRows("VACUUM ANALYZE", [], cacheable: false) }
        }
    }

    /// The plan of the SQL a query compiles to, one line per step: SQLite's `EXPLAIN QUERY PLAN`, PostgreSQL's `EXPLAIN`.
    /// - Parameter readableBy: the caller's ACL subjects (`*`, user id, `role:<name>`); nil for the master key.
    public func queryPlan(className: String, parameters: [String: JSON], readableBy: [String]? = nil) throws -> [String] {
        var options = try QueryOptions.parse(parameters)
        options.find.readableBy = readableBy
        return try storage.read { db in
            guard let schema = try SchemaStore.load(className, in: db) else { throw SchemaRoutes.classMissing(className) }
            let (sql, arguments) = try ObjectStore.selectSQL(options.find, in: schema, in: db)
            let explain = db.dialect == .postgres ? "EXPLAIN " : "EXPLAIN QUERY PLAN "
            return try db.fetchRows(explain + sql, arguments, cacheable: false).compactMap { $0.last?.text }
        }
    }

    /// Checkpoints and closes the database.
    public func close() throws { try storage.close() }

    private func masterContext() -> RequestContext { context(isMaster: true, user: nil) }

    private func context(isMaster: Bool, user: AuthenticatedUser?, config: ServerConfig? = nil) -> RequestContext {
        let config = config ?? self.config
        return RequestContext(config: config, storage: storage, isMaster: isMaster, user: user, installationId: nil,
                              requestId: "embedded", logger: .init(label: "roost.embedded"), publicURL: "", transaction: nil,
                              passwords: PreparedPasswords(hasher: config.passwordHasher))
    }
}
