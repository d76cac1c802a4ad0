import RoostCore

/// A piece of PostgreSQL with its parameters, in order; `PostgresFragment.parameter` marks each one until
/// `numbered()` turns the marks into `$1`, `$2`, ... (so fragments combine in any order).
struct PostgresFragment {
    /// The mark's one byte (U+0001, which no statement of the compiler's holds otherwise).
    static let mark: UInt8 = 1
    static let parameter = String(UnicodeScalar(mark))
    var sql: String
    var parameters: [PostgresValue] = []

    /// `sql` with every `byte` made `replacement` (both ASCII), for swapping the marks with SQLite's `?`: byte by byte,
    /// since Foundation's `replacingOccurrences` took 6 % of roost's CPU for a PostgreSQL query (`perf`, wrk).
    static func replacing(_ byte: UInt8, with replacement: UInt8, in sql: String) -> String {
        var bytes = Array(sql.utf8)
        for index in bytes.indices where bytes[index] == byte { bytes[index] = replacement }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The SQL with `$n` placeholders, numbered from `first` (after the `first - 1` parameters already in a statement).
    func numbered(from first: Int = 1) -> String {
        var number = first
        var result = ""
        for character in sql {
            if String(character) == Self.parameter {
                result += "$\(number)"
                number += 1
            } else {
                result.append(character)
            }
        }
        return result
    }
}

/// Compiles a `QueryConstraint` into a PostgreSQL `WHERE` expression over one class table shaped as
/// `PostgresClassTable` makes it, `(objectId text, createdAt bigint, updatedAt bigint, acl text, rperm text, data jsonb)` (milliseconds, and
/// `rperm` the JSON array of readers or NULL for a publicly readable row, as the SQLite tables keep them; Relation pairs
/// in `_join (owningClass, field, owningId, relatedId)`; names unquoted, as the stores' shared SQL writes them), with the semantics of `QueryCompiler` (SQLite): values
/// of another type never match, a missing field is "not equal", an Array field matches through any element, Pointers
/// compare by objectId, Dates by their ISO text. `PostgresQueryParityTests` runs both on the same objects.
///
/// Covered: `$and $or $nor`, equality, `$ne $lt $lte $gt $gte $in $nin $exists $all $containedBy $regex`, `$relativeTime`
/// (its 107s, and Parse's `bad atom` ones, are `QueryCompiler`'s own checks, shared), dot paths (into Objects,
/// numeric parts index Arrays, an Array where a path ends matches through its elements, Arrays of Objects on the way
/// are crossed), Relation fields and `$relatedTo`, `$inQuery $notInQuery $select $dontSelect` (with the caller's read
/// permission and `authorizeSubquery`), geo (`$nearSphere $within $geoWithin`, in plain SQL), and with
/// `PostgresQueryCompiler+Select` the read permission, order, paging and count; `$text` (`PostgresQueryCompiler+Text`).
///
/// Where the answers differ from SQLite's (the first three pinned by `PostgresQueryParityTests.knownDifferences`): `$regex` classes
/// such as `\w` are Unicode in ARE, ASCII in PCRE2; `$select` compares jsonb values, so `true` does not select the
/// number 1 (SQLite reads it as 1); Objects and Arrays nested more than three deep sort by PostgreSQL's text of the
/// innermost; `$text` splits words by PostgreSQL's letters and lowercasing (see `PostgresQueryCompiler+Text`); numbers
/// compare as float8 (SQLite compares integers past 2^53 exactly); an unordered query's rows come in no promised order
/// on either (SQLite's happen to be insertion order).
///
/// Indexes the SQL can use (the storage layer makes them): an expression index on a field's comparison expression,
/// `((data ->> 'score')::float8)` or `((data ->> 'name') COLLATE "C")`, or a declared index on the field's typed column
/// holding that value (`PostgresTypedColumns`, `typedValue`), declared `NULLS FIRST` so an ordered page walks it in
/// both directions (`typedSortExpression`); a GIN index on `textIndexExpression(field)` for a declared text
/// index (`$text` narrows through it); a GIN index on `rperm` for `rperm ?| ARRAY[…]`. Connections run without JIT
/// (`PostgresConnection`): its compiling cost these short statements more than they run.
///
/// `$regex` runs on PostgreSQL's own engine (Tcl ARE, https://www.postgresql.org/docs/current/functions-matching.html),
/// not PCRE2: options map to ARE's embedded ones, and a pattern PCRE2 accepts that ARE refuses fails at run time
/// with SQLSTATE 2201B (the seam must answer it as 102).
struct PostgresQueryCompiler {
    let schema: ClassSchema
    /// Finds the schemas of subquery classes (in the same snapshot as the main query).
    var lookup: (String) throws -> ClassSchema? = { _ in nil }
    /// The caller's ACL subjects: subqueries see only what the caller may read.
    var readableBy: [String]?
    /// Checks that the caller may query a subquery's class and returns the subquery's constraint as the caller may
    /// run it (see `QueryCompiler.authorizeSubquery`).
    var authorizeSubquery: SubqueryAuthorizer = { _, subquery, _ in subquery.constraint }

