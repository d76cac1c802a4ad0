import RoostCore

/// `/classes/<C>` and `/classes/<C>/<id>`: create, query, get, update, delete.
/// Class-level permissions are checked first; ACLs are part of every query.
enum ClassRoutes {
    static func register(in router: inout Router) {
        router.add("POST", "classes/:className") { request, context, parameters in
            try ObjectWriter.create(parameters["className"], body: try request.bodyObject(), context: context)
        }
        router.add("GET", "classes/:className") { request, context, parameters in
            try find(parameters["className"], request: request, context: context)
        }
        router.add("GET", "classes/:className/:objectId") { request, context, parameters in
            try get(parameters["className"], parameters["objectId"], request: request, context: context)
        }
        router.add("PUT", "classes/:className/:objectId") { request, context, parameters in
            try ObjectWriter.update(parameters["className"], objectId: parameters["objectId"], body: try request.bodyObject(),
                                    context: context)
        }
        router.add("DELETE", "classes/:className/:objectId") { _, context, parameters in
            try delete(parameters["className"], parameters["objectId"], context: context)
        }
    }

    /// - Parameter isSystemRoute: the request came through a system class's own routes (`/roles`).
    static func checkReadableClassName(_ className: String, isSystemRoute: Bool) throws {
        guard Names.isValidClassName(className) else {
            throw ParseError(.invalidClassName, "Invalid classname: \(className), classnames can only have alphanumeric characters and _, and must start with an alpha character ")
        }
        if className.hasPrefix("_"), !isSystemRoute {
            throw ParseError(.operationForbidden, "Clients aren't allowed to read the \(className) collection through this endpoint.")
        }
    }

    /// A system class's schema made (by `make`, which finds it made already too) before its first object is saved; a
    /// read first, so that only the first save takes the writer for it.
    static func ensureSchema(_ className: String, context: RequestContext, _ make: (any SQLConnection) throws -> ClassSchema) throws {
        let exists = try context.read { db in try SchemaStore.load(className, in: db) != nil }
        if !exists { _ = try context.write { db in try make(db) } }
    }

    /// Reading a class that does not exist is refused (119) when clients may not create classes.
    static func checkMissingClassAccess(_ className: String, context: RequestContext) throws {
        // System classes (`_User`, `_Role`...) always exist for Parse, even before their first object.
        if Names.systemClasses.contains(className) { return }
        guard context.isMaster || context.config.allowClientClassCreation else {
            throw ParseError(.operationForbidden, "This user is not allowed to access non-existent class: \(className)")
        }
    }

    static func find(_ className: String, request: APIRequest, context: RequestContext, isSystemRoute: Bool = false) throws -> APIResponse {
        if ObjectWriter.masterOnlyClasses.contains(className) {
            // Parse's internal classes (push and job status...): the master key's alone; Roost keeps none of their objects.
            if !context.isMaster { try ObjectWriter.checkMasterOnlyClass(className, "find") }
            let options = try QueryOptions.parse(try request.parameters())
            return APIResponse(body: options.wantsCount ? ["results": [], "count": 0] : ["results": []])
        }
        try checkReadableClassName(className, isSystemRoute: isSystemRoute)
        try checkFindAllowed(className, context: context)
        let parameters = try request.parameters()
        var options = try QueryOptions.parse(parameters)
        if let key = options.redirectKey {
            options.redirectKey = nil
            if let target = try context.read({ db in try relationTarget(className, key, in: db) }) {
                try checkFindAllowed(target, context: context)
                try beforeFind(target, parameters, count: options.wantsCount, isGet: false, context: context)
                return try tagged(try find(target, options: options, context: context), className: target)
            }
        }
        try beforeFind(className, parameters, count: options.wantsCount, isGet: false, context: context)
        return try find(className, options: options, context: context)
    }

