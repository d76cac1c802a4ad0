import RoostCore

/// Array, regex, subquery and geo operators.
extension QueryCompiler {
    func compileAdvanced(_ key: String, _ condition: FieldCondition) throws -> SQLFragment {
        switch condition {
        case .containsAll(let values):
            guard !values.isEmpty else { return SQLFragment(sql: "0", arguments: []) }
            return try compile(.and(values.map { .field(key, .equalTo($0)) }))
        case .containsAllMatching(let regexes):
            return try compile(.and(regexes.map { .field(key, $0) }))
        case .containedBy(let values):
            let list = JSON.array(values.map { $0["objectId"] ?? $0 }).jsonText
            let element = values.first.map(elementExpression) ?? "element.value"
            return SQLFragment(
                sql: "NOT EXISTS (SELECT 1 FROM json_each(data, '\(jsonPath(key))') AS element WHERE \(element) NOT IN (SELECT value FROM json_each(?)))",
                arguments: [.text(list)])
        case .matchesRegex(let pattern, let options):
            // MongoDB's limit; it also bounds what each reader's cache of compiled patterns holds.
            guard pattern.utf8.count <= CompiledRegex.maximumPatternBytes else {
                throw ParseError(.invalidQuery, "bad regex: longer than \(CompiledRegex.maximumPatternBytes) bytes")
            }
            guard CompiledRegex.accepts(pattern: pattern, options: options) else { throw ParseError(.invalidQuery, "bad regex: \(pattern)") }
            if isArrayField(key) {  // Any string element matches, as MongoDB does.
                return SQLFragment(
                    sql: "EXISTS (SELECT 1 FROM json_each(data, '\(jsonPath(key))') AS element WHERE element.type = 'text' AND roost_regexp(element.value, ?, ?))",
                    arguments: [.text(pattern), .text(options)])
            }
            let (expression, _) = operand(key, .string(""))
            let scalar = SQLFragment(sql: "roost_regexp(\(expression), ?, ?)", arguments: [.text(pattern), .text(options)])
            guard isDotPath(key) else { return scalar }
            // A dot path ending at an array matches through its string elements, never through the array's JSON text.
            return scalarOrAnyElement(
                key, scalar: SQLFragment(sql: "json_type(data, '\(jsonPath(key))') = 'text' AND \(scalar.sql)", arguments: scalar.arguments),
                element: SQLFragment(sql: "element.type = 'text' AND roost_regexp(element.value, ?, ?)", arguments: scalar.arguments))
        case .matchesText(let search):
            let test: SQLFragment
            if isArrayField(key) {  // Any string element matches, as a MongoDB text index on an array.
                test = SQLFragment(
                    sql: "EXISTS (SELECT 1 FROM json_each(data, '\(jsonPath(key))') AS element WHERE element.type = 'text' AND roost_text_score(element.value, ?, ?, ?) > 0)",
                    arguments: SQLFunctions.textScoreArguments(search))
            } else {
                let score = textScore(key, search)
                test = SQLFragment(sql: score.sql + " > 0", arguments: score.arguments)
            }
            // With a text index, only the rows it finds are tested (see `TextIndex`).
            guard narrowsTextSearch, let narrowing = TextIndex.narrowing(key, search, in: schema) else { return test }
            return SQLFragment(sql: "\(narrowing.sql) AND \(test.sql)", arguments: narrowing.arguments + test.arguments)
        case .matchesKeyInQuery(let subKey, let subquery):
            return try selectKey(key, subKey, subquery, negated: false)
        case .doesNotMatchKeyInQuery(let subKey, let subquery):
            return try selectKey(key, subKey, subquery, negated: true)
        case .matchesQuery(let subquery):
            return try inQuery(key, subquery, negated: false)
        case .doesNotMatchQuery(let subquery):
            return try inQuery(key, subquery, negated: true)
        case .nearSphere(let point, let maxDistance):
            let distance = geoDistance(key, point)
            guard let maxDistance else { return SQLFragment(sql: "\(distance.sql) IS NOT NULL", arguments: distance.arguments) }
            return SQLFragment(sql: "\(distance.sql) <= ?", arguments: distance.arguments + [.real(maxDistance)])
        case .withinBox(let southWest, let northEast):
            let (lat, lng) = coordinates(key)
            return SQLFragment(
                sql: "\(lat) BETWEEN ? AND ? AND \(lng) BETWEEN ? AND ?",
                arguments: [.real(southWest.latitude), .real(northEast.latitude), .real(southWest.longitude), .real(northEast.longitude)])
        case .withinPolygon(let points):
            let (lat, lng) = coordinates(key)
            let polygon = JSON.array(points.map { [.number($0.latitude), .number($0.longitude)] }).jsonText
            return SQLFragment(sql: "roost_geo_in_polygon(\(lat), \(lng), ?)", arguments: [.text(polygon)])
        case .withinCenterSphere(let center, let radius):
            let distance = geoDistance(key, center)
            return SQLFragment(sql: "\(distance.sql) <= ?", arguments: distance.arguments + [.real(radius)])
        case .polygonContains(let point):
            // A Polygon's `coordinates` are `[[lat, lng], ...]`, as `roost_geo_in_polygon` reads them.
            let path = jsonPath(key)
            return SQLFragment(
                sql: "CASE WHEN json_extract(data, '\(path).__type') = 'Polygon' THEN roost_geo_in_polygon(?, ?, json_extract(data, '\(path).coordinates')) ELSE 0 END",
                arguments: [.real(point.latitude), .real(point.longitude)])
        default:
            throw ParseError(.invalidQuery, "unsupported constraint on \(key)")
        }
    }

