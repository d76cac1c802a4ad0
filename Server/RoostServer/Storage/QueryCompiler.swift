import RoostCore

/// A piece of SQL with its bound values.
struct SQLFragment {
    var sql: String
    var arguments: [SQLValue]
}

/// Compiles a `QueryConstraint` into a SQL `WHERE` expression over one class table.
///
/// Values are always bound. Field names reach the SQL text only as JSON paths, and only after
/// `QueryConstraint.parse` checked them against `^[A-Za-z][A-Za-z0-9_]*$` (dot-separated).
struct QueryCompiler {
    let schema: ClassSchema
    /// Finds the schemas of subquery classes (in the same snapshot as the main query).
    var lookup: (String) throws -> ClassSchema? = { _ in nil }
    /// The caller's ACL subjects: subqueries see only what the caller may read.
    var readableBy: [String]?
    /// Checks that the caller may query a subquery's class and returns the subquery's constraint as
    /// the caller may run it (class-level `find` permission, `pointerFields`, fields it may not read).
    var authorizeSubquery: SubqueryAuthorizer = { _, subquery, _ in subquery.constraint }
    /// Whether `$text` tests only the rows the field's text index finds (`TextIndex`): that test names the class
    /// table's rowid, so a condition run over something else (LiveQuery's versions of one object) must not use it.
    var narrowsTextSearch = true

    func compile(_ constraint: QueryConstraint) throws -> SQLFragment {
        switch constraint {
        case .relatedTo(let className, let objectId, let key):
            return SQLFragment(
                sql: "objectId IN (SELECT relatedId FROM _join WHERE owningClass = ? AND field = ? AND owningId = ?)",
                arguments: [.text(className), .text(key), .text(objectId)])
        case .and(let parts): return try join(parts, with: "AND", empty: "1")
        case .or(let parts): return try join(parts, with: "OR", empty: "0")
        case .nor(let parts):
            let inner = try join(parts, with: "OR", empty: "0")
            return SQLFragment(sql: "NOT COALESCE((\(inner.sql)), 0)", arguments: inner.arguments)
        case .field(let key, let condition): return try compile(key, condition)
        }
    }

    /// `ORDER BY` terms; keys not in the schema are dropped, as Parse does. `$score` (either
    /// direction, as MongoDB's text score) puts the best `$text` matches first.
    func orderBy(_ keys: [SortKey], constraint: QueryConstraint) -> SQLFragment {
        var terms: [String] = [], arguments: [SQLValue] = []
        for sort in keys {
            let direction = sort.descending ? " DESC" : " ASC"
            switch sort.key {
            case "objectId", "createdAt", "updatedAt": terms.append(sort.key + direction)
            case SortKey.textScore:
                guard let score = textScore(in: constraint) else { continue }
                terms.append(score.sql + " DESC")
                arguments += score.arguments
            default:
                let root = String(sort.key.split(separator: ".")[0])
                guard schema.fields[root] != nil else { continue }
                terms.append((numberExpression(sort.key) ?? "json_extract(data, '\(jsonPath(sort.key))')") + direction)
            }
        }
        return SQLFragment(sql: terms.joined(separator: ", "), arguments: arguments)
    }

    private func join(_ parts: [QueryConstraint], with op: String, empty: String) throws -> SQLFragment {
        guard !parts.isEmpty else { return SQLFragment(sql: empty, arguments: []) }
        var sql: [String] = []
        var arguments: [SQLValue] = []
        for part in parts {
            let fragment = try compile(part)
            sql.append("(\(fragment.sql))")
            arguments += fragment.arguments
        }
        return SQLFragment(sql: sql.joined(separator: " \(op) "), arguments: arguments)
    }