    func compile(_ constraint: QueryConstraint) throws -> PostgresFragment {
        switch constraint {
        case .and(let parts): return try join(parts, "AND", empty: "TRUE")
        case .or(let parts): return try join(parts, "OR", empty: "FALSE")
        case .nor(let parts): return negated(try join(parts, "OR", empty: "FALSE"))
        case .field(let key, let condition): return try compile(key, condition)
        case .relatedTo(let className, let objectId, let key): return relatedTo(className, objectId, key)
        }
    }

    private func join(_ parts: [QueryConstraint], _ op: String, empty: String) throws -> PostgresFragment {
        guard !parts.isEmpty else { return PostgresFragment(sql: empty) }
        let compiled = try parts.map(compile)
        return PostgresFragment(sql: compiled.map { "(\($0.sql))" }.joined(separator: " \(op) "), parameters: compiled.flatMap(\.parameters))
    }

    /// NOT, where NULL (a missing field) counts as not matching: `$ne`, `$nin` and `$nor` then match.
    func negated(_ fragment: PostgresFragment) -> PostgresFragment {
        PostgresFragment(sql: "NOT COALESCE((\(fragment.sql)), FALSE)", parameters: fragment.parameters)
    }

    private func compile(_ key: String, _ condition: FieldCondition) throws -> PostgresFragment {
        // Operand checks and `$relativeTime` are the same on both databases: SQLite's compiler's own.
        let operands = QueryCompiler(schema: schema)
        try operands.checkAtoms(key, condition)
        switch condition {
        case .equalTo(let value):
            try operands.refuseRelativeTime(key, value)
            return try equality(key, value)
        case .notEqualTo(let value):
            try operands.refuseRelativeTime(key, value)
            return negated(try equality(key, pointersForIds(key, [value])[0]))
        case .lessThan(let value): return try comparison(key, "<", operands.resolvingRelativeTime(key, value, "$lt"))
        case .lessThanOrEqualTo(let value): return try comparison(key, "<=", operands.resolvingRelativeTime(key, value, "$lte"))
        case .greaterThan(let value): return try comparison(key, ">", operands.resolvingRelativeTime(key, value, "$gt"))
        case .greaterThanOrEqualTo(let value): return try comparison(key, ">=", operands.resolvingRelativeTime(key, value, "$gte"))
        case .containedIn(let values): return try membership(key, pointersForIds(key, values))
        case .notContainedIn(let values): return negated(try membership(key, pointersForIds(key, values)))
        case .containsAll(let values):
            guard !values.isEmpty else { return PostgresFragment(sql: "FALSE") }
            return try compile(.and(values.map { .field(key, .equalTo($0)) }))
        case .containsAllMatching(let conditions): return try compile(.and(conditions.map { .field(key, $0) }))
        case .exists(let flag):
            if isBuiltIn(key) { return PostgresFragment(sql: flag ? "TRUE" : "FALSE") }
            if isDotPath(key) { return flag ? dotPathExists(key) : negated(dotPathExists(key)) }
            return PostgresFragment(sql: "\(json(key)) IS \(flag ? "NOT " : "")NULL")
        case .matchesRegex(let pattern, let options): return try regex(key, pattern, options)
        case .containedBy(let values): return containedBy(key, values)
        case .matchesKeyInQuery(let subKey, let subquery): return try selectKey(key, subKey, subquery, negated: false)
        case .doesNotMatchKeyInQuery(let subKey, let subquery): return try selectKey(key, subKey, subquery, negated: true)
        case .matchesQuery(let subquery): return try inQuery(key, subquery, negated: false)
        case .doesNotMatchQuery(let subquery): return try inQuery(key, subquery, negated: true)
        case .nearSphere, .withinBox, .withinPolygon, .withinCenterSphere, .polygonContains: return geo(key, condition)
        case .matchesText(let search): return textSearch(key, search)
        }
    }

