import RoostCore

/// What one caller's query may touch in one class, checked once per query (and per subquery) before any SQL runs.
///
/// A query is the operation Parse would call it (`find`, `get` for a `where` of exactly one objectId,
/// `count` for its count), so the class-level permission of that operation applies, and its
/// `pointerFields` become part of the constraint. A field the caller may not read may not be
/// filtered, sorted or selected on either, at any depth: a field one can match value by value is a
/// field one can read (Parse's `denyProtectedFields` answers 119 for a top-level key; here `$or`,
/// `$and`, `$nor`, dot paths, `order` and subqueries into the class are held to it too).
struct QueryAccess {
    let context: RequestContext

    /// Checks that the caller may run `operation` on the class and returns `constraint` restricted to
    /// the objects the grant covers.
    /// - Throws: `ParseError` 119 (101 for `requiresAuthentication` without a user), as `ClassPermissions.check`.
    func restrict(_ constraint: QueryConstraint, _ operation: ClassPermissions.Operation, in schema: ClassSchema) throws -> QueryConstraint {
        let grant = try ClassPermissions.check(operation, schema, context: context)
        guard let owned = ClassPermissions.constraint(for: grant, context: context) else { return constraint }
        return .and([constraint, owned])
    }

    /// - Throws: `ParseError` 119 when a condition names a field the caller may not read.
    func checkQueryable(_ constraint: QueryConstraint, in schema: ClassSchema) throws {
        let hidden = unqueryableFields(schema, constraint: constraint)
        guard !hidden.isEmpty else { return }
        try constraint.forEachKey { key in try refuse(key, if: hidden, in: schema) }
    }

    /// - Throws: `ParseError` 105 for `authData.<provider>.id` (refused to everyone, as Parse), 119 for
    ///   a field the caller may not read.
    func checkSortable(_ order: [SortKey], constraint: QueryConstraint, in schema: ClassSchema) throws {
        for sort in order where QueryAccess.isAuthDataId(sort.key) {
            throw ParseError(.invalidKeyName, "Cannot sort by \(sort.key)")
        }
        guard !order.isEmpty else { return }
        let hidden = unqueryableFields(schema, constraint: constraint)
        for sort in order { try refuse(sort.key, if: hidden, in: schema) }
    }

    /// For `FindQuery.authorizeSubquery`: a subquery is a find of the caller's on its class, with
    /// everything a direct find checks; `$select`'s key is read, so it must be readable too.
    var subqueryAuthorizer: SubqueryAuthorizer {
        { schema, subquery, selectedKey in
            try checkQueryable(subquery.constraint, in: schema)
            if let selectedKey { try refuse(selectedKey, if: unqueryableFields(schema, constraint: subquery.constraint), in: schema) }
            return try restrict(subquery.constraint, .find, in: schema)
        }
    }

    /// The fields of `schema` the caller may not query: its protected fields (on `_User` other users' `email`
    /// among them, unless an entry shows it) and, on `_User`, everyone's `authData` (the master key excepted). As
    /// Parse, a query pinned to the caller's own objectId is not held to protected fields; `authData` stays out of reach.
    func unqueryableFields(_ schema: ClassSchema, constraint: QueryConstraint) -> Set<String> {
        guard !context.isMaster else { return [] }
        let isOwnObject = context.user.map { constraint.pinsObjectId(to: $0.id) } ?? false
        var hidden = isOwnObject ? [] : ClassPermissions.protectedFields(schema, context: context)
        if schema.className == UserStore.className { hidden.insert(UserStore.authDataField) }
        return hidden
    }

    private func refuse(_ key: String, if hidden: Set<String>, in schema: ClassSchema) throws {
        let root = key.split(separator: ".", maxSplits: 1).first.map(String.init) ?? key
        if hidden.contains(root) {
            throw ParseError(.operationForbidden, "This user is not allowed to query \(root) on class \(schema.className)")
        }
    }

    /// `authData.<provider>.id`, which Parse never sorts by, nor updates alone (`DatabaseController.update`).
    static func isAuthDataId(_ key: String) -> Bool {
        let parts = key.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 3 && parts[0] == "authData" && parts[2] == "id"
    }
}

extension QueryConstraint {
    /// Calls `body` with the key of every condition, at every level of `$and`/`$or`/`$nor`
    /// (subqueries are checked against their own class when they are compiled).
    func forEachKey(_ body: (String) throws -> Void) rethrows {
        switch self {
        case .and(let parts), .or(let parts), .nor(let parts): for part in parts { try part.forEachKey(body) }
        case .field(let key, _): try body(key)
        case .relatedTo: break
        }
    }

    /// Whether the query asks for one objectId at its top level (`{"objectId": id, …}`), as Parse's
    /// `addProtectedFields` tests `query.objectId`.
    func pinsObjectId(to id: String) -> Bool {
        switch self {
        case .field("objectId", .equalTo(.string(let value))): value == id
        case .and(let parts): parts.contains { $0.pinsObjectId(to: id) }
        default: false
        }
    }
}