    /// `ORDER BY` for a top-level `$nearSphere` when the query names no order: nearest first.
    func nearestFirst(_ constraint: QueryConstraint) -> SQLFragment? {
        switch constraint {
        case .field(let key, .nearSphere(let point, _)):
            let distance = geoDistance(key, point)
            return SQLFragment(sql: distance.sql + " ASC", arguments: distance.arguments)
        case .and(let parts):
            return parts.lazy.compactMap(nearestFirst).first
        default:
            return nil
        }
    }

    /// The relevance of the query's `$text` search (`order=$score`).
    func textScore(in constraint: QueryConstraint) -> SQLFragment? {
        constraint.scoredTextSearch.map { textScore($0.key, $0.search) }
    }

    private func textScore(_ key: String, _ search: TextSearch) -> SQLFragment {
        SQLFragment(sql: "roost_text_score(json_extract(data, '\(jsonPath(key))'), ?, ?, ?)", arguments: SQLFunctions.textScoreArguments(search))
    }

    private func coordinates(_ key: String) -> (String, String) {
        ("json_extract(data, '\(jsonPath(key)).latitude')", "json_extract(data, '\(jsonPath(key)).longitude')")
    }

    private func geoDistance(_ key: String, _ point: GeoPoint) -> SQLFragment {
        let (lat, lng) = coordinates(key)
        return SQLFragment(sql: "roost_geo_distance(\(lat), \(lng), ?, ?)", arguments: [.real(point.latitude), .real(point.longitude)])
    }

    /// The class a subquery runs on and its constraint as the caller may run it there (both compilers ask this);
    /// `nil` when the class does not exist. Parse's `redirectClassNameForKey` runs it on the target class of that
    /// Relation field (a key that is not a Relation keeps the class).
    static func authorized(_ subquery: Subquery, selectedKey: String?, lookup: (String) throws -> ClassSchema?,
                           authorize: SubqueryAuthorizer) throws -> (schema: ClassSchema, constraint: QueryConstraint)? {
        guard var subSchema = try lookup(subquery.className) else { return nil }
        var subquery = subquery
        if let key = subquery.redirectKey, case .relation(let target)? = subSchema.fields[key] {
            guard let targetSchema = try lookup(target) else { return nil }
            subSchema = targetSchema
            subquery.className = target
        }
        return (subSchema, try authorize(subSchema, subquery, selectedKey))
    }

    /// The rows of a subquery's class the caller may find, as `FROM … WHERE …` SQL; `nil` when the class does not exist.
    /// - Parameter selectedKey: the key `$select`/`$dontSelect` reads.
    private func subquerySource(_ subquery: Subquery, selectedKey: String? = nil) throws
        -> (table: String, compiler: QueryCompiler, filter: SQLFragment)? {
        guard let (subSchema, constraint) = try Self.authorized(subquery, selectedKey: selectedKey, lookup: lookup,
                                                                authorize: authorizeSubquery) else { return nil }
        let compiler = QueryCompiler(schema: subSchema, lookup: lookup, readableBy: readableBy, authorizeSubquery: authorizeSubquery)
        let filter = try compiler.compile(constraint)
        let acl = QueryCompiler.readFilter(readableBy)
        return (subSchema.tableName, compiler,
                SQLFragment(sql: "(\(filter.sql)) AND \(acl.sql)", arguments: filter.arguments + acl.arguments))
    }