    /// The SQL expression and bound value that compare a key against `value`
    /// (Dates by their ISO text, Pointers by objectId, built-in dates by milliseconds).
    func operand(_ key: String, _ value: JSON) -> (String, SQLValue) {
        switch key {
        case "objectId":
            return ("objectId", value.stringValue.map(SQLValue.text) ?? .null)
        case "createdAt", "updatedAt":
            let date = value["iso"]?.stringValue.flatMap(ParseDate.init(iso:)) ?? value.stringValue.flatMap(ParseDate.init(iso:))
            return (key, date.map { .integer($0.millisecondsSince1970) } ?? .null)
        default:
            let path = jsonPath(key)
            switch value {
            case .string(let text) where text.utf8.contains(0):
                // json_extract stops at NUL; `->` keeps the JSON text, which we match encoded.
                return ("(data -> '\(path)')", .text(value.jsonText))
            case .string(let text): return ("json_extract(data, '\(path)')", .text(text))
            case .number(let number): return (numberExpression(key) ?? "json_extract(data, '\(path)')", .real(number))
            case .bool(let flag): return ("json_extract(data, '\(path)')", .integer(flag ? 1 : 0))
            case .null: return ("json_extract(data, '\(path)')", .null)
            case .object(let members):
                switch members["__type"]?.stringValue {
                case "Date": return ("json_extract(data, '\(path).iso')", members["iso"]?.stringValue.map(SQLValue.text) ?? .null)
                case "Pointer": return ("json_extract(data, '\(path).objectId')", members["objectId"]?.stringValue.map(SQLValue.text) ?? .null)
                default: return ("json_extract(data, '\(path)')", .text(value.jsonText))
                }
            case .array, .encodedFragment: return ("json_extract(data, '\(path)')", .text(value.jsonText))
            }
        }
    }

    func isArrayField(_ key: String) -> Bool { schema.fields[key] == .array }

    /// A Number field no index covers reads through `roost_number`, which a scan pays less for than `json_extract`
    /// (see `TopLevelNumber`); a field an index covers keeps `json_extract`, the expression the index is built on.
    func numberExpression(_ key: String) -> String? {
        guard schema.view == nil, schema.fields[key] == .number, !IndexStore.coversField(key, in: schema) else { return nil }
        return "roost_number(data, '\(key)')"  // A top-level name, checked by `QueryConstraint.parse`: nothing to escape.
    }

    /// SQLite compares across storage classes (`true` is 1, text sorts after numbers) but Parse never
    /// matches a value of another type: the `json_type` test that keeps numbers to numbers and
    /// strings to strings. `typeExpression` is `json_type(...)` or a json_each row's `type`.
    func typeGuard(_ typeExpression: String, for value: JSON) -> String? {
        switch value {
        case .number: "\(typeExpression) IN ('integer', 'real')"
        case .string: "\(typeExpression) = 'text'"
        default: nil
        }
    }

    /// The type test for comparing a top-level key with `value`. A field the schema records as that
    /// type needs none (every stored value has it, so the comparison can stay index-only); one
    /// recorded as another type never matches; only paths inside Objects need `json_type` at run time.
    func fieldGuard(_ key: String, _ value: JSON) -> String? {
        if isBuiltIn(key) { return nil }
        let kind: FieldType? = value.numberValue != nil ? .number : value.stringValue != nil ? .string : nil
        guard let kind else { return nil }
        if let recorded = schema.fields[key] { return recorded == kind ? nil : "0" }
        return typeGuard("json_type(data, '\(jsonPath(key))')", for: value)
    }

    func isBuiltIn(_ key: String) -> Bool { key == "objectId" || key == "createdAt" || key == "updatedAt" }

    /// The expression for one element of an array field, in a `json_each(...) AS element` scan.
    func elementExpression(for value: JSON) -> String {
        switch value {
        case .string(let text) where text.utf8.contains(0): return "(data -> element.fullkey)"
        default: break
        }
        // `CASE` so that string elements are never read as JSON text (json_extract would refuse them).
        switch value["__type"]?.stringValue {
        case "Pointer": return "(CASE WHEN element.type = 'object' THEN json_extract(element.value, '$.objectId') END)"
        case "Date": return "(CASE WHEN element.type = 'object' THEN json_extract(element.value, '$.iso') END)"
        default: return "element.value"
        }
    }

    /// `guard AND sql` when there is a guard.
    func guarded(_ sql: String, _ guardSQL: String?) -> String {
        guardSQL.map { "\($0) AND \(sql)" } ?? sql
    }