    /// Runs the class's `beforeFind` webhook, if it has one (`Triggers.beforeFind`); a read with none pays one atomic load.
    private static func beforeFind(_ className: String, _ parameters: @autoclosure () -> [String: JSON], count: Bool, isGet: Bool,
                                   context: RequestContext) throws {
        guard try context.storage.anyClassHasBeforeFind() else { return }
        try Triggers(className, context: context).beforeFind(parameters(), count: count, isGet: isGet)
    }

    /// Parse's class rule for finds, whichever route asks (a relation query redirected to the class too):
    /// only the master key lists installations.
    private static func checkFindAllowed(_ className: String, context: RequestContext) throws {
        if className == InstallationRoutes.className, !context.isMaster { throw InstallationRoutes.refused("find") }
    }

    /// Parse's `redirectClassNameForKey`: an SDK that knows a relation's parent but not its target
    /// class (`relation.query()` on an object it did not fetch) names the field; the query runs on
    /// the target class and each result says which class it is. A key that is not a relation keeps the class.
    private static func relationTarget(_ className: String, _ key: String, in db: some SQLQuerying) throws -> String? {
        guard case .relation(let target)? = try SchemaStore.load(className, in: db)?.fields[key] else { return nil }
        return target
    }

    private static func tagged(_ response: APIResponse, className: String) throws -> APIResponse {
        guard case .array(let results)? = response.body["results"] else { return response }
        var response = response
        response.body = try response.body.setting("results", to: .array(results.map { try $0.setting("className", to: .string(className)) }))
        return response
    }

    private static func find(_ className: String, options: QueryOptions, context: RequestContext) throws -> APIResponse {
        do {
            return try find(className, options: options, context: context, createsTextIndexes: true)
        } catch let missing as MissingTextIndexes {
            // As Parse's MongoDB adapter: the first `$text` search of a field creates its text index (`TextIndex`),
            // in a class small enough to index without holding writes long, up to a few per class (`AutoIndexSettings`).
            try context.write { db in
                guard var schema = try SchemaStore.load(className, in: db) else { return }
                let objects = try ReadPermission.count(schema, where: SQLFragment(sql: "1", arguments: []),
                                                       readableBy: nil, in: db)
                for field in missing.fields.sorted()
                where context.storage.autoIndexes.allowsTextIndex(field, of: schema, objects: objects, existing: TextIndex.fields(of: schema).count) {
                    schema = try TextIndex.declareAutomatically(field, in: schema, in: db)
                }
            }
            return try find(className, options: options, context: context, createsTextIndexes: false)
        }
    }

    /// Thrown out of the read when a permitted query searches fields with `$text` that have no text index yet.
    private struct MissingTextIndexes: Error { let fields: Set<String> }

    private static func find(_ className: String, options: QueryOptions, context: RequestContext,
                             createsTextIndexes: Bool) throws -> APIResponse {
        var options = options
        if options.explain { try QueryExplanation.checkAllowed(context: context) }
        let access = QueryAccess(context: context)
        options.find.readableBy = context.aclSubjects
        options.find.authorizeSubquery = access.subqueryAuthorizer
        return try context.read(.eachStatement) { db in
            guard let schema = try SchemaStore.load(className, in: db) else {
                try checkMissingClassAccess(className, context: context)
                var body: [String: JSON] = ["results": []]
                if options.wantsCount { body["count"] = 0 }
                return APIResponse(body: .object(body))
            }
            try restrict(&options, access, in: schema)
            // On PostgreSQL a search without a declared text index scans (`PostgresQueryCompiler+Text`).
            if createsTextIndexes, db.dialect == .sqlite {
                let missing = TextIndex.missing(for: .and([options.find.constraint, options.countConstraint ?? .all]), in: schema)
                    .filter { !context.storage.autoIndexes.textIndexRefused($0, of: schema) }
                if !missing.isEmpty { throw MissingTextIndexes(fields: missing) }
            }
            if options.explain { return try QueryExplanation.answer(options.find, in: schema, db: db) }
            context.storage.autoIndexes.note(options.find, on: schema, storage: context.storage)
            let protected = ClassPermissions.protectedFields(schema, context: context)
            let rules = ClassPermissions.userFieldRules(schema, context: context)
            options.keepRelationMarkers(of: schema)
            options.keepFieldsIncludedByAll(of: schema)
            guard className == UserStore.className || !rules.isEmpty else {
                options.excludeKeys.formUnion(protected)
                return try answer(options, in: schema, context: context, db: db)
            }
            // What is hidden depends on the row: whose user it is, whom its `userField:` fields point to.
            return try answer(options, in: schema, context: context, db: db) { row in
                let rowProtected = rules.isEmpty ? protected
                    : ClassPermissions.protectedFields(protected, of: try row.decoded().fields, rules: rules, context: context)
                var visible = options
                visible.excludeKeys.formUnion(hiddenKeys(of: row.objectId, className: className, protected: rowProtected, context: context))
                return try visible.render(row)
            }
        }
    }

