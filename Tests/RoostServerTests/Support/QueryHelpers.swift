import Foundation
import RoostCore
import Testing

/// Shortcuts for the query-language suites (operators, options, include, relations, geo, subqueries,
/// injection), on top of `TestServer.request`.
extension TestServer {
    /// `GET /classes/<C>` with URL parameters, as the caller `token` (a session token) or the master key.
    /// With `viaBody`, the parameters travel as the JS SDK sends them: `POST` with `_method: "GET"` and
    /// `where` as an object, which keeps characters like `&`, `=` or `#` out of the URL.
    func query(_ className: String, _ parameters: [String: JSON] = [:], token: String? = nil, master: Bool = false,
               viaBody: Bool = false) async throws -> TestResponse {
        var headers: [String: String] = [:]
        if let token { headers["X-Parse-Session-Token"] = token }
        if viaBody {
            var body = parameters
            body["_method"] = "GET"
            return try await request("POST", "/classes/\(className)", json: .object(body), headers: headers, master: master)
        }
        var query: [String: String] = [:]
        for (name, value) in parameters { query[name] = value.stringValue ?? value.jsonText }
        return try await request("GET", "/classes/\(className)", headers: headers, master: master, query: query)
    }

    /// The results of a query, in the order the server sent them; records an issue and answers
    /// `[]` when the server refuses it.
    func queryResults(_ className: String, _ parameters: [String: JSON] = [:], token: String? = nil, master: Bool = false,
                      sourceLocation: SourceLocation = #_sourceLocation) async throws -> [JSON] {
        let response = try await query(className, parameters, token: token, master: master)
        guard response.status == 200, let results = response.json["results"]?.arrayValue else {
            Issue.record("query \(parameters.mapValues(\.jsonText)) failed: \(response.status) \(response.text)",
                         sourceLocation: sourceLocation)
            return []
        }
        return results
    }

    /// The `name` of each result, in the order the server sent them.
    func orderedNames(_ className: String, _ parameters: [String: JSON] = [:], key: String = "name", token: String? = nil,
                      master: Bool = false, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String] {
        try await queryResults(className, parameters, token: token, master: master, sourceLocation: sourceLocation)
            .map { $0[key]?.stringValue ?? "?" }
    }

    /// The `name` of each result of `where`, sorted (queries have no default order).
    func names(_ className: String, where constraint: JSON, key: String = "name", token: String? = nil, master: Bool = false,
               sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String] {
        try await orderedNames(className, ["where": constraint], key: key, token: token, master: master,
                               sourceLocation: sourceLocation).sorted()
    }

    /// Signs a user up and returns its id and session token.
    func signUpAccount(_ username: String, password: String = "pw-\(UUID().uuidString)") async throws -> Account {
        let response = try await request("POST", "/users", json: ["username": .string(username), "password": .string(password)])
        guard response.status == 201, let id = response.json["objectId"]?.stringValue,
            let token = response.json["sessionToken"]?.stringValue
        else { throw TestServerError.unexpected(response.status, response.text) }
        return Account(id: id, token: token)
    }

    /// Creates an object as the user with session `token` (or the master key); returns its id.
    func create(_ className: String, _ fields: JSON, token: String?, master: Bool = false) async throws -> String {
        var headers: [String: String] = [:]
        if let token { headers["X-Parse-Session-Token"] = token }
        let response = try await request("POST", "/classes/\(className)", json: fields, headers: headers, master: master)
        guard response.status == 201, let id = response.json["objectId"]?.stringValue else {
            throw TestServerError.unexpected(response.status, response.text)
        }
        return id
    }

    /// `PUT /classes/<C>/<id>`, failing the caller when the server refuses.
    @discardableResult
    func update(_ className: String, _ objectId: String, _ fields: JSON, master: Bool = false) async throws -> TestResponse {
        let response = try await request("PUT", "/classes/\(className)/\(objectId)", json: fields, master: master)
        guard response.status == 200 else { throw TestServerError.unexpected(response.status, response.text) }
        return response
    }
}

/// `{"__type":"GeoPoint",...}`.
func geoPoint(_ latitude: Double, _ longitude: Double) -> JSON {
    ["__type": "GeoPoint", "latitude": .number(latitude), "longitude": .number(longitude)]
}

/// An ACL granting read and write to the given user ids only.
func privateACL(_ userIds: String...) -> JSON {
    .object(Dictionary(uniqueKeysWithValues: userIds.map { ($0, ["read": true, "write": true] as JSON) }))
}

/// The keys of a JSON object, as a set (empty for anything else).
func keySet(_ json: JSON?) -> Set<String> {
    json?.objectValue.map { Set($0.keys) } ?? []
}

/// Records an issue unless `response` is the Parse error `{"code": code, "error": message}` with HTTP 400
/// (`message` nil: any message).
func expectParseError(_ response: TestResponse, _ code: Int, _ message: String? = nil,
                      sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(response.status == 400, "\(response.text)", sourceLocation: sourceLocation)
    #expect(response.code == code, "\(response.text)", sourceLocation: sourceLocation)
    if let message {
        #expect(response.json["error"]?.stringValue == message, sourceLocation: sourceLocation)
    }
}