    private func compile(_ key: String, _ condition: FieldCondition) throws -> SQLFragment {
        try checkAtoms(key, condition)
        switch condition {
        case .equalTo(let value):
            try refuseRelativeTime(key, value)
            return equality(key, value)
        case .notEqualTo(let value):
            try refuseRelativeTime(key, value)
            let equal = equality(key, pointersForIds(key, [value])[0])
            // A missing field is "not equal" too: NULL comparisons count as false.
            return SQLFragment(sql: "NOT COALESCE((\(equal.sql)), 0)", arguments: equal.arguments)
        case .lessThan(let value): return comparison(key, "<", try resolvingRelativeTime(key, value, "$lt"))
        case .lessThanOrEqualTo(let value): return comparison(key, "<=", try resolvingRelativeTime(key, value, "$lte"))
        case .greaterThan(let value): return comparison(key, ">", try resolvingRelativeTime(key, value, "$gt"))
        case .greaterThanOrEqualTo(let value): return comparison(key, ">=", try resolvingRelativeTime(key, value, "$gte"))
        case .containedIn(let values):
            return try membership(key, pointersForIds(key, values))
        case .notContainedIn(let values):
            let inner = try membership(key, pointersForIds(key, values))
            return SQLFragment(sql: "NOT COALESCE((\(inner.sql)), 0)", arguments: inner.arguments)
        case .containsAll, .containedBy, .containsAllMatching, .matchesRegex, .matchesKeyInQuery, .doesNotMatchKeyInQuery, .matchesQuery,
            .doesNotMatchQuery, .nearSphere, .withinBox, .withinPolygon, .polygonContains, .withinCenterSphere,
            .matchesText:
            return try compileAdvanced(key, condition)
        case .exists(let flag):
            switch key {
            case "objectId", "createdAt", "updatedAt": return SQLFragment(sql: flag ? "1" : "0", arguments: [])
            default:
                if isDotPath(key) {
                    let exists = dotPathExists(key)
                    return flag ? exists : SQLFragment(sql: "NOT COALESCE((\(exists.sql)), 0)", arguments: exists.arguments)
                }
                let test = "json_type(data, '\(jsonPath(key))') IS \(flag ? "NOT " : "")NULL"
                return SQLFragment(sql: test, arguments: [])
            }
        }
    }

    func equality(_ key: String, _ value: JSON) -> SQLFragment {
        if case .relation = schema.fields[key], value["__type"]?.stringValue == "Pointer", let id = value["objectId"]?.stringValue {
            // Owners whose relation holds the object.
            return SQLFragment(
                sql: "objectId IN (SELECT owningId FROM _join WHERE owningClass = ? AND field = ? AND relatedId = ?)",
                arguments: [.text(schema.className), .text(key), .text(id)])
        }
        if value == .null {
            if ["objectId", "createdAt", "updatedAt"].contains(key) { return SQLFragment(sql: "0", arguments: []) }
            let type = "json_type(data, '\(jsonPath(key))')"
            return SQLFragment(sql: "\(type) IS NULL OR \(type) = 'null'", arguments: [])
        }
        let (expression, bound) = operand(key, value)
        if isArrayField(key) || isDotPath(key), value.arrayValue == nil {
            // An array matches when any element equals the value.
            let test: String
            var arguments: [SQLValue] = [bound]
            if let flag = value.boolValue {
                test = "element.type = ?"
                arguments = [.text(flag ? "true" : "false")]
            } else {
                test = guarded("\(elementExpression(for: value)) = ?", typeGuard("element.type", for: value))
            }
            if isArrayField(key) { return SQLFragment(sql: anyElement(key, test), arguments: arguments) }
            return scalarOrAnyElement(key, scalar: scalarEquality(key, value, expression, bound),
                                      element: SQLFragment(sql: test, arguments: arguments))
        }
        return scalarEquality(key, value, expression, bound)
    }

    private func scalarEquality(_ key: String, _ value: JSON, _ expression: String, _ bound: SQLValue) -> SQLFragment {
        if let flag = value.boolValue, !isBuiltIn(key) {
            if schema.fields[key] == .boolean {
                // Every stored value is a Boolean: compare as json_extract does (1/0), so an index applies.
                return SQLFragment(sql: "json_extract(data, '\(jsonPath(key))') = ?", arguments: [.integer(flag ? 1 : 0)])
            }
            return SQLFragment(sql: "json_type(data, '\(jsonPath(key))') = ?", arguments: [.text(flag ? "true" : "false")])
        }
        let typeTest = fieldGuard(key, value)
        return SQLFragment(sql: guarded("\(expression) = ?", typeTest), arguments: [bound])
    }