    /// Checks the query against the caller's permissions and narrows it to what they grant. As Parse:
    /// the results are a `get` when `where` is exactly one objectId, else a `find`, and are not looked for
    /// (nor checked) with `limit=0`; the count is a `count`, whatever the limit.
    private static func restrict(_ options: inout QueryOptions, _ access: QueryAccess, in schema: ClassSchema) throws {
        let constraint = options.find.constraint
        try access.checkQueryable(constraint, in: schema)
        try access.checkSortable(options.find.order, constraint: constraint, in: schema)
        if options.find.limit > 0 {
            options.find.constraint = try access.restrict(constraint, options.selectsOneObjectId ? .get : .find, in: schema)
        }
        if options.wantsCount { options.countConstraint = try access.restrict(constraint, .count, in: schema) }
    }

    /// Runs a prepared query on `schema` (also a view, as for sessions): each row rendered (by default as
    /// `options` ask), includes resolved, the count when asked. `--default-limit` and `--max-limit` apply here.
    static func answer(_ options: QueryOptions, in schema: ClassSchema, context: RequestContext, db: some SQLQuerying,
                       render: ((StoredRow) throws -> JSON)? = nil) throws -> APIResponse {
        var options = options
        if !options.namesLimit { options.find.limit = context.config.defaultLimit }
        if let maxLimit = context.config.maxLimit { options.find.limit = min(options.find.limit, maxLimit) }
        var body: [String: JSON] = [:]
        let rows = options.find.limit > 0 ? try ObjectStore.find(options.find, in: schema, in: db) : []
        var results = try rows.map(render ?? options.render)
        if options.keys?.contains(SortKey.textScore) == true, let text = options.find.constraint.scoredTextSearch {
            // `keys=$score`: each result carries its `$text` relevance as `score`, as Parse's MongoDB adapter answers.
            let matcher = TextMatcher(text.search)
            let path = text.key.split(separator: ".").map(String.init)  // The searched value may sit inside an Object field.
            results = try zip(rows, results).map { row, result in
                let value = path.dropFirst().reduce(try row.decoded().fields[path[0]]) { value, key in value?[key] }
                return try result.setting("score", to: .number(matcher.score(value)))
            }
        }
        let fileFields = FileURLs.fields(of: schema)
        if !fileFields.isEmpty {
            let urls = FileURLs(context: context)
            results = try results.map { try urls.expand($0, fields: fileFields) }
        }
        if !options.include.isEmpty {
            results = try IncludeResolver(context: context, db: db).resolve(results, schema: schema, paths: options.include, keys: options.includeKeys,
                                                                         excluded: options.includeExcludedKeys)
        }
        body["results"] = .array(results)
        if options.wantsCount {
            var count = options.find
            if let constraint = options.countConstraint { count.constraint = constraint }
            body["count"] = .number(Double(try ObjectStore.count(count, in: schema, in: db)))
        }
        return APIResponse(body: .object(body))
    }