    /// `$inQuery`: a pointer (or an array of pointers) to one of the subquery's results.
    private func inQuery(_ key: String, _ subquery: Subquery, negated: Bool) throws -> SQLFragment {
        guard let source = try subquerySource(subquery) else { return SQLFragment(sql: negated ? "1" : "0", arguments: []) }
        let ids = "SELECT objectId FROM \(source.table) WHERE \(source.filter.sql)"
        let test: String
        if isArrayField(key) {
            test = "EXISTS (SELECT 1 FROM json_each(data, '\(jsonPath(key))') AS element WHERE json_extract(element.value, '$.objectId') IN (\(ids)))"
        } else {
            test = "json_extract(data, '\(jsonPath(key)).objectId') IN (\(ids))"
        }
        return SQLFragment(sql: negated ? "NOT COALESCE((\(test)), 0)" : test, arguments: source.filter.arguments)
    }

    /// `$select`: the field equals `subKey` of one of the subquery's results. Parse turns the selected values
    /// into an `$in`, which spreads an array value into its elements (`members`, an array of pointers, selects
    /// each pointer).
    private func selectKey(_ key: String, _ subKey: String, _ subquery: Subquery, negated: Bool) throws -> SQLFragment {
        guard QueryConstraint.isQueryableKey(subKey) else { throw ParseError(.invalidKeyName, "Invalid key name: \(subKey)") }
        guard let source = try subquerySource(subquery, selectedKey: subKey) else { return SQLFragment(sql: negated ? "1" : "0", arguments: []) }
        let (expression, _) = operand(key, .string(""))
        let values: SQLFragment
        if source.compiler.isBuiltIn(subKey) {
            values = SQLFragment(sql: "SELECT \(subKey) FROM \(source.table) WHERE \(source.filter.sql)", arguments: source.filter.arguments)
        } else {
            let path = "'\(jsonPath(subKey))'"
            values = SQLFragment(
                sql: """
                    SELECT json_extract(data, \(path)) FROM \(source.table) WHERE (\(source.filter.sql)) AND json_type(data, \(path)) IS NOT 'array' \
                    UNION ALL SELECT selected.value FROM \(source.table), json_each(\(source.table).data, \(path)) AS selected \
                    WHERE (\(source.filter.sql)) AND json_type(\(source.table).data, \(path)) = 'array'
                    """,
                arguments: source.filter.arguments + source.filter.arguments)
        }
        let test = "\(expression) IN (\(values.sql))"
        return SQLFragment(sql: negated ? "NOT COALESCE((\(test)), 0)" : test, arguments: values.arguments)
    }

    /// The ACL as part of the SQL `WHERE`: no ACL, or one that grants read to one of the subjects.
    ///
    /// `rperm` is the JSON array of readers, e.g. `["*","u1","role:Admins"]`; a subject matches as its
    /// quoted JSON string. Caller subjects (`*`, alphanumeric ids, role names of letters, digits,
    /// `_`, `-` and spaces) need no escaping, so the quoted form is exact, and `instr` spares a
    /// `json_each` scan per row. A row anyone may read has no `rperm` (`ReadPermission`), so `*` needs no test.
    static func readFilter(_ subjects: [String]?) -> SQLFragment {
        // Spelled so that PostgreSQL reads it too (`TRUE`, and `instr` as a number): `fetch` shares it.
        guard let subjects else { return SQLFragment(sql: "TRUE", arguments: []) }
        let named = subjects.filter { $0 != "*" }
        guard !named.isEmpty else { return SQLFragment(sql: "rperm IS NULL", arguments: []) }
        let tests = Array(repeating: "instr(rperm, ?) > 0", count: named.count).joined(separator: " OR ")
        return SQLFragment(sql: "(rperm IS NULL OR \(tests))", arguments: named.map { .text(JSON.string($0).jsonText) })
    }
}

extension QueryConstraint {
    /// The first `$text` search among the top-level conditions: the one `$score` ranks by.
    var scoredTextSearch: (key: String, search: TextSearch)? {
        switch self {
        case .field(let key, .matchesText(let search)): return (key, search)
        case .and(let parts): return parts.lazy.compactMap(\.scoredTextSearch).first
        default: return nil
        }
    }
}
