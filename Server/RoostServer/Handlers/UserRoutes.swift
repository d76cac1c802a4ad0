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
        router.add("GET", "verifyPassword") { request, context, _ in try LogIn.verifyPassword(request, context: context) }
        router.add("POST", "verifyPassword") { request, context, _ in try LogIn.verifyPassword(request, context: context) }
        router.add("POST", "loginAs") { request, context, _ in try LogIn.logInAs(request, context: context) }
    }

    /// The caller's own user, with the session token it presented; 209 without one.
    static func me(context: RequestContext) throws -> APIResponse {
        guard let caller = context.user else { throw ParseError(.invalidSessionToken, "Invalid session token") }
        let user = try context.read { db in try UserStore.fetch(caller.id, in: db) }
        guard let user else { throw ParseError(.invalidSessionToken, "Invalid session token") }
        return APIResponse(body: try withFileURLs(
            UserStore.wireJSON(user, viewerId: caller.id, isMaster: context.isMaster, sessionToken: caller.sessionToken), context: context))
    }

    /// A user as answered by `/users/me` and the log-ins: with the `url` of each File field, as Parse's
    /// `expandFilesInObject` adds it.
    static func withFileURLs(_ user: JSON, context: RequestContext) throws -> JSON {
        guard let schema = try context.read({ db in try SchemaStore.load(UserStore.className, in: db) }) else { return user }
        return try FileURLs(context: context).expand(user, fields: FileURLs.fields(of: schema))
    }

    /// `ClassRoutes.get` on `_User`, plus the session token when the caller reads their own user.
    static func get(_ userId: String, request: APIRequest, context: RequestContext) throws -> APIResponse {
        var response = try ClassRoutes.get(UserStore.className, userId, request: request, context: context, isSystemRoute: true)
        if let caller = context.user, caller.id == userId {
            response.body = try response.body.setting("sessionToken", to: .string(caller.sessionToken))
        }
        return response
    }

    static func find(_ request: APIRequest, context: RequestContext) throws -> APIResponse {
        try ClassRoutes.find(UserStore.className, request: request, context: context, isSystemRoute: true)
    }
}
