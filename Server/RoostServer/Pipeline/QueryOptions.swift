import RoostCore

/// The options of `GET /classes/<C>` (and of a single-object get), read from URL or body parameters.
struct QueryOptions {
    var find = FindQuery()
    var wantsCount = false
    /// The query named its `limit` (else `--default-limit` applies).
    var namesLimit = false
    /// The count's constraint when it differs from the results' (the `count` permission's `pointerFields`).
    var countConstraint: QueryConstraint?
    /// `where` is exactly `{"objectId": "<id>"}`: Parse runs such a query as a `get`.
    var selectsOneObjectId = false
    var keys: Set<String>?
    var excludeKeys: Set<String> = []
    /// Pointer paths to replace by the objects they point to (`post`, `post.author`); `*` means every pointer field.
    var include: [[String]] = []
    /// For `keys=post.title`: per include path, the fields to keep of the included objects.
    var includeKeys: [String: Set<String>] = [:]
    /// For `excludeKeys=post.title`: per include path, the fields to leave out of the included objects.
    var includeExcludedKeys: [String: Set<String>] = [:]
    /// `redirectClassNameForKey`: query the target class of this relation field instead of the class named.
    var redirectKey: String?
    /// `explain`: answer the database's query plan instead of the results (master key only).
    var explain = false

    static let findParameters: Set<String> = [
        "where", "order", "limit", "skip", "count", "keys", "excludeKeys", "include", "includeAll",
        "redirectClassNameForKey", "readPreference", "includeReadPreference", "subqueryReadPreference",
        "hint", "explain", "comment",
    ]
    static let getParameters: Set<String> = [
        "keys", "include", "excludeKeys", "readPreference", "includeReadPreference", "subqueryReadPreference",
    ]

    /// - Throws: `ParseError` 102 for an unknown parameter or a malformed value.
    static func parse(_ parameters: [String: JSON], isGet: Bool = false) throws -> QueryOptions {
        var options = QueryOptions()
        for (name, value) in parameters {
            if isGet {
                guard getParameters.contains(name) else { throw ParseError(.invalidQuery, "Improper encode of parameter") }
            } else {
                guard findParameters.contains(name) else { throw ParseError(.invalidQuery, "Invalid parameter for query: \(name)") }
            }
            switch name {
            case "where":
                // A body may carry `where` as a JSON string, as the URL always does (bounded as a body is).
                var constraint = value
                if case .string(let text) = value {
                    guard let parsed = try? JSONParser.parse(text, maximumValues: RoostServer.maximumBodyValues) else {
                        throw ParseError(.invalidJSON, "where is not valid JSON")
                    }
                    constraint = parsed
                }
                guard case .object(let members) = constraint else { throw ParseError(.invalidQuery, "where must be a JSON object") }
                options.selectsOneObjectId = members.count == 1 && members["objectId"]?.stringValue != nil
                options.find.constraint = try QueryConstraint.parse(where: constraint)
            case "order":
                options.find.order = try list(value, name).map { term in
                    let descending = term.hasPrefix("-")
                    var key = descending ? String(term.dropFirst()) : term
                    if key == "_created_at" { key = "createdAt" }
                    if key == "_updated_at" { key = "updatedAt" }
                    if key == SortKey.textScore { return SortKey(key: key, descending: true) }
                    guard QueryConstraint.isQueryableKey(key) else { throw ParseError(.invalidKeyName, "Invalid field name: \(key).") }
                    return SortKey(key: key, descending: descending)
                }
            case "limit":
                options.find.limit = try integer(value, name)
                options.namesLimit = true
            case "skip": options.find.skip = try integer(value, name)
            case "count": options.wantsCount = isTruthy(value)
            case "keys":
                // `a.b` selects `a` and includes it, as Parse does.
                var selected = Set<String>()
                for path in try list(value, name) {
                    let parts = path.split(separator: ".").map(String.init)
                    guard let first = parts.first else { continue }  // `.` names no field.
                    selected.insert(first)
                    guard parts.count > 1 else { continue }  // `a` and `a.` name no nested key.
                    options.include.append(Array(parts.dropLast()))
                    for depth in 1..<parts.count {
                        options.includeKeys[parts[..<depth].joined(separator: "."), default: []].insert(parts[depth])
                    }
                }
                options.keys = selected
            case "excludeKeys":
                // `a.b` includes `a` and leaves `b` out of it, as Parse does.
                for path in try list(value, name) {
                    let parts = path.split(separator: ".").map(String.init)
                    guard parts.count > 1 else {
                        options.excludeKeys.insert(path)
                        continue
                    }
                    options.include.append(Array(parts.dropLast()))
                    options.includeExcludedKeys[parts.dropLast().joined(separator: "."), default: []].insert(parts[parts.count - 1])
                }
            case "redirectClassNameForKey":
                guard case .string(let key) = value else { throw ParseError(.invalidQuery, "redirectClassNameForKey must be a string") }
                options.redirectKey = key
            case "include":
                options.include += try list(value, name).map { path in
                    let parts = path.split(separator: ".").map(String.init)
                    guard path == "*" || parts.allSatisfy(Names.isValidIdentifier) else {
                        throw ParseError(.invalidKeyName, "Invalid include path: \(path)")
                    }
                    return parts
                }
            case "includeAll": if isTruthy(value) { options.include.append(["*"]) }
            case "explain": options.explain = try explainRequested(value)
            default: continue  // Accepted for compatibility; no effect on this storage engine.
            }
        }
        return options
    }

