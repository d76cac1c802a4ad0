import RoostCore

/// Relations (`_join`) and subqueries (`$inQuery`, `$notInQuery`, `$select`, `$dontSelect`), as `QueryCompiler` runs them.
extension PostgresQueryCompiler {
    /// `$relatedTo`: the objects a Relation field of one object holds.
    func relatedTo(_ className: String, _ objectId: String, _ key: String) -> PostgresFragment {
        let mark = PostgresFragment.parameter
        return PostgresFragment(
            sql: "objectId IN (SELECT relatedId FROM _join WHERE owningClass = \(mark) AND field = \(mark) AND owningId = \(mark))",
            parameters: [.text(className), .text(key), .text(objectId)])
    }

    /// Equality or `$in` on a Relation field: the owners whose relation holds any of these objects.
    func relationHolds(_ key: String, _ relatedIds: [String]) -> PostgresFragment {
        let mark = PostgresFragment.parameter
        let ids = JSON.array(relatedIds.map { .string($0) }).jsonText
        return PostgresFragment(
            sql: """
                objectId IN (SELECT owningId FROM _join WHERE owningClass = \(mark) AND field = \(mark) \
                AND relatedId IN (SELECT jsonb_array_elements_text(\(mark)::jsonb)))
                """,
            parameters: [.text(schema.className), .text(key), .text(ids)])
    }

    /// The rows of a subquery's class the caller may find: its table, compiler and `WHERE` condition; `nil` when the
    /// class does not exist. - Parameter selectedKey: the key `$select`/`$dontSelect` reads.
    private func subquerySource(_ subquery: Subquery, selectedKey: String? = nil) throws
        -> (table: String, compiler: PostgresQueryCompiler, filter: PostgresFragment)? {
        guard let (subSchema, constraint) = try QueryCompiler.authorized(subquery, selectedKey: selectedKey, lookup: lookup,
                                                                         authorize: authorizeSubquery) else { return nil }
        let compiler = PostgresQueryCompiler(schema: subSchema, lookup: lookup, readableBy: readableBy, authorizeSubquery: authorizeSubquery)
        let filter = try compiler.compile(constraint)
        let acl = Self.readFilter(readableBy)
        return (subSchema.tableName, compiler,
                PostgresFragment(sql: "(\(filter.sql)) AND \(acl.sql)", parameters: filter.parameters + acl.parameters))
    }

    /// `$inQuery`: a Pointer (or an Array of Pointers) to one of the subquery's results (by objectId, whatever the
    /// class it names, as on SQLite).
    func inQuery(_ key: String, _ subquery: Subquery, negated isNegated: Bool) throws -> PostgresFragment {
        guard let source = try subquerySource(subquery) else { return PostgresFragment(sql: isNegated ? "TRUE" : "FALSE") }
        let ids = "SELECT objectId FROM \(source.table) WHERE \(source.filter.sql)"
        let test: PostgresFragment
        if isArrayField(key) {
            test = anyElement(key, PostgresFragment(sql: "(element.value ->> 'objectId') IN (\(ids))", parameters: source.filter.parameters))
        } else {
            test = PostgresFragment(sql: "(\(json(key)) ->> 'objectId') IN (\(ids))", parameters: source.filter.parameters)
        }
        return isNegated ? negated(test) : test
    }

    /// `$select`: the field equals `subKey` of one of the subquery's results, an Array value selecting each of its
    /// elements (Parse turns the values into an `$in`). Compared as jsonb, where SQLite compares the SQL values
    /// `json_extract` gives: the same but for Booleans, which SQLite reads as 1 and 0 (so `true` selects the number 1
    /// there, not here). JSON nulls select nothing, as SQL NULLs select nothing on SQLite.
    func selectKey(_ key: String, _ subKey: String, _ subquery: Subquery, negated isNegated: Bool) throws -> PostgresFragment {
        guard QueryConstraint.isQueryableKey(subKey) else { throw ParseError(.invalidKeyName, "Invalid key name: \(subKey)") }
        guard let source = try subquerySource(subquery, selectedKey: subKey) else {
            return PostgresFragment(sql: isNegated ? "TRUE" : "FALSE")
        }
        let subject = isBuiltIn(key) ? builtInJSON(key) : json(key)
        let values: PostgresFragment
        if source.compiler.isBuiltIn(subKey) {
            values = PostgresFragment(sql: "SELECT \(source.compiler.builtInJSON(subKey)) FROM \(source.table) WHERE \(source.filter.sql)",
                                      parameters: source.filter.parameters)
        } else {
            let selected = source.compiler.json(subKey)  // `data` is the subquery row's: the nearest in scope.
            values = PostgresFragment(
                sql: """
                    SELECT CASE WHEN jsonb_typeof(\(selected)) = 'array' THEN selected.value ELSE \(selected) END \
                    FROM \(source.table) AS selected_row \
                    LEFT JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(\(selected)) = 'array' THEN \(selected) END) \
                    AS selected(value) ON TRUE \
                    WHERE (\(source.filter.sql))
                    """,
                parameters: source.filter.parameters)
        }
        let test = PostgresFragment(
            sql: "\(subject) IN (SELECT listed.value FROM (\(values.sql)) AS listed(value) WHERE jsonb_typeof(listed.value) <> 'null')",
            parameters: values.parameters)
        return isNegated ? negated(test) : test
    }
}