    /// The fields of one object the caller may not see: the class's protected fields (on `_User` other users'
    /// `email` among them, unless an entry shows it) and other users' `authData`. A user's own `_User` row shows
    /// everything (as Parse's `filterSensitiveData`).
    static func hiddenKeys(of objectId: String, className: String, protected: Set<String>, context: RequestContext) -> Set<String> {
        guard className == UserStore.className else { return protected }
        if context.user?.id == objectId { return [] }
        return context.isMaster ? protected : protected.union([UserStore.authDataField])
    }

    static func get(_ className: String, _ objectId: String, request: APIRequest, context: RequestContext,
                    isSystemRoute: Bool = false) throws -> APIResponse {
        if ObjectWriter.masterOnlyClasses.contains(className) {
            if !context.isMaster { try ObjectWriter.checkMasterOnlyClass(className, "get") }
            throw ObjectWriter.objectNotFound
        }
        try checkReadableClassName(className, isSystemRoute: isSystemRoute)
        let parameters = try request.parameters()
        var options = try QueryOptions.parse(parameters, isGet: true)
        try beforeFind(className, parameters.merging(["where": ["objectId": .string(objectId)]]) { $1 }, count: false, isGet: true,
                       context: context)
        let object = try context.read(.eachStatement) { db -> JSON? in
            guard let schema = try SchemaStore.load(className, in: db) else {
                try checkMissingClassAccess(className, context: context)
                return nil
            }
            let grant = try ClassPermissions.check(.get, schema, context: context)
            var protected = ClassPermissions.protectedFields(schema, context: context)
            options.keepRelationMarkers(of: schema)
            options.keepFieldsIncludedByAll(of: schema)
            guard let row = try ObjectStore.fetch(objectId, from: schema, readableBy: context.aclSubjects, in: db) else { return nil }
            if grant != .all, !ClassPermissions.allows(grant, try row.decoded(), context: context) { return nil }
            let rules = ClassPermissions.userFieldRules(schema, context: context)
            if !rules.isEmpty {
                protected = ClassPermissions.protectedFields(protected, of: try row.decoded().fields, rules: rules, context: context)
            }
            options.excludeKeys.formUnion(hiddenKeys(of: objectId, className: className, protected: protected, context: context))
            let object = try FileURLs(context: context).expand(try options.render(row), fields: FileURLs.fields(of: schema))
            if options.include.isEmpty { return object }
            return try IncludeResolver(context: context, db: db).resolve([object], schema: schema, paths: options.include, keys: options.includeKeys,
                                                                         excluded: options.includeExcludedKeys).first
        }
        guard let object else { throw ObjectWriter.objectNotFound }
        return APIResponse(body: object)
    }

    static func delete(_ className: String, _ objectId: String, context: RequestContext, isSystemRoute: Bool = false) throws -> APIResponse {
        if !context.isMaster { try ObjectWriter.checkMasterOnlyClass(className, "delete") }
        if !isSystemRoute { try ObjectWriter.checkClientClassName(className) }
        let triggers = try Triggers(className, context: context)
        if triggers.has("beforeDelete") {
            try triggers.beforeDelete(try triggers.current(objectId, for: .delete).wireJSON(excluding: []))
        }
        let deleted = try context.write { db -> StoredObject in
            // An object the caller may not write is answered as missing, as Parse does.
            guard let schema = try SchemaStore.load(className, in: db) else { throw ObjectWriter.objectNotFound }
            let grant = try ClassPermissions.check(.delete, schema, context: context)
            guard let object = try ObjectStore.fetch(objectId, from: schema, in: db)?.decoded(),
                context.canWrite(object.acl), ClassPermissions.allows(grant, object, context: context)
            else { throw ObjectWriter.objectNotFound }
            _ = try ObjectStore.delete(objectId, from: schema, in: db)
            try RelationStore.deleteAll(className: className, objectId: objectId, in: db)
            return object
        }
        triggers.afterDelete(deleted.wireJSON(excluding: []))
        return APIResponse(body: [:])
    }
}
