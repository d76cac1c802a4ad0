import RoostCore

/// `/users`, `/login`, `/logout`; `/classes/_User` answers the same.
enum UserRoutes {
    static func register(in router: inout Router) {
        for base in ["users", "classes/_User"] {
            router.add("POST", base) { request, context, _ in try SignUp.handle(try request.bodyObject(), context: context) }
            router.add("GET", base) { request, context, _ in try find(request, context: context) }
            if base == "users" {
                router.add("GET", "users/me") { _, context, _ in try me(context: context) }
            }
            router.add("GET", base + "/:objectId") { request, context, parameters in
                try get(parameters["objectId"], request: request, context: context)
            }
            router.add("PUT", base + "/:objectId") { request, context, parameters in
                try UserUpdate.handle(parameters["objectId"], body: try request.bodyObject(), context: context)
            }
            router.add("DELETE", base + "/:objectId") { _, context, parameters in
                try UserUpdate.delete(parameters["objectId"], context: context)
            }
        }
        router.add("GET", "login") { request, context, _ in try LogIn.handle(request, context: context) }
        router.add("POST", "login") { request, context, _ in try LogIn.handle(request, context: context) }
        router.add("POST", "logout") { _, context, _ in try LogIn.logOut(context: context) }
    }

    /// The caller's own user, with the session token it presented; 209 without one.
    static func me(context: RequestContext) throws -> APIResponse {
        guard let caller = context.user else { throw ParseError(.invalidSessionToken, "Invalid session token") }
        let user = try context.read { db -> StoredObject? in
            guard let schema = try SchemaStore.load(UserStore.className, in: db) else { return nil }
            return try ObjectStore.fetch(caller.id, from: schema, in: db)?.decoded()
        }
        guard let user else { throw ParseError(.invalidSessionToken, "Invalid session token") }
        return APIResponse(body: UserStore.wireJSON(user, viewerId: caller.id, isMaster: context.isMaster, sessionToken: caller.sessionToken))
    }

    /// As `ClassRoutes.get`, with `_User`'s own rendering (no password, email and authData for the owner only).
    static func get(_ userId: String, request: APIRequest, context: RequestContext) throws -> APIResponse {
        var options = try QueryOptions.parse(try request.parameters(), isGet: true)
        let token = context.user?.id == userId ? context.user?.sessionToken : nil
        let user = try context.read { db -> JSON? in
            guard let schema = try SchemaStore.load(UserStore.className, in: db) else { return nil }
            let grant = try ClassPermissions.check(.get, schema, context: context)
            // As Parse: a user's own row shows its protected fields.
            if userId != context.user?.id { options.excludeKeys.formUnion(ClassPermissions.protectedFields(schema, context: context)) }
            guard let row = try ObjectStore.fetch(userId, from: schema, readableBy: context.aclSubjects, in: db) else { return nil }
            let user = try row.decoded()
            if grant != .all, !ClassPermissions.allows(grant, user, context: context) { return nil }
            let object = project(UserStore.wireJSON(user, viewerId: context.user?.id, isMaster: context.isMaster, sessionToken: token), options)
            if options.include.isEmpty { return object }
            return try IncludeResolver(context: context, db: db).resolve([object], schema: schema, paths: options.include, keys: options.includeKeys).first
        }
        guard let user else { throw ObjectWriter.objectNotFound }
        return APIResponse(body: user)
    }

    /// As `ClassRoutes.find` (class permissions, protected fields, `include`, `--max-limit`), with `_User`'s own rendering.
    static func find(_ request: APIRequest, context: RequestContext) throws -> APIResponse {
        var options = try QueryOptions.parse(try request.parameters())
        options.find.readableBy = context.aclSubjects
        options.find.authorizeSubquery = { schema in _ = try ClassPermissions.check(.find, schema, context: context) }
        if let maxLimit = context.config.maxLimit { options.find.limit = min(options.find.limit, maxLimit) }
        return try context.read { db in
            guard let schema = try SchemaStore.load(UserStore.className, in: db) else {
                return APIResponse(body: options.wantsCount ? ["results": [], "count": 0] : ["results": []])
            }
            let operation: ClassPermissions.Operation = options.wantsCount && options.find.limit == 0 ? .count : .find
            let grant = try ClassPermissions.check(operation, schema, context: context)
            if let owned = ClassPermissions.constraint(for: grant, context: context) {
                options.find.constraint = .and([options.find.constraint, owned])
            }
            let protected = ClassPermissions.protectedFields(schema, context: context)
            var body: [String: JSON] = [:]
            let rows = options.find.limit > 0 ? try ObjectStore.find(options.find, in: schema, in: db) : []
            var results = try rows.map { row in
                var visible = options
                // As Parse: a user's own row shows its protected fields.
                if row.objectId != context.user?.id { visible.excludeKeys.formUnion(protected) }
                return project(UserStore.wireJSON(try row.decoded(), viewerId: context.user?.id, isMaster: context.isMaster), visible)
            }
            if !options.include.isEmpty {
                results = try IncludeResolver(context: context, db: db).resolve(results, schema: schema, paths: options.include, keys: options.includeKeys)
            }
            body["results"] = .array(results)
            if options.wantsCount {
                body["count"] = .number(Double(try ObjectStore.count(options.find, in: schema, in: db)))
            }
            return APIResponse(body: .object(body))
        }
    }

    /// Applies `keys`/`excludeKeys` to an already visible user.
    private static func project(_ user: JSON, _ options: QueryOptions) -> JSON {
        guard case .object(var members) = user else { return user }
        let always: Set<String> = ["objectId", "createdAt", "updatedAt", "ACL", "sessionToken"]
        if let keys = options.keys { members = members.filter { keys.contains($0.key) || always.contains($0.key) } }
        for key in options.excludeKeys where !always.contains(key) { members.removeValue(forKey: key) }
        return .object(members)
    }
}