    /// Equality: `null` matches a missing field too; on an Array field (or where a dot path ends at an array) any element.
    private func equality(_ key: String, _ value: JSON) throws -> PostgresFragment {
        if case .relation = schema.fields[key], value["__type"]?.stringValue == "Pointer", let id = value["objectId"]?.stringValue {
            return relationHolds(key, [id])
        }
        if value == .null {
            if isBuiltIn(key) { return PostgresFragment(sql: "FALSE") }
            return PostgresFragment(sql: "\(json(key)) IS NULL OR \(json(key)) = 'null'::jsonb")
        }
        let scalar = try test(key, "=", value, on: nil)
        if value.arrayValue != nil { return scalar }
        let element = try test(key, "=", value, on: "element.value")
        if isArrayField(key) { return anyElement(key, element) }
        return isDotPath(key) ? scalarOrAnyElement(key, scalar: scalar, element: element) : scalar
    }

    /// `$lt` and the others: on an Array any element may satisfy it, as in MongoDB.
    private func comparison(_ key: String, _ op: String, _ value: JSON) throws -> PostgresFragment {
        let element = try test(key, op, value, on: "element.value")
        if isArrayField(key) { return anyElement(key, element) }
        let scalar = try test(key, op, value, on: nil)
        return isDotPath(key) ? scalarOrAnyElement(key, scalar: scalar, element: element) : scalar
    }

    /// `$in`: one jsonb array parameter, however many values; each value matches as its equality would.
    private func membership(_ key: String, _ values: [JSON]) throws -> PostgresFragment {
        guard !values.isEmpty else { return PostgresFragment(sql: "FALSE") }
        if case .relation = schema.fields[key] { return relationHolds(key, values.compactMap { $0["objectId"]?.stringValue }) }
        var values = values
        if !isBuiltIn(key), !isDotPath(key), !isArrayField(key), let recorded = schema.fields[key] {
            // Numbers and strings never match a top-level field recorded as another type (`QueryCompiler.fieldGuard`).
            values.removeAll { value in
                let kind: FieldType? = value.numberValue != nil ? .number : value.stringValue != nil ? .string : nil
                return kind.map { $0 != recorded } ?? false
            }
            guard !values.isEmpty else { return PostgresFragment(sql: "FALSE") }
        }
        // Compare the form equality compares: objectIds of Pointers, ISO texts of Dates, else the JSON value.
        let operands = values.map(comparable)
        let simple = !values.contains { $0 == .null || $0.boolValue != nil || $0.arrayValue != nil }
        guard simple, values.count > 1, Set(operands.map { $0.path ?? "" }).count == 1 else {
            return try compile(.or(values.map { .field(key, .equalTo($0)) }))
        }
        let list = PostgresValue.text(JSON.array(operands.map { $0.value }).jsonText)
        let mark = PostgresFragment.parameter
        func member(_ expression: String) -> String {
            "\(expression) IN (SELECT listed.value FROM jsonb_array_elements(\(mark)::jsonb) AS listed(value))"
        }
        let scalarPath = operands[0].path
        if let typed = typedMembership(key, values, list: list, path: scalarPath) { return typed }
        let element = PostgresFragment(sql: member(scalarPath.map { "(element.value #> '\($0)')" } ?? "element.value"), parameters: [list])
        if isArrayField(key) { return anyElement(key, element) }
        let scalar: PostgresFragment
        if isBuiltIn(key) {
            scalar = PostgresFragment(sql: "\(builtInJSON(key)) IN (SELECT listed.value FROM jsonb_array_elements(\(mark)::jsonb) AS listed(value))",
                                      parameters: [list])
        } else {
            scalar = PostgresFragment(sql: member(scalarPath.map { "(\(json(key)) #> '\($0)')" } ?? json(key)), parameters: [list])
        }
        return isDotPath(key) ? scalarOrAnyElement(key, scalar: scalar, element: element) : scalar
    }

