import Logging
import RoostCore

/// Decides what a LiveQuery subscriber may see, with the same rules and SQL as its REST queries: the
/// subscription's `where`, restricted as a `find` (or a `get` when it names one objectId, as Parse's
/// `_getCLPOperation`) by the class-level permissions and pointer permissions, and the ACL filter of the
/// subscriber's roles, compiled by `QueryCompiler` (`PostgresQueryCompiler` on PostgreSQL) and run by the database
/// against one object version given as a one-row table. So every query operator matches as it does in a REST query, subqueries included.
struct LiveQueryMatcher {
    let storage: Storage
    let config: ServerConfig
    let logger: Logger

    /// The REST context a subscriber's checks run as.
    func context(isMaster: Bool, user: AuthenticatedUser?) -> RequestContext {
        RequestContext(config: config, storage: storage, isMaster: isMaster, user: user, installationId: nil,
                       requestId: "livequery", logger: logger, publicURL: "", transaction: nil,
                       passwords: PreparedPasswords(hasher: config.passwordHasher))
    }

    /// Parse's `_getCLPOperation`: a `where` of exactly one objectId is a `get`.
    static func operation(for whereClause: [String: JSON]) -> ClassPermissions.Operation {
        whereClause.count == 1 && whereClause["objectId"]?.stringValue != nil ? .get : .find
    }

    /// The schema a subscription's class is matched with: `_Session` is read through its view, as `GET /sessions` reads
    /// it (`SessionRoutes.sessionSchema`: the token is not in it); other classes through their tables (nil: none yet).
    static func schema(of className: String, in db: any SQLQuerying) throws -> ClassSchema? {
        className == SessionStore.className ? SessionRoutes.sessionSchema : try SchemaStore.load(className, in: db)
    }

    /// Checks a new subscription as its REST query would be checked: class-level permission, fields it
    /// may not query (protected fields), and a `where` that compiles.
    /// - Throws: `ParseError` (119, 101, 102...).
    func checkSubscription(_ subscription: LiveQueryClient.Subscription, isMaster: Bool) throws {
        let context = context(isMaster: isMaster, user: subscription.user)
        try storage.read { db in
            guard let schema = try Self.schema(of: subscription.className, in: db) else { return }  // No class yet: public.
            _ = try condition(for: subscription, schema: schema, context: context, in: db)
        }
    }

    /// The values of `live_row`, a class table's row (PostgreSQL types its columns as `PostgresClassTable` does).
    private static let liveRow = "(?, ?, ?, ?, ?, ?)"
    private static let typedLiveRow = "(CAST(? AS text), CAST(? AS bigint), CAST(? AS bigint), CAST(? AS text), CAST(? AS text), CAST(? AS jsonb))"

    /// Which of `versions` the subscriber may see through the subscription (nil versions never match).
    /// - Parameter memo: one change's shared answers: subscriptions with the same query and audience are evaluated once.
    /// - Throws: `ParseError` when the subscription's permissions no longer hold (a CLP changed).
    func matches(_ subscription: LiveQueryClient.Subscription, isMaster: Bool, versions: [StoredObject?],
                 memo: LiveQueryChangeMemo? = nil) throws -> [Bool] {
        if let memo {
            return try memo.matches(subscription, isMaster: isMaster, versions: versions) {
                try matches(subscription, isMaster: isMaster, versions: versions)
            }
        }
        let context = context(isMaster: isMaster, user: subscription.user)
        return try storage.read { db in
            guard var schema = try Self.schema(of: subscription.className, in: db) else { return versions.map { _ in false } }
            schema.typedColumns = []  // `live_row` has the class table's own columns only (`PostgresTypedColumns`).
            let condition = try condition(for: subscription, schema: schema, context: context, in: db)
            let sql = "WITH live_row(objectId, createdAt, updatedAt, acl, rperm, data) AS (VALUES \(db.dialect == .sqlite ? Self.liveRow : Self.typedLiveRow)) "
                + "SELECT 1 FROM live_row WHERE \(condition.sql)"
            return try versions.map { version in
                guard let version else { return false }
                return try !db.fetchRows(sql, ObjectStore.arguments(for: version) + condition.arguments, cacheable: false).isEmpty
            }
        }
    }