    /// Whether results can be sent as stored, without decoding.
    var sendsRowsAsStored: Bool { keys == nil && excludeKeys.isEmpty && include.isEmpty }

    /// Parse answers every Relation field's marker whatever `keys` or `excludeKeys` say (its
    /// storage adapters add them from the schema); call before adding the fields the caller may not see.
    mutating func keepRelationMarkers(of schema: ClassSchema) {
        let relations = schema.fields.compactMap { name, type -> String? in
            if case .relation = type { return name }
            return nil
        }
        guard !relations.isEmpty else { return }
        keys?.formUnion(relations)
        excludeKeys.subtract(relations)
    }

    /// With `includeAll` (or `include=*`), Parse adds every Pointer and Array field to `keys`, so `keys` with
    /// nested paths still answers the other included objects.
    mutating func keepFieldsIncludedByAll(of schema: ClassSchema) {
        guard keys != nil, include.contains(["*"]) else { return }
        for (name, type) in schema.fields {
            if case .pointer = type { keys?.insert(name) } else if type == .array { keys?.insert(name) }
        }
    }

    /// One result as the client asked for it: the stored text as is, or decoded to apply `keys`/`excludeKeys`.
    func render(_ row: StoredRow) throws -> JSON {
        if sendsRowsAsStored { return row.wireFragment }
        return try row.decoded().wireJSON(keys: keys, excluding: excludeKeys)
    }

    /// A comma-separated string or an array of strings.
    private static func list(_ value: JSON, _ name: String) throws -> [String] {
        switch value {
        case .number(let number): return [JSON.number(number).jsonText]  // `order=1` reads as a number.
        case .string(let text):
            // On the bytes: split by Character and trimmed through a CharacterSet made per call, this was 3 % of a
            // query's time (`order=n`, perf).
            return text.utf8.split(separator: UInt8(ascii: ",")).compactMap { part in
                guard let first = part.firstIndex(where: { $0 != UInt8(ascii: " ") }),
                      let last = part.lastIndex(where: { $0 != UInt8(ascii: " ") }) else { return nil }
                return String(Substring(part[first...last]))
            }
        case .array(let items):
            return try items.map {
                guard let text = $0.stringValue else { throw ParseError(.invalidQuery, "\(name) must be a list of strings") }
                return text
            }
        default: throw ParseError(.invalidQuery, "\(name) must be a string or an array of strings")
        }
    }

    private static func integer(_ value: JSON, _ name: String) throws -> Int {
        let number = value.numberValue ?? value.stringValue.flatMap(Double.init)
        guard let number, number.isFinite, number >= 0, number < 1e12 else {
            throw ParseError(.invalidQuery, "\(name) must be a non-negative number")
        }
        return Int(number)
    }

    /// `true` or one of MongoDB's verbosities (all answer SQLite's one plan); JavaScript's falsy values (false, 0,
    /// null, empty) ask for nothing, as Parse tests `if (body.explain)`.
    /// - Throws: `ParseError` 102 `Invalid value for explain`, as Parse Server answers other values.
    private static func explainRequested(_ value: JSON) throws -> Bool {
        switch value {
        case .bool(let flag): return flag
        case .string(""), .null, .number(0): return false
        case .string("true"), .string("queryPlanner"), .string("queryPlannerExtended"), .string("executionStats"),
             .string("allPlansExecution"): return true
        default: throw ParseError(.invalidQuery, "Invalid value for explain")
        }
    }

    private static func isTruthy(_ value: JSON) -> Bool {
        switch value {
        case .bool(let flag): flag
        case .number(let number): number != 0
        case .string(let text): !text.isEmpty && text != "0" && text != "false"
        default: false
        }
    }
}

private extension Substring {
    func trimmingCharacters(in set: Character) -> String {
        String(drop(while: { $0 == set }).reversed().drop(while: { $0 == set }).reversed())
    }
}
