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

    /// The body as an object; a write needs one.
    /// - Throws: `ParseError` 107 when the body is missing or not an object.
    func bodyObject() throws -> [String: JSON] {
        switch body {
        case .object(let members)?: return members
        case nil: return [:]
        default: throw ParseError(.invalidJSON, "The request body must be a JSON object.")
        }
    }

    /// Query parameters merged from the URL (each value JSON-decoded when it parses, else kept as a string)
    /// and the body, as Parse reads them; the body wins.
    func parameters() throws -> [String: JSON] {
        var result: [String: JSON] = [:]
        for (key, text) in query {
            result[key] = (try? JSONParser.parse(text)) ?? .string(text)
        }
        if case .object(let members)? = body {
            result.merge(members) { _, fromBody in fromBody }
        }
        return result
    }
}

/// What a route handler answers: a status, a JSON body, extra headers.
struct APIResponse {
    var status: Int = 200
    var body: JSON
    var headers: [(String, String)] = []
}
