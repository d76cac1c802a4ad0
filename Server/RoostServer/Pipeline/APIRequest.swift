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

    /// The body as an object; a write needs one.
    /// - Throws: `ParseError` 107 when the body is missing or not an object.
    func bodyObject() throws -> [String: JSON] {
        switch body {
        case .object(let members)?: return members
        case nil: return [:]
        default: throw ParseError(.invalidJSON, "The request body must be a JSON object.")
        }
    }

    /// Query parameters merged from the body and the URL (each URL value JSON-decoded when it parses,
    /// else kept as a string), as Parse reads them; the URL wins.
    func parameters() throws -> [String: JSON] {
        var result: [String: JSON] = [:]
        if case .object(let members)? = body { result = members }
        for (key, text) in query {
            result[key] = (try? JSONParser.parse(text)) ?? .string(text)
        }
        return result
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
