import RoostCore

/// One API call after HTTP decoding and key checks: what a route handler sees.
/// Batch sub-requests are built directly as `APIRequest`s.
struct APIRequest {
    var method: String
    /// Path segments after the mount path (`["classes", "GameScore"]`).
    var segments: [String]
    /// The JSON body (`nil` when empty), with the JS SDK's `_`-keys already removed.
    var body: JSON?
    /// URL query parameters, raw strings.
    var query: [String: String] = [:]
    /// The request target the URL parameters came from, when there was one (see `HTTPRequest.target`).
    var target: String?
    /// A batch item's own idempotency key (`"requestId"` in the item), applied like `X-Parse-Request-Id`.
    var requestId: String?

    /// The body as an object; a write needs one. An empty array counts as an empty object: PHP's `json_encode` of
    /// an empty array is `[]` (the PHP SDK saves a new object with no fields so), and Parse reads a body's keys.
    /// - Throws: `ParseError` 107 when the body is missing or not an object.
    func bodyObject() throws -> [String: JSON] {
        switch body {
        case .object(let members)?: return members
        case nil: return [:]
        case .array(let items)? where items.isEmpty: return [:]
        default: throw ParseError(.invalidJSON, "The request body must be a JSON object.")
        }
    }

    /// Query parameters merged from the body and the URL (each URL value JSON-decoded when it parses,
    /// else kept as a string), as Parse reads them; the URL wins. A name in brackets, `where[name][$regex]=x`, is
    /// nested as Express's query parser nests it (`BracketParameters`).
    func parameters() throws -> [String: JSON] {
        var result: [String: JSON] = [:]
        if case .object(let members)? = body { result = members }
        mergeURLParameters(into: &result) { (try? JSONParser.parse($0)) ?? .string($0) }
        return result
    }

    /// Puts the URL's parameters over `result`: a plain name's value as `convert` makes it, names in brackets nested
    /// (`BracketParameters`, their values strings), read from the target as sent (the `query` dictionary has lost
    /// their `[]` and repeats).
    func mergeURLParameters(into result: inout [String: JSON], plain convert: (String) -> JSON) {
        var nests = false
        for (key, text) in query {
            if BracketParameters.isBracketed(key) { nests = true } else { result[key] = convert(text) }
        }
        guard nests else { return }
        let bracketed = target.map(HTTPRequest.bracketedParameters)
            ?? query.filter { BracketParameters.isBracketed($0.key) }.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        BracketParameters.merge(bracketed, into: &result)
    }
}

/// URL parameters in the bracket notation of Express's query parser (`qs`), which Parse reads: `a[b][c]=x` is
/// `{"a": {"b": {"c": "x"}}}`, `a[]=x&a[]=y` and `a[0]=x&a[1]=y` are arrays; the values stay strings, as `qs`
/// leaves them. At most 5 levels, as `qs`'s default depth (deeper brackets stay part of the last key).
enum BracketParameters {
    static func isBracketed(_ key: String) -> Bool {
        guard let open = key.firstIndex(of: "["), open != key.startIndex else { return false }
        return key.hasSuffix("]")
    }

    static func merge(_ parameters: [(String, String)], into result: inout [String: JSON]) {
        var roots = Set<String>()
        for (key, value) in parameters {
            let path = self.path(key)
            guard let root = path.first else { continue }
            result[root] = inserting(.string(value), at: path.dropFirst(), into: result[root])
            roots.insert(root)
        }
        for root in roots { result[root] = result[root].map(arraysFromIndexes) }
    }

    /// `a[b][c]` → `["a", "b", "c"]`; `a[]` → `["a", ""]`.
    private static func path(_ key: String) -> [String] {
        var parts: [String] = []
        var rest = Substring(key)
        guard let open = rest.firstIndex(of: "[") else { return [key] }
        parts.append(String(rest[..<open]))
        rest = rest[open...]
        while parts.count <= 5, rest.first == "[", let close = rest.firstIndex(of: "]") {
            parts.append(String(rest[rest.index(after: rest.startIndex)..<close]))
            rest = rest[rest.index(after: close)...]
        }
        if !rest.isEmpty, let last = parts.popLast() { parts.append(last + rest) }
        return parts
    }

    private static func inserting(_ value: JSON, at path: ArraySlice<String>, into existing: JSON?) -> JSON {
        guard let key = path.first else { return value }
        if key.isEmpty {  // `a[]`: appended.
            guard case .array(var elements)? = existing else { return .array([inserting(value, at: path.dropFirst(), into: nil)]) }
            elements.append(inserting(value, at: path.dropFirst(), into: nil))
            return .array(elements)
        }
        guard case .object(var members)? = existing else {
            return .object([key: inserting(value, at: path.dropFirst(), into: nil)])
        }
        members[key] = inserting(value, at: path.dropFirst(), into: members[key])
        return .object(members)
    }

    /// An object whose keys are exactly 0..<n (n ≤ 20, `qs`'s array limit) becomes an array, at any depth.
    private static func arraysFromIndexes(_ value: JSON) -> JSON {
        switch value {
        case .object(let members):
            let converted = members.mapValues(arraysFromIndexes)
            let indexes = converted.keys.compactMap { Int($0) }.sorted()
            if !indexes.isEmpty, indexes.count == converted.count, indexes.count <= 20, indexes == Array(0..<indexes.count),
                converted.keys.allSatisfy({ String(Int($0)!) == $0 }) {
                return .array(indexes.map { converted[String($0)]! })
            }
            return .object(converted)
        case .array(let elements):
            return .array(elements.map(arraysFromIndexes))
        default:
            return value
        }
    }
}

/// What a route handler answers: a status, a JSON body, extra headers.
struct APIResponse {
    var status: Int = 200
    var body: JSON
    var headers: [(String, String)] = []
    /// An answer whose writes stand but which the client gets as this error, once they are committed (Parse's
    /// sign-up under `--prevent-signup-with-unverified-email`: the user and its mail are stored, the reply is 205).
    /// Set only inside a shared write (a batch's, an idempotent request's), whose owner answers it: `committed()`.
    var failsAfterCommit: ParseError? = nil

    /// This answer, or its `failsAfterCommit` error thrown: for whoever commits the write it was made in.
    func committed() throws -> APIResponse {
        if let failsAfterCommit { throw failsAfterCommit }
        return self
    }
}

extension JSON {
    /// A string with something in it: what Parse's truthiness tests accept for a name or id field.
    var nonEmptyString: String? {
        if case .string(let text) = self, !text.isEmpty { return text }
        return nil
    }

    /// This object with `key` set to `value`; a stored row (`.encodedFragment`) is decoded first.
    func setting(_ key: String, to value: JSON) throws -> JSON {
        var object = self
        if case .encodedFragment(let bytes) = self { object = try JSONParser.parse(bytes) }
        guard case .object(var members) = object else { return self }
        members[key] = value
        return .object(members)
    }
}
