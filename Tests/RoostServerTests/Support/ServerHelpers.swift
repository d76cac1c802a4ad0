import Foundation
import RoostCore

/// Shortcuts shared by the end-to-end suites, on top of `TestServer.request`.
extension TestServer {
    /// `GET /classes/<C>` with URL parameters; JSON values are sent as their JSON text, strings as they are.
    func find(_ className: String, _ parameters: [String: JSON] = [:], master: Bool = false) async throws -> TestResponse {
        var query: [String: String] = [:]
        for (name, value) in parameters { query[name] = value.stringValue ?? value.jsonText }
        return try await request("GET", "/classes/\(className)", master: master, query: query)
    }

    /// The `results` of a query, failing when the server refuses it.
    func results(_ className: String, _ parameters: [String: JSON] = [:]) async throws -> [JSON] {
        let response = try await find(className, parameters)
        guard response.status == 200, let results = response.json["results"]?.arrayValue else {
            throw TestServerError.unexpected(response.status, response.text)
        }
        return results
    }

    /// The values of `key` in the results of a query, sorted (queries have no default order).
    func values(_ key: String, of className: String, where constraint: JSON) async throws -> [String] {
        try await results(className, ["where": constraint]).map { $0[key]?.stringValue ?? "?" }.sorted()
    }

    /// Creates the objects through `/batch` (at most 50 at a time) and returns their ids in order.
    func createAll(_ className: String, _ objects: [JSON]) async throws -> [String] {
        var ids: [String] = []
        var start = 0
        while start < objects.count {
            let chunk = objects[start..<min(start + 50, objects.count)]
            let requests = chunk.map { body -> JSON in
                ["method": "POST", "path": .string("/parse/classes/\(className)"), "body": body]
            }
            let response = try await request("POST", "/batch", json: ["requests": .array(requests)])
            guard response.status == 200, let items = response.json.arrayValue, items.count == chunk.count else {
                throw TestServerError.unexpected(response.status, response.text)
            }
            for item in items {
                guard let id = item["success"]?["objectId"]?.stringValue else {
                    throw TestServerError.unexpected(response.status, response.text)
                }
                ids.append(id)
            }
            start += chunk.count
        }
        return ids
    }

    /// The stored object, as `GET /classes/<C>/<id>` answers it (`.null` when the request fails).
    func fetch(_ className: String, _ objectId: String) async throws -> JSON {
        let response = try await request("GET", "/classes/\(className)/\(objectId)")
        return response.status == 200 ? response.json : .null
    }
}

/// `{"__type":"Pointer",...}`.
func pointer(_ className: String, _ objectId: String) -> JSON {
    ["__type": "Pointer", "className": .string(className), "objectId": .string(objectId)]
}

/// `{"__type":"Date","iso":...}`.
func date(_ iso: String) -> JSON { ["__type": "Date", "iso": .string(iso)] }

/// Whether `text` is a date as Parse writes it: `YYYY-MM-DDTHH:MM:SS.sssZ`.
func isParseISODate(_ text: String?) -> Bool {
    guard let text else { return false }
    return text.range(of: #"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$"#, options: .regularExpression) != nil
}

/// Class-level permissions open to everyone except for `overrides`: Parse locks every operation a
/// `classLevelPermissions` leaves out to the master key, so a test that restricts one names the rest.
func openPermissions(_ overrides: [String: JSON]) -> JSON {
    var entries: [String: JSON] = [:]
    for operation in ["find", "count", "get", "create", "update", "delete", "addField"] { entries[operation] = ["*": true] }
    entries.merge(overrides) { $1 }
    return .object(entries)
}
