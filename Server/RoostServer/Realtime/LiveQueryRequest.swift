import RoostCore

/// A client's LiveQuery message, checked as parse-server checks it against `RequestSchema.js` (tv4):
/// a failure is error code 1 with tv4's message. Pure: nothing here knows about sockets or users.
enum LiveQueryRequest: Equatable {
    struct Connect: Equatable {
        var applicationId: String
        var masterKey: String?
        var clientKey: String?
        var javascriptKey: String?
        var windowsKey: String?
        var restAPIKey: String?
        var sessionToken: String?
        var installationId: String?
    }

    struct Subscribe: Equatable {
        var requestId: Double
        var className: String
        var whereClause: [String: JSON]
        var keys: [String]?
        var watch: [String]?
        var sessionToken: String?
        /// Roost's resume: the last change `seq` the client has processed for this subscription.
        var since: Int64? = nil
    }

    case connect(Connect)
    case subscribe(Subscribe)
    /// An `update`: the subscription `requestId` is replaced (parse-server: a silent unsubscribe, then a subscribe).
    case update(Subscribe)
    case unsubscribe(requestId: Double)
    /// parse-server's newer `query` op: the subscription's current matches, answered by `result`.
    case query(requestId: Double)

    /// tv4's message for the first rule the message breaks.
    struct SchemaError: Error, Equatable {
        let message: String
    }

    /// The request in `message` (a JSON object).
    /// - Throws: `SchemaError` as tv4 would report it for parse-server's schema.
    static func parse(_ message: JSON) throws(SchemaError) -> LiveQueryRequest {
        guard case .object(let members) = message else { throw invalidType(message, expected: "object") }
        guard let opValue = members["op"] else { throw SchemaError(message: "Missing required property: op") }
        guard case .string(let op) = opValue else { throw invalidType(opValue, expected: "string") }
        switch op {
        case "connect":
            try requireOnly(["op", "applicationId", "javascriptKey", "masterKey", "clientKey", "windowsKey", "restAPIKey",
                             "sessionToken", "installationId"], required: ["op", "applicationId"], in: members)
            return .connect(Connect(
                applicationId: try string("applicationId", in: members)!,
                masterKey: try string("masterKey", in: members), clientKey: try string("clientKey", in: members),
                javascriptKey: try string("javascriptKey", in: members), windowsKey: try string("windowsKey", in: members),
                restAPIKey: try string("restAPIKey", in: members), sessionToken: try string("sessionToken", in: members),
                installationId: try string("installationId", in: members)))
        case "subscribe", "update":
            try requireOnly(["op", "requestId", "query", "sessionToken", "since"], required: ["op", "requestId", "query"], in: members)
            let subscribe = try subscription(members)
            return op == "subscribe" ? .subscribe(subscribe) : .update(subscribe)
        case "unsubscribe":
            try requireOnly(["op", "requestId"], required: ["op", "requestId"], in: members)
            return .unsubscribe(requestId: try number("requestId", in: members)!)
        case "query":
            try requireOnly(["op", "requestId"], required: ["op", "requestId"], in: members)
            return .query(requestId: try number("requestId", in: members)!)
        default:
            throw SchemaError(message: "No enum match for: \(opValue.jsonText)")
        }
    }

    private static func subscription(_ members: [String: JSON]) throws(SchemaError) -> Subscribe {
        let requestId = try number("requestId", in: members)!
        let sessionToken = try string("sessionToken", in: members)
        let queryValue = members["query"]!
        guard case .object(var query) = queryValue else { throw invalidType(queryValue, expected: "object") }
        // Parse-Swift 4 sends the keys as `fields` (parse-server's 2016 schema named them so).
        if query["keys"] == nil, let fields = query.removeValue(forKey: "fields") { query["keys"] = fields }
        try requireOnly(["className", "where", "keys", "watch"], required: ["where", "className"], in: query)
        let className = try string("className", in: query)!
        let whereValue = query["where"]!
        guard case .object(let whereClause) = whereValue else { throw invalidType(whereValue, expected: "object") }
        return Subscribe(requestId: requestId, className: className, whereClause: whereClause,
                         keys: try uniqueStrings("keys", in: query), watch: try uniqueStrings("watch", in: query),
                         sessionToken: sessionToken, since: try since(members))
    }

    /// `since`: a whole number from 0 (a `seq` the server gave).
    private static func since(_ members: [String: JSON]) throws(SchemaError) -> Int64? {
        guard let value = try number("since", in: members) else { return nil }
        guard value.rounded() == value else { throw invalidType(.number(value), expected: "integer") }
        guard value >= 0 else { throw SchemaError(message: "Value \(LiveQueryServer.number(value)) is less than minimum 0") }
        guard value < 9_007_199_254_740_992 else { throw SchemaError(message: "Value \(LiveQueryServer.number(value)) is greater than maximum 9007199254740991") }
        return Int64(value)
    }

    /// tv4 checks `required` before `additionalProperties`.
    private static func requireOnly(_ allowed: Set<String>, required: [String], in members: [String: JSON]) throws(SchemaError) {
        for key in required where members[key] == nil { throw SchemaError(message: "Missing required property: \(key)") }
        guard members.keys.allSatisfy(allowed.contains) else { throw SchemaError(message: "Additional properties not allowed") }
    }

    private static func string(_ key: String, in members: [String: JSON]) throws(SchemaError) -> String? {
        guard let value = members[key] else { return nil }
        guard case .string(let text) = value else { throw invalidType(value, expected: "string") }
        return text
    }

    private static func number(_ key: String, in members: [String: JSON]) throws(SchemaError) -> Double? {
        guard let value = members[key] else { return nil }
        guard case .number(let number) = value else { throw invalidType(value, expected: "number") }
        return number
    }

    /// `keys` and `watch`: arrays of strings, at least one, no repeats.
    private static func uniqueStrings(_ key: String, in members: [String: JSON]) throws(SchemaError) -> [String]? {
        guard let value = members[key] else { return nil }
        guard case .array(let items) = value else { throw invalidType(value, expected: "array") }
        guard !items.isEmpty else { throw SchemaError(message: "Array is too short (0), minimum 1") }
        // tv4 checks `uniqueItems` before the items' type, pair by pair from the first item.
        for i in items.indices {
            if let j = items[(i + 1)...].firstIndex(of: items[i]) {
                throw SchemaError(message: "Array items are not unique (indices \(i) and \(j))")
            }
        }
        return try items.map { item throws(SchemaError) in
            guard case .string(let text) = item else { throw invalidType(item, expected: "string") }
            return text
        }
    }

    private static func invalidType(_ value: JSON, expected: String) -> SchemaError {
        let type = switch value {
        case .null: "null"
        case .bool: "boolean"
        case .number: "number"  // tv4 names the value's `typeof`: a whole number too.
        case .string: "string"
        case .array: "array"
        case .object, .encodedFragment: "object"
        }
        return SchemaError(message: "Invalid type: \(type) (expected \(expected))")
    }
}
