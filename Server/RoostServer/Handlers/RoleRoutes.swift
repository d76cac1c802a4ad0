import RoostCore

/// `/roles` and `/classes/_Role`: roles are objects with `RoleRules` on top of the generic save path.
enum RoleRoutes {
    static func register(in router: inout Router) {
        for base in ["roles", "classes/_Role"] {
            router.add("POST", base) { request, context, _ in
                try ensureSchema(context)
                return try ObjectWriter.create(RoleStore.className, body: try request.bodyObject(), context: context, rules: RoleRules())
            }
            router.add("GET", base) { request, context, _ in
                try ClassRoutes.find(RoleStore.className, request: request, context: context, isSystemRoute: true)
            }
            router.add("GET", base + "/:objectId") { request, context, parameters in
                try ClassRoutes.get(RoleStore.className, parameters["objectId"], request: request, context: context, isSystemRoute: true)
            }
            router.add("PUT", base + "/:objectId") { request, context, parameters in
                try ObjectWriter.update(RoleStore.className, objectId: parameters["objectId"], body: try request.bodyObject(),
                                        context: context, rules: RoleRules())
            }
            router.add("DELETE", base + "/:objectId") { _, context, parameters in
                try ClassRoutes.delete(RoleStore.className, parameters["objectId"], context: context, isSystemRoute: true)
            }
        }
    }

    /// `_Role` exists with its unique name index before the first role is saved.
    private static func ensureSchema(_ context: RequestContext) throws {
        try ClassRoutes.ensureSchema(RoleStore.className, context: context) { db in try RoleStore.schema(in: db) }
    }
}
