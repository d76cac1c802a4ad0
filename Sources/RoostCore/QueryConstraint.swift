/// A `where` clause as a typed tree, shared by the server (which compiles it to SQL) and the SDK
/// (which builds it).
public indirect enum QueryConstraint: Equatable, Sendable {
    case and([QueryConstraint])
    case or([QueryConstraint])
    case nor([QueryConstraint])
    /// A condition on one key: a field name, a dot path into an Object field, or
    /// `objectId`/`createdAt`/`updatedAt`.
    case field(String, FieldCondition)

    /// Matches everything.
    public static let all = QueryConstraint.and([])

    /// The number of nodes in the tree (a measure of the SQL expression's size).
    public var complexity: Int {
        switch self {
        case .and(let parts), .or(let parts), .nor(let parts): return parts.reduce(1) { $0 + $1.complexity }
        case .field: return 1
        }
    }

    /// The most nodes a `where` may have; SQLite refuses expressions much deeper than this.
    public static let maximumComplexity = 500
}

/// A condition on one field's value.
public enum FieldCondition: Equatable, Sendable {
    case equalTo(JSON)
    case notEqualTo(JSON)
    case lessThan(JSON)
    case lessThanOrEqualTo(JSON)
    case greaterThan(JSON)
    case greaterThanOrEqualTo(JSON)
    case containedIn([JSON])
    case notContainedIn([JSON])
    case exists(Bool)
}

extension QueryConstraint {
    /// Parses the JSON of a `where` parameter.
    /// - Throws: `ParseError` 102 for a malformed or unsupported constraint, 105 for a bad key name,
    ///   and `WireValue`'s errors for malformed values.
    public static func parse(where json: JSON) throws -> QueryConstraint {
        let constraint = try parseClause(json)
        guard constraint.complexity <= maximumComplexity else {
            throw ParseError(.invalidQuery, "The query is too complex: more than \(maximumComplexity) conditions.")
        }
        return constraint
    }

    private static func parseClause(_ json: JSON) throws -> QueryConstraint {
        guard case .object(let members) = json else {
            throw ParseError(.invalidQuery, "where must be a JSON object")
        }
        var parts: [QueryConstraint] = []
        for key in members.keys.sorted() {
            let value = members[key]!
            switch key {
            case "$or", "$and", "$nor":
                guard let clauses = value.arrayValue, !clauses.isEmpty else {
                    throw ParseError(.invalidQuery, "Bad \(key) format - use an array of at least 1 value.")
                }
                let parsed = try clauses.map { try parseClause($0) }
                parts.append(key == "$or" ? .or(parsed) : key == "$and" ? .and(parsed) : .nor(parsed))
            default:
                parts.append(contentsOf: try parseField(key, value))
            }
        }
        return parts.count == 1 ? parts[0] : .and(parts)
    }

    private static func parseField(_ key: String, _ value: JSON) throws -> [QueryConstraint] {
        if key == "ACL" { throw ParseError(.invalidQuery, "Cannot query on ACL.") }
        guard isQueryableKey(key) else { throw ParseError(.invalidKeyName, "Invalid key name: \(key)") }
        guard case .object(let members) = value, members["__type"] == nil,
            members.keys.contains(where: { $0.hasPrefix("$") })
        else {
            return [.field(key, .equalTo(try constraintValue(value)))]
        }
        var conditions: [QueryConstraint] = []
        for op in members.keys.sorted() {
            let operand = members[op]!
            let condition: FieldCondition
            switch op {
            case "$eq": condition = .equalTo(try constraintValue(operand))
            case "$ne": condition = .notEqualTo(try constraintValue(operand))
            case "$lt": condition = .lessThan(try constraintValue(operand))
            case "$lte": condition = .lessThanOrEqualTo(try constraintValue(operand))
            case "$gt": condition = .greaterThan(try constraintValue(operand))
            case "$gte": condition = .greaterThanOrEqualTo(try constraintValue(operand))
            case "$in", "$nin":
                guard let values = operand.arrayValue else { throw ParseError(.invalidJSON, "bad \(op) value") }
                let parsed = try values.map { try constraintValue($0) }
                condition = op == "$in" ? .containedIn(parsed) : .notContainedIn(parsed)
            case "$exists":
                guard let flag = operand.boolValue else { throw ParseError(.invalidJSON, "bad $exists value") }
                condition = .exists(flag)
            default:
                if op.hasPrefix("$") { throw ParseError(.invalidJSON, "bad constraint: \(op)") }
                // A plain key mixed with operators compares the plain part for equality, as Parse does.
                condition = .equalTo(try constraintValue(.object(members.filter { !$0.key.hasPrefix("$") })))
            }
            conditions.append(.field(key, condition))
        }
        return conditions
    }

    private static func constraintValue(_ value: JSON) throws -> JSON {
        try WireValue.validate(value).1
    }

    /// A field name, a dot path of field names, or one of the built-in keys.
    public static func isQueryableKey(_ key: String) -> Bool {
        if key == "objectId" || key == "createdAt" || key == "updatedAt" { return true }
        return key.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { Names.isValidIdentifier(String($0)) }
    }
}