    /// `$in`: one bound JSON array read through `json_each`, so the SQL stays the same size however
    /// many values there are. Values of mixed kinds (or `null`) fall back to OR-ed equalities.
    private func membership(_ key: String, _ values: [JSON]) throws -> SQLFragment {
        guard !values.isEmpty else { return SQLFragment(sql: "0", arguments: []) }
        if case .relation = schema.fields[key] {
            // Owners whose relation holds any of the pointed objects.
            let ids = JSON.array(values.compactMap { $0["objectId"] }).jsonText
            return SQLFragment(
                sql: "objectId IN (SELECT owningId FROM _join WHERE owningClass = ? AND field = ? AND relatedId IN (SELECT value FROM json_each(?)))",
                arguments: [.text(schema.className), .text(key), .text(ids)])
        }
        func kind(_ value: JSON) -> String {
            switch value {
            case .number: "number"
            case .string(let text): text.utf8.contains(0) ? "other" : "string"
            default: value["__type"]?.stringValue.flatMap { ["Date", "Pointer"].contains($0) ? $0 : nil } ?? "other"
            }
        }
        // One `json_each` list per kind of value; values of no listable kind (null, booleans, objects) are OR-ed.
        let groups = Dictionary(grouping: values, by: kind)
        if groups.count > 1 || groups["other"] != nil {
            var parts: [QueryConstraint] = []
            for (group, members) in groups.sorted(by: { $0.key < $1.key }) {
                if group == "other" {
                    guard members.count <= 100 else {
                        throw ParseError(.invalidQuery, "$in and $nin take at most 100 null, Boolean or object values.")
                    }
                    parts += members.map { .field(key, .equalTo($0)) }
                } else {
                    parts.append(.field(key, .containedIn(members)))
                }
            }
            return try compile(.or(parts))
        }
        let operands = values.map { operand(key, $0) }
        let expression = operands[0].0
        let list = JSON.array(operands.map { _, bound in
            switch bound {
            case .text(let text): .string(text)
            case .integer(let number): .number(Double(number))
            case .real(let number): .number(number)
            case .null: .null
            }
        }).jsonText
        let elementTest = SQLFragment(
            sql: guarded("\(elementExpression(for: values[0])) IN (SELECT value FROM json_each(?))", typeGuard("element.type", for: values[0])),
            arguments: [.text(list)])
        if isArrayField(key) { return SQLFragment(sql: anyElement(key, elementTest.sql), arguments: elementTest.arguments) }
        let typeTest = fieldGuard(key, values[0])
        let scalar = SQLFragment(sql: guarded("\(expression) IN (SELECT value FROM json_each(?))", typeTest), arguments: [.text(list)])
        return isDotPath(key) ? scalarOrAnyElement(key, scalar: scalar, element: elementTest) : scalar
    }

    /// `$lt`, `$gt`, ...: on an array (a field, or where a dot path ends), any element may satisfy it, as in MongoDB.
    private func comparison(_ key: String, _ op: String, _ value: JSON) -> SQLFragment {
        let (expression, bound) = operand(key, value)
        let elementTest = SQLFragment(
            sql: guarded("\(elementExpression(for: value)) \(op) ?", typeGuard("element.type", for: value)), arguments: [bound])
        if isArrayField(key) { return SQLFragment(sql: anyElement(key, elementTest.sql), arguments: elementTest.arguments) }
        let typeTest = fieldGuard(key, value)
        let scalar = SQLFragment(sql: guarded("\(expression) \(op) ?", typeTest), arguments: [bound])
        return isDotPath(key) ? scalarOrAnyElement(key, scalar: scalar, element: elementTest) : scalar
    }
}

/// What `ObjectStore` asks of a query compiler, whichever database it writes for (`QueryCompiler` for SQLite,
/// `PostgresConstraintCompiler` for PostgreSQL): fragments with `?` marks that the connection binds.
protocol ConstraintCompiling {
    func compile(_ constraint: QueryConstraint) throws -> SQLFragment
    /// `ORDER BY` terms (empty when none apply).
    func orderBy(_ keys: [SortKey], constraint: QueryConstraint) -> SQLFragment
    /// Nearest first, for a `$nearSphere` query without an order of its own.
    func nearestFirst(_ constraint: QueryConstraint) -> SQLFragment?
}

extension QueryCompiler: ConstraintCompiling {}