    /// `$in` on a recorded Number or String field with values of its type only: the typed expression its index is built
    /// on (`typedSortExpression`) `= ANY` the values, which an index scan answers (`IN (SELECT ...)` reads every row).
    private func typedMembership(_ key: String, _ values: [JSON], list: PostgresValue, path: String?) -> PostgresFragment? {
        guard path == nil, !isBuiltIn(key), !isDotPath(key), !isArrayField(key) else { return nil }
        let listed = "jsonb_array_elements_text(\(PostgresFragment.parameter)::jsonb) AS listed"
        switch schema.fields[key] {
        case .number? where values.allSatisfy({ $0.numberValue != nil }):
            return PostgresFragment(sql: "\(typedValue(key)) = ANY (ARRAY(SELECT listed::float8 FROM \(listed)))", parameters: [list])
        case .string? where values.allSatisfy({ $0.stringValue != nil }):
            return PostgresFragment(sql: "\(typedValue(key)) = ANY (ARRAY(SELECT listed COLLATE \"C\" FROM \(listed)))", parameters: [list])
        default:
            return nil
        }
    }

    /// `$containedBy`: no element of the Array outside the values (Pointers by objectId, as the first value says); a
    /// missing field has none.
    private func containedBy(_ key: String, _ values: [JSON]) -> PostgresFragment {
        let list = PostgresValue.text(JSON.array(values.map { $0["objectId"] ?? $0 }).jsonText)
        let element = values.first?["__type"]?.stringValue == "Pointer" ? "(element.value -> 'objectId')" : "element.value"
        let outside = PostgresFragment(
            sql: "\(element) NOT IN (SELECT listed.value FROM jsonb_array_elements(\(PostgresFragment.parameter)::jsonb) AS listed(value))",
            parameters: [list])
        let any = anyElement(key, outside)
        return PostgresFragment(sql: "NOT \(any.sql)", parameters: any.parameters)
    }

    private func regex(_ key: String, _ pattern: String, _ options: String) throws -> PostgresFragment {
        guard pattern.utf8.count <= CompiledRegex.maximumPatternBytes else {
            throw ParseError(.invalidQuery, "bad regex: longer than \(CompiledRegex.maximumPatternBytes) bytes")
        }
        guard CompiledRegex.accepts(pattern: pattern, options: options) else { throw ParseError(.invalidQuery, "bad regex: \(pattern)") }
        let mark = PostgresFragment.parameter
        let ared = PostgresValue.text(Self.embeddedOptions(options) + Self.literalizingQuotes(pattern))
        func matches(_ expression: String) -> String {
            "(CASE WHEN jsonb_typeof(\(expression)) = 'string' THEN (\(expression) #>> '{}') ~ \(mark) END)"
        }
        let element = PostgresFragment(sql: matches("element.value"), parameters: [ared])
        if isArrayField(key) { return anyElement(key, element) }
        let scalar = isBuiltIn(key)
            ? PostgresFragment(sql: "\(builtInText(key)) ~ \(mark)", parameters: [ared])
            : PostgresFragment(sql: matches(json(key)), parameters: [ared])
        return isDotPath(key) ? scalarOrAnyElement(key, scalar: scalar, element: element) : scalar
    }

    /// PCRE's `\Q...\E` (quoted text, what the Parse SDKs send for startsWith, endsWith and contains) spelled for
    /// an ARE, which has no such quotes: each character of the quoted text that is not a letter, a digit or `_`
    /// gets a backslash. A `\Q` with no `\E` quotes to the end, as in PCRE.
    static func literalizingQuotes(_ pattern: String) -> String {
        guard pattern.contains("\\Q") else { return pattern }
        let characters = Array(pattern)
        var result = "", quoting = false, index = 0
        while index < characters.count {
            let character = characters[index]
            let next = index + 1 < characters.count ? characters[index + 1] : nil
            if quoting, character == "\\", next == "E" {
                quoting = false
                index += 2
            } else if quoting {
                if !(character.isLetter || character.isNumber || character == "_") { result += "\\" }
                result.append(character)
                index += 1
            } else if character == "\\", let next {
                if next == "Q" { quoting = true } else { result += "\\" + String(next) }  // Other escapes stay as they are.
                index += 2
            } else {
                result.append(character)
                index += 1
            }
        }
        return result
    }

    /// PCRE options (`i m s x`) as an ARE's leading embedded options: PCRE's default is ARE's `p` (`.` stops at a
    /// newline, `^`/`$` only at the ends), `m` is `n`, `s` is `s`, `m` with `s` is `w`.
    static func embeddedOptions(_ options: String) -> String {
        let multiline = options.contains("m"), dotAll = options.contains("s")
        var flags = multiline ? (dotAll ? "w" : "n") : (dotAll ? "s" : "p")
        if options.contains("i") { flags += "i" }
        if options.contains("x") { flags += "x" }
        return "(?\(flags))"
    }
}