    /// The objects the subscription matches now, as its REST find would return them (`where`, CLP, ACL),
    /// at most `limit` of them, oldest first (the `query` op).
    /// - Throws: `ParseError` when the subscription's permissions no longer hold.
    func results(_ subscription: LiveQueryClient.Subscription, isMaster: Bool, limit: Int) throws -> [StoredObject] {
        let context = context(isMaster: isMaster, user: subscription.user)
        let rows = try storage.read { db -> [StoredRow] in
            guard let schema = try Self.schema(of: subscription.className, in: db) else { return [] }
            let condition = try condition(for: subscription, schema: schema, context: context, in: db)
            return try db.fetchRows(
                "SELECT objectId, createdAt, updatedAt, acl, data FROM \(schema.tableName) WHERE \(condition.sql) ORDER BY createdAt, objectId LIMIT ?",
                condition.arguments + [.integer(Int64(limit))], cacheable: false).map { StoredRow($0, className: subscription.className) }
        }
        return try rows.map { try $0.decoded() }
    }

    /// Whether the subscriber may read `object` at all (its ACL and the class's permissions), whatever the `where`.
    func mayRead(_ object: StoredObject, _ subscription: LiveQueryClient.Subscription, isMaster: Bool,
                 memo: LiveQueryChangeMemo? = nil) throws -> Bool {
        let anything = LiveQueryClient.Subscription(
            requestId: subscription.requestId, className: subscription.className, whereClause: [:], constraint: .and([]),
            keys: nil, watch: nil, user: subscription.user)
        return try matches(anything, isMaster: isMaster, versions: [object], memo: memo)[0]
    }

    /// The object as this subscriber may see it: protected fields removed, and with `keys` only the
    /// built-in fields and those keys (parse-server's `_toJSONWithFields`), with its `className`.
    /// `identityOnly`: the built-in fields alone (no ACL either).
    func visibleJSON(_ object: StoredObject, _ subscription: LiveQueryClient.Subscription, isMaster: Bool,
                     identityOnly: Bool = false, memo: LiveQueryChangeMemo? = nil) -> JSON {
        if let memo {
            return memo.shown(object, subscription, isMaster: isMaster, identityOnly: identityOnly) {
                visibleJSON(object, subscription, isMaster: isMaster, identityOnly: identityOnly)
            }
        }
        let context = context(isMaster: isMaster, user: subscription.user)
        let protected = (try? storage.read { db in try Self.schema(of: subscription.className, in: db) })
            .flatMap { $0 }.map { ClassPermissions.protectedFields($0, context: context) } ?? []
        // As REST reads: a user's own record whole, others' without `authData` (and `email`, a protected field).
        let hidden = ClassRoutes.hiddenKeys(of: object.objectId, className: subscription.className, protected: protected, context: context)
        var shown = object
        if identityOnly {
            shown.fields = [:]
            shown.acl = nil
        }
        guard case .object(var members) = shown.wireJSON(keys: subscription.keys.map(Set.init), excluding: hidden) else {
            return .null
        }
        members["className"] = .string(subscription.className)
        return .object(members)
    }

    /// The subscription's `where` as its REST find would run it, plus the subscriber's ACL filter, as SQL.
    private func condition(for subscription: LiveQueryClient.Subscription, schema: ClassSchema, context: RequestContext,
                           in db: any SQLQuerying) throws -> SQLFragment {
        let access = QueryAccess(context: context)
        try access.checkQueryable(subscription.constraint, in: schema)
        if let watch = subscription.watch {  // Watching a field reveals when it changes: it must be readable too.
            try access.checkSortable(watch.map { SortKey(key: $0, descending: false) }, constraint: subscription.constraint, in: schema)
        }
        let constraint = try access.restrict(subscription.constraint, Self.operation(for: subscription.whereClause), in: schema)
        let lookup = { (className: String) in try SchemaStore.load(className, in: db) }
        let filter: SQLFragment
        switch db.dialect {
        case .sqlite:
            var compiler = QueryCompiler(schema: schema, lookup: lookup, readableBy: context.aclSubjects,
                                         authorizeSubquery: access.subqueryAuthorizer)
            compiler.narrowsTextSearch = false  // The condition tests a version given as values (`live_row`), not a table row.
            filter = try compiler.compile(constraint)
        case .postgres:
            filter = try PostgresConstraintCompiler(compiler: PostgresQueryCompiler(
                schema: schema, lookup: lookup, readableBy: context.aclSubjects, authorizeSubquery: access.subqueryAuthorizer))
                .compile(constraint)
        }
        let acl = QueryCompiler.readFilter(context.aclSubjects)
        return SQLFragment(sql: "(\(filter.sql)) AND \(acl.sql)", arguments: filter.arguments + acl.arguments)
    }
}
