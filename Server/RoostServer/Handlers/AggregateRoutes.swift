import RoostCore

/// `GET /aggregate/<C>` (master key), as Parse's `AggregateRouter`: `distinct=<field>` with an
/// optional `where`, or a pipeline of MongoDB stages (see `Aggregation`), given as `pipeline` or
/// as stage parameters of their own. The matching objects are read once and aggregated in memory:
/// meant for the dashboard-sized questions this master-key endpoint serves.
enum AggregateRoutes {
    static func register(in router: inout Router) {
        router.add("GET", "aggregate/:className") { request, context, parameters in
            try context.requireMaster()
            return try aggregate(parameters["className"], request: request, context: context)
        }
    }

    /// Parameters that are options, not stages.
    private static let optionNames: Set<String> = ["distinct", "where", "pipeline", "hint", "explain", "readPreference",
                                                   "includeReadPreference", "subqueryReadPreference", "rawValues", "rawFieldNames"]
    /// Stage parameters lose their written order in a URL's dictionary; they run in this one.
    private static let stageOrder = ["$match", "$unwind", "$group", "$sort", "$skip", "$limit", "$project", "$count"]

    private static func aggregate(_ className: String, request: APIRequest, context: RequestContext) throws -> APIResponse {
        try ClassRoutes.checkReadableClassName(className, isSystemRoute: true)
        let parameters = try request.parameters()
        let pipeline: [JSON]
        switch parameters["pipeline"] {
        case .array(let stages)?: pipeline = stages
        case .object(let stages)?: pipeline = ordered(stages)
        case nil: pipeline = ordered(parameters.filter { !optionNames.contains($0.key) })
        default: throw ParseError(.invalidQuery, "pipeline must be an array of stages")
        }
        // With `distinct`, Parse's database ignores the stages (their names are still checked).
        if let name = pipeline.compactMap({ $0.objectValue?.keys.first }).first(where: { !$0.hasPrefix("$") }) {
            throw ParseError(.invalidQuery, "Invalid aggregate stage '\(name)'.")
        }
        let aggregation = try Aggregation(pipeline: parameters["distinct"] == nil ? pipeline : [])
        var options = try QueryOptions.parse(parameters["where"].map { ["where": $0] } ?? [:])
        options.find.limit = Int(Int32.max)
        let documents = try context.read { db -> [Aggregation.Document] in
            guard let schema = try SchemaStore.load(className, in: db) else { return [] }
            return try ObjectStore.find(options.find, in: schema, in: db).map { row in
                try row.decoded().wireJSON(excluding: []).objectValue ?? [:]
            }
        }
        if let distinct = parameters["distinct"] {
            guard let field = distinct.stringValue ?? distinct.numberValue.map({ JSON.number($0).jsonText }) else {
                throw ParseError(.invalidQuery, "distinct must be a field name")
            }
            return APIResponse(body: ["results": .array(Aggregation.distinct(field, in: documents))])
        }
        let urls = FileURLs(context: context)
        return APIResponse(body: ["results": .array(try aggregation.run(documents).map { .object(urls.expandTopLevel($0)) })])
    }

    private static func ordered(_ stages: [String: JSON]) -> [JSON] {
        stages.sorted { (stageOrder.firstIndex(of: $0.key) ?? Int.max, $0.key) < (stageOrder.firstIndex(of: $1.key) ?? Int.max, $1.key) }
            .map { [$0.key: $0.value] }
    }
}
