import RoostCore

/// `GET /aggregate/<C>` (master key), as Parse's `AggregateRouter`: `distinct=<field>` with an
/// optional `where`, or a pipeline of MongoDB stages (see `Aggregation`), given as `pipeline` or
/// as stage parameters of their own. `AggregationPlan` answers the leading stages in SQL (filters, groups, counts,
/// sorts and pages) and the rest in memory.
enum AggregateRoutes {
    static func register(in router: inout Router) {
        router.add("GET", "aggregate/:className") { request, context, parameters in
            try context.requireMaster()
            return try aggregate(parameters["className"], request: request, context: context)
        }
    }

    /// Parameters that are options, not stages.
    private static let optionNames: Set<String> = ["distinct", "where", "pipeline", "hint", "explain", "comment", "readPreference",
                                                   "includeReadPreference", "subqueryReadPreference", "rawValues", "rawFieldNames"]
    /// The order of stages given as a JSON object, whose decoded keys keep no order (see `ordered`).
    private static let stageOrder = ["$match", "$unwind", "$group", "$sort", "$skip", "$limit", "$project", "$count"]

    static func aggregate(_ className: String, request: APIRequest, context: RequestContext) throws -> APIResponse {
        try ClassRoutes.checkReadableClassName(className, isSystemRoute: true)
        var parameters = try request.parameters()
        // Test-only (`ServerConfig.aggregateInMemoryParameter`): the whole pipeline in memory, to compare with SQL's answers.
        let inMemory = context.config.aggregateInMemoryParameter && parameters.removeValue(forKey: inMemoryParameter) != nil
        let pipeline: [JSON]
        switch parameters["pipeline"] {
        case .array(let stages)?: pipeline = stages
        case .object(let stages)?: pipeline = ordered(stages)
        case nil:
            if case .array(let stages)? = request.body {  // The body itself (Parse's `body.pipeline || body`).
                pipeline = stages
            } else {
                pipeline = ordered(parameters.filter { !optionNames.contains($0.key) }, writtenIn: request)
            }
        default: throw ParseError(.invalidQuery, "pipeline must be an array of stages")
        }
        // With `distinct`, Parse's database ignores the stages (their names are still checked).
        if let name = pipeline.compactMap({ $0.objectValue?.keys.first }).first(where: { !$0.hasPrefix("$") }) {
            throw ParseError(.invalidQuery, "Invalid aggregate stage '\(name)'.")
        }
        let aggregation = try Aggregation(pipeline: parameters["distinct"] == nil ? pipeline : [])
        var options = try QueryOptions.parse(parameters["where"].map { ["where": $0] } ?? [:])
        options.find.limit = Int(Int32.max)
        if let distinct = parameters["distinct"] {
            guard let field = distinct.stringValue ?? distinct.numberValue.map({ JSON.number($0).jsonText }) else {
                throw ParseError(.invalidQuery, "distinct must be a field name")
            }
            let values = try context.read { db -> [JSON] in
                guard let schema = try SchemaStore.load(className, in: db) else { return [] }
                return try AggregationPlan.distinct(field, options.find, in: schema, in: db, inMemory: inMemory)
            }
            return APIResponse(body: ["results": .array(values)])
        }
        let results = try context.read { db -> [Aggregation.Document] in
            guard let schema = try SchemaStore.load(className, in: db) else { return try aggregation.run([]) }
            let plan = AggregationPlan(aggregation, where: options.find.constraint, schema: schema, dialect: db.dialect,
                                       inMemory: inMemory)
            return try plan.run(options.find, in: schema, in: db)
        }
        let urls = FileURLs(context: context)
        return APIResponse(body: ["results": .array(results.map { .object(urls.expandTopLevel($0)) })])
    }

    /// The parameter `ServerConfig.aggregateInMemoryParameter` turns on.
    static let inMemoryParameter = "roostInMemory"

    /// Stages given as parameters, in the order Parse runs them: its `Object.assign(body, query)` puts the body's
    /// first, then the URL's as written (`?$group=...&$match=...` groups, then filters the groups). A JSON object's
    /// keys (the body's, or `pipeline`'s) keep no order once decoded: those run in `stageOrder`.
    private static func ordered(_ stages: [String: JSON], writtenIn request: APIRequest? = nil) -> [JSON] {
        let fixed = stages.keys.sorted {
            (stageOrder.firstIndex(of: $0) ?? Int.max, $0) < (stageOrder.firstIndex(of: $1) ?? Int.max, $1)
        }
        let written = request?.target.map(HTTPRequest.queryKeys(of:)) ?? []
        let fromBody = fixed.filter { request?.body?.objectValue?[$0] != nil || !written.contains($0) }
        let fromURL = written.filter { stages[$0] != nil && !fromBody.contains($0) }
        return (fromBody + fromURL).compactMap { name in stages[name].map { [name: $0] } }
    }
}
