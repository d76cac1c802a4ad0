import RoostCore

/// `/push_audiences` and `/classes/_Audience`: the saved push audiences Parse Dashboard keeps, as Parse Server's
/// `AudiencesRouter` does. An audience is an object of `_Audience`, whose fields are fixed (`name`, `query` — a
/// `where` stored as a JSON string —, `lastUsed`, `timesUsed`): another field is 107 `Could not add field <f>`, master
/// key or not. Through `/classes/_Audience` a client may save, change and delete audiences (as its permissions say), but
/// finds nothing and gets none: Parse reads a class's schema for a query from the database unless the master key is
/// given, and keeps none there for its volatile classes, so to clients the class does not exist (the PHP SDK's tests
/// count on it). `/push_audiences` takes the master key only and answers `query` parsed.
enum AudienceRoutes {
    static let className = "_Audience"
    static let defaultFields: [String: FieldType] = ["name": .string, "query": .string, "lastUsed": .date, "timesUsed": .number]

    static func register(in router: inout Router) {
        for (base, masterOnly) in [("classes/_Audience", false), ("push_audiences", true)] {
            let checked = { (context: RequestContext) throws in
                if masterOnly { try context.requireMaster() }
            }
            router.add("POST", base) { request, context, _ in
                try checked(context)
                try ensureSchema(context)
                return try ObjectWriter.create(className, body: try request.bodyObject(), context: context, rules: Rules())
            }
            router.add("GET", base) { request, context, _ in
                try checked(context)
                if !context.isMaster {  // Parse's volatile class has no stored schema, which clients' reads look up.
                    let options = try QueryOptions.parse(try request.parameters())
                    return APIResponse(body: options.wantsCount ? ["results": [], "count": 0] : ["results": []])
                }
                let found = try ClassRoutes.find(className, request: request, context: context, isSystemRoute: true)
                return masterOnly ? withQueriesParsed(found) : found
            }
            router.add("GET", base + "/:objectId") { request, context, parameters in
                try checked(context)
                if !context.isMaster { throw ObjectWriter.objectNotFound }  // As a find without the master key.
                let found = try ClassRoutes.get(className, parameters["objectId"], request: request, context: context, isSystemRoute: true)
                return masterOnly ? withQueryParsed(found) : found
            }
            router.add("PUT", base + "/:objectId") { request, context, parameters in
                try checked(context)
                return try ObjectWriter.update(className, objectId: parameters["objectId"], body: try request.bodyObject(),
                                               context: context, rules: Rules())
            }
            router.add("DELETE", base + "/:objectId") { _, context, parameters in
                try checked(context)
                return try ClassRoutes.delete(className, parameters["objectId"], context: context, isSystemRoute: true)
            }
        }
    }

    /// `_Audience` exists with its fixed fields before the first audience is saved.
    private static func ensureSchema(_ context: RequestContext) throws {
        try ClassRoutes.ensureSchema(className, context: context) { db in
            try SchemaStore.load(className, in: db) ?? SchemaStore.create(className, fields: defaultFields, classLevelPermissions: nil, in: db)
        }
    }

    /// Each result's `query` string as the JSON it holds (Parse's `JSON.parse(item.query)`); one that holds no JSON stays.
    private static func withQueriesParsed(_ response: APIResponse) -> APIResponse {
        guard case .object(var body) = response.body, case .array(let results)? = body["results"] else { return response }
        body["results"] = .array(results.map(parsingQuery))
        var parsed = response
        parsed.body = .object(body)
        return parsed
    }

    private static func withQueryParsed(_ response: APIResponse) -> APIResponse {
        var parsed = response
        parsed.body = parsingQuery(response.body)
        return parsed
    }

    private static func parsingQuery(_ audience: JSON) -> JSON {
        var audience = audience
        if case .encodedFragment(let bytes) = audience, let decoded = try? JSONParser.parse(bytes) { audience = decoded }  // As stored.
        guard case .object(var fields) = audience, case .string(let text)? = fields["query"],
            let query = try? JSONParser.parse(text) else { return audience }
        fields["query"] = query
        return .object(fields)
    }

    /// Parse keeps `_Audience`'s schema fixed (`SchemaController.ensureFields`).
    struct Rules: SaveRules {
        func check(_ changes: ObjectWriter.Changes, existing: StoredObject?) throws {
            for key in changes.operations.keys {
                let field = String(key.prefix { $0 != "." })
                if defaultFields[field] == nil { throw ParseError(.invalidJSON, "Could not add field \(field)") }
            }
        }
    }
}
