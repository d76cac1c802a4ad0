import RoostCore

/// The fields a query filters or sorts on in a shape an index on one field can answer, each with the
/// expression that index must cover: the very one `QueryCompiler` emits for it, so SQLite's planner uses it.
enum AutoIndexCandidates {
    /// Top-level conditions only (a branch of `$or` alone cannot use one index) plus the first sort key.
    static func fields(of query: FindQuery, in schema: ClassSchema) -> [String] {
        var fields: [String] = []
        func add(_ field: String) { if !fields.contains(field) { fields.append(field) } }
        for (key, condition) in topLevelConditions(query.constraint) where isIndexable(condition, key, schema) {
            add(key)
        }
        if let first = query.order.first, sortExpression(first.key, in: schema) != nil { add(first.key) }
        return fields
    }

    /// The expression an automatic index on `field` covers, or nil when none would help: the compiler
    /// compares these fields through it (for Dates, `.iso`; sorting a Date reads the whole object, so a
    /// Date index serves its filters only, which is where a scan costs).
    static func expression(for field: String, in schema: ClassSchema, dialect: SQLDialect = .sqlite) -> String? {
        switch field {
        case "createdAt", "updatedAt": return field
        default:
            switch schema.fields[field] {
            case .string?, .number?, .boolean?, .date?: return IndexStore.expression(for: field, in: schema, dialect: dialect)
            default: return nil  // objectId is unique already; Pointers are always indexed; others compile otherwise.
            }
        }
    }

    private static func sortExpression(_ key: String, in schema: ClassSchema) -> String? {
        if case .date? = schema.fields[key] { return nil }
        return expression(for: key, in: schema)
    }

    private static func topLevelConditions(_ constraint: QueryConstraint) -> [(String, FieldCondition)] {
        switch constraint {
        case .field(let key, let condition): return [(key, condition)]
        case .and(let parts): return parts.flatMap(topLevelConditions)
        default: return []
        }
    }

    /// Conditions the compiler turns into `expression op ?` or `expression IN (...)`, with no type test in front.
    private static func isIndexable(_ condition: FieldCondition, _ key: String, _ schema: ClassSchema) -> Bool {
        guard expression(for: key, in: schema) != nil else { return false }
        switch condition {
        case .equalTo(let value), .lessThan(let value), .lessThanOrEqualTo(let value),
             .greaterThan(let value), .greaterThanOrEqualTo(let value):
            return value != .null && value.arrayValue == nil
        case .containedIn(let values): return !values.isEmpty
        default: return false
        }
    }
}
