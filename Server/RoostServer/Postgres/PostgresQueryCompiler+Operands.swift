import RoostCore

/// Keys as jsonb paths, and the typed tests that keep numbers to numbers and strings to strings.
extension PostgresQueryCompiler {
    func isBuiltIn(_ key: String) -> Bool { key == "objectId" || key == "createdAt" || key == "updatedAt" }
    func isArrayField(_ key: String) -> Bool { schema.fields[key] == .array }
    func isDotPath(_ key: String) -> Bool { key.contains(".") }

    /// The jsonb at a key: `data -> 'score'`, `data #> '{sender,group}'` (a numeric part indexes an array, as in
    /// MongoDB's dot notation). Keys reach here checked by `QueryConstraint.parse` (letters, digits, `_`): nothing
    /// to escape.
    func json(_ key: String) -> String {
        isDotPath(key) ? "(data #> '{\(key.split(separator: ".").joined(separator: ","))}')" : "(data -> '\(key)')"
    }

    /// A built-in column as the jsonb equality and `$in` compare: objectId as a JSON string, dates as the ISO text.
    func builtInJSON(_ key: String) -> String { "to_jsonb(\(builtInText(key)))" }

    /// A built-in column as text: the dates as Parse's ISO form (`2026-11-26T10:00:00.123Z`), which sorts as they do.
    func builtInText(_ key: String) -> String {
        key == "objectId" ? "objectId"
            : "to_char(to_timestamp(\(key) / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"
    }

    /// The form equality and `$in` compare: a Pointer by `objectId`, a Date by `iso` (with the path into the
    /// value), anything else as the value itself.
    func comparable(_ value: JSON) -> (path: String?, value: JSON) {
        switch value["__type"]?.stringValue {
        case "Pointer": ("{objectId}", value["objectId"] ?? .null)
        case "Date": ("{iso}", value["iso"] ?? .null)
        default: (nil, value)
        }
    }

    /// `expression op value` for one value, typed: on `subject` (an element's jsonb) or, when nil, the key.
    /// Numbers compare as float8 and strings as text in byte order (`COLLATE "C"`, as SQLite's BINARY), only with a
    /// value of their own JSON type; Booleans, Objects and Arrays compare as jsonb (equality only).
    func test(_ key: String, _ op: String, _ value: JSON, on subject: String?) throws -> PostgresFragment {
        let mark = PostgresFragment.parameter
        // Byte order for < and >; equality keeps the default collation (deterministic: the same answers as "C").
        let collate = op == "=" ? "" : " COLLATE \"C\""
        if subject == nil, isBuiltIn(key) {
            let (_, plain) = comparable(value)
            if key == "objectId" {
                guard let id = plain.stringValue else { return PostgresFragment(sql: "FALSE") }
                return PostgresFragment(sql: "objectId \(op) \(mark)\(collate)", parameters: [.text(id)])
            }
            let date = plain.stringValue.flatMap(ParseDate.init(iso:))
            guard let date else { return PostgresFragment(sql: "FALSE") }
            return PostgresFragment(sql: "\(key) \(op) \(mark)", parameters: [.int(date.millisecondsSince1970)])
        }
        if subject == nil, !isDotPath(key), let recorded = schema.fields[key] {
            // A number or string never matches a top-level field recorded as another type (`QueryCompiler.fieldGuard`).
            let kind: FieldType? = value.numberValue != nil ? .number : value.stringValue != nil ? .string : nil
            if let kind, kind != recorded { return PostgresFragment(sql: "FALSE") }
        }
        let (path, plain) = comparable(value)
        var target = subject ?? json(key)
        if let path { target = "(\(target) #> '\(path)')" }
        switch plain {
        case .number(let number):
            // A recorded Number field: its typed value (`typedValue`: the column or the plain cast), which its index answers.
            if subject == nil, path == nil, !isDotPath(key), schema.fields[key] == .number {
                return PostgresFragment(sql: "\(typedValue(key)) \(op) \(mark)", parameters: [.double(number)])
            }
            return PostgresFragment(
                sql: "(CASE WHEN jsonb_typeof(\(target)) = 'number' THEN (\(target) #>> '{}')::float8 END) \(op) \(mark)",
                parameters: [.double(number)])
        case .string(let text):
            if subject == nil, path == nil, !isDotPath(key), schema.fields[key] == .string {
                // Always "C" here, equality too: the collation of the index on this expression (`typedSortExpression`).
                return PostgresFragment(sql: "\(typedValue(key)) \(op) \(mark) COLLATE \"C\"", parameters: [.text(text)])
            }
            return PostgresFragment(
                sql: "(CASE WHEN jsonb_typeof(\(target)) = 'string' THEN \(target) #>> '{}' END) \(op) \(mark)\(collate)",
                parameters: [.text(text)])
        default:
            guard op == "=" else { return PostgresFragment(sql: "FALSE") }  // MongoDB orders no Booleans or Objects here.
            return PostgresFragment(sql: "\(target) = \(mark)::jsonb", parameters: [.text(plain.jsonText)])
        }
    }

    /// Some element of the Array at `key` passes `test` (written on `element.value`).
    func anyElement(_ key: String, _ test: PostgresFragment) -> PostgresFragment {
        PostgresFragment(
            sql: "EXISTS (SELECT 1 FROM jsonb_array_elements(CASE WHEN jsonb_typeof(\(json(key))) = 'array' THEN \(json(key)) END) AS element(value) WHERE \(test.sql))",
            parameters: test.parameters)
    }

    /// A dot path: the value it reaches, or, when that is an array, any of its elements; when the plain path reaches
    /// nothing, any value it reaches through Arrays of Objects on the way (`comments.author`, `pathValues`).
    func scalarOrAnyElement(_ key: String, scalar: PostgresFragment, element: PostgresFragment) -> PostgresFragment {
        let any = anyElement(key, element)
        return PostgresFragment(
            sql: "(\(scalar.sql)) OR (\(any.sql)) OR (\(json(key)) IS NULL AND EXISTS (SELECT 1 FROM \(pathValues(key)) WHERE \(element.sql)))",
            parameters: scalar.parameters + any.parameters + element.parameters)
    }

    /// Plain objectIds in `$in`/`$nin`/`$ne` of a Pointer field name objects of its target class, as Parse reads them.
    func pointersForIds(_ key: String, _ values: [JSON]) -> [JSON] {
        guard case .pointer(let target)? = schema.fields[key] else { return values }
        return values.map { value in
            if case .string(let id) = value { return WireValue.pointer(target, id) }
            return value
        }
    }
}
