import RoostCore

/// Whole statements of a `FindQuery`: the read permission, order, paging and count, as `ObjectStore` and
/// `ReadPermission` build them on SQLite.
extension PostgresQueryCompiler {
    /// The columns a find reads, in `ObjectStore`'s order (`objectId, createdAt, updatedAt, acl, data`).
    static let columns = "objectId, createdAt, updatedAt, acl::text, data::text"

    /// The ACL in the `WHERE`: no reader list (anyone may read), or one naming a subject of the caller; nil subjects:
    /// master key.
    static func readFilter(_ subjects: [String]?) -> PostgresFragment {
        // SQLite's own test (`rperm` is the same JSON text here), its `?` marks as this compiler's.
        let shared = QueryCompiler.readFilter(subjects)
        return PostgresFragment(sql: PostgresFragment.replacing(UInt8(ascii: "?"), with: PostgresFragment.mark, in: shared.sql),
                                parameters: shared.arguments.map { $0.text.map(PostgresValue.text) ?? .null })
    }

    /// `SELECT … WHERE … ORDER BY … LIMIT … OFFSET …` for a query on this compiler's class, with the caller's read
    /// permission (`query.readableBy`) and a condition of the server's own (`rowFilter`; `FindQuery.rowFilter` is SQLite's).
    func select(_ query: FindQuery, rowFilter: PostgresFragment? = nil) throws -> PostgresFragment {
        var statement = try whereClause(query, rowFilter: rowFilter)
        statement.sql = "SELECT \(Self.columns) FROM \(schema.tableName) WHERE " + statement.sql
        let order = orderBy(query.order, constraint: query.constraint)
        if !order.sql.isEmpty {
            statement.sql += " ORDER BY " + order.sql
            statement.parameters += order.parameters
        } else if let nearest = nearestFirst(query.constraint) {
            statement.sql += " ORDER BY " + nearest.sql
            statement.parameters += nearest.parameters
        }
        statement.sql += " LIMIT \(PostgresFragment.parameter) OFFSET \(PostgresFragment.parameter)"
        statement.parameters += [.int(Int64(query.limit)), .int(Int64(query.skip))]
        return statement
    }

    /// `SELECT count(*)` of the rows a query matches that the caller may read.
    func count(_ query: FindQuery, rowFilter: PostgresFragment? = nil) throws -> PostgresFragment {
        var statement = try whereClause(query, rowFilter: rowFilter)
        statement.sql = "SELECT count(*) FROM \(schema.tableName) WHERE " + statement.sql
        return statement
    }

    /// The query's constraint, the caller's read permission and the server's row filter, together.
    func whereClause(_ query: FindQuery, rowFilter: PostgresFragment? = nil) throws -> PostgresFragment {
        // `FindQuery.rowFilter` is SQLite SQL (`_session_objects`' user test): a caller with one must pass its PostgreSQL form.
        precondition(query.rowFilter == nil || rowFilter != nil, "a FindQuery.rowFilter needs its PostgreSQL form")
        var compiler = self
        compiler.readableBy = query.readableBy
        compiler.authorizeSubquery = query.authorizeSubquery
        let filter = try compiler.compile(query.constraint)
        let acl = Self.readFilter(query.readableBy)
        var clause = PostgresFragment(sql: "(\(filter.sql)) AND \(acl.sql)", parameters: filter.parameters + acl.parameters)
        if let rowFilter {
            clause.sql += " AND (\(rowFilter.sql))"
            clause.parameters += rowFilter.parameters
        }
        return clause
    }

    /// `ORDER BY` terms in SQLite's order of `json_extract` values, which `QueryCompiler.orderBy` sorts by: missing
    /// and null first, then numbers and Booleans (as 1 and 0) by value, then strings, Objects and Arrays by their text
    /// (strings as they are, Objects and Arrays as compact JSON with sorted keys, as Roost writes them), byte by byte;
    /// descending reverses it all. Keys not in the schema are dropped, as Parse does; `$score` (either direction) puts the
    /// best `$text` matches first.
    func orderBy(_ keys: [SortKey], constraint: QueryConstraint) -> PostgresFragment {
        var terms: [String] = [], parameters: [PostgresValue] = []
        for sort in keys {
            let direction = sort.descending ? " DESC" : " ASC"
            switch sort.key {
            case "objectId": terms.append("objectId COLLATE \"C\"" + direction)
            case "createdAt", "updatedAt": terms.append(sort.key + direction)
            case SortKey.textScore:
                guard let score = textScore(in: constraint) else { continue }
                terms.append(score.sql + " DESC")
                parameters += score.parameters
            default:
                let root = String(sort.key.split(separator: ".")[0])
                guard schema.fields[root] != nil else { continue }
                if let typed = typedSortExpression(sort.key) {
                    // Missing (and null) first, as SQLite's NULLs; the plain expression an index on it can walk.
                    terms.append(typed + direction + (sort.descending ? " NULLS LAST" : " NULLS FIRST"))
                    continue
                }
                let value = json(sort.key)
                terms.append("""
                    (CASE jsonb_typeof(\(value)) WHEN 'number' THEN 1 WHEN 'boolean' THEN 1 WHEN 'string' THEN 2 \
                    WHEN 'object' THEN 2 WHEN 'array' THEN 2 ELSE 0 END)\(direction)
                    """)
                terms.append("""
                    (CASE jsonb_typeof(\(value)) WHEN 'number' THEN (\(value) #>> '{}')::float8 \
                    WHEN 'boolean' THEN (CASE WHEN \(value) = 'true'::jsonb THEN 1 ELSE 0 END) END)\(direction)
                    """)
                terms.append("(CASE jsonb_typeof(\(value)) WHEN 'string' THEN \(value) #>> '{}' ELSE \(compactText(value)) END) COLLATE \"C\"" + direction)
            }
        }
        return PostgresFragment(sql: terms.joined(separator: ", "), parameters: parameters)
    }

    /// A recorded Number or String top-level field's value as float8 or text: its generated column when it has one
    /// (`PostgresTypedColumns`), else the expression that column and the field's expression indexes hold.
    func typedValue(_ key: String) -> String {
        if schema.typedColumns.contains(key), let column = PostgresTypedColumns.column(key) { return column }
        return schema.fields[key] == .number ? "(data ->> '\(key)')::float8" : "(data ->> '\(key)')"
    }

    /// The sort expression of a top-level field whose recorded type every stored value has (writes are type-checked),
    /// in that type's order, which is SQLite's among such values: Numbers by value, Strings byte by byte, Booleans false
    /// first (0 and 1 there), Dates by ISO text (their JSON texts differ only there), Pointers by objectId (one target
    /// class). NULL when missing or null. Other fields sort by `orderBy`'s general terms.
    func typedSortExpression(_ key: String) -> String? {
        guard !isDotPath(key), schema.view == nil else { return nil }
        switch schema.fields[key] {
        case .number?: return typedValue(key)
        // A typed column's collation is "C" already (`PostgresTypedColumns`).
        case .string?: return schema.typedColumns.contains(key) ? typedValue(key) : "(data ->> '\(key)') COLLATE \"C\""
        case .boolean?: return "(data ->> '\(key)')::boolean"
        case .date?: return "(data #>> '{\(key),iso}') COLLATE \"C\""
        case .pointer?: return "(data #>> '{\(key),objectId}') COLLATE \"C\""
        default: return nil
        }
    }

    /// An Object's or Array's JSON text as Roost writes it (compact, keys sorted), which SQLite's `json_extract` gives
    /// back; NULL for other types. Exact to `depth` levels of nesting (Objects in Objects in Objects: Dates or Pointers
    /// inside Objects in Arrays); deeper values are in PostgreSQL's own text (spaces, keys by length first), so the
    /// order among values that differ only that deep may differ from SQLite's.
    func compactText(_ value: String, depth: Int = 3) -> String {
        let member = "member\(depth)", item = "item\(depth)"
        func rendered(_ inner: String) -> String {
            depth > 1 ? "COALESCE(\(compactText(inner, depth: depth - 1)), \(inner)::text)" : "\(inner)::text"
        }
        return """
            (CASE jsonb_typeof(\(value)) \
            WHEN 'object' THEN '{' || COALESCE((SELECT string_agg(to_jsonb(\(member).key)::text || ':' || \(rendered("\(member).value")), ',' \
            ORDER BY \(member).key COLLATE "C") FROM jsonb_each(\(value)) AS \(member)), '') || '}' \
            WHEN 'array' THEN '[' || COALESCE((SELECT string_agg(\(rendered("\(item).value")), ',' ORDER BY \(item).position) \
            FROM jsonb_array_elements(\(value)) WITH ORDINALITY AS \(item)(value, position)), '') || ']' END)
            """
    }
}
