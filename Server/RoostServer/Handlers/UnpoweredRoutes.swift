import RoostCore

/// Parse endpoints whose machinery Roost does not have (jobs, push, analytics), answered
/// exactly as Parse Server answers them when that machinery is not configured, so clients and
/// the REST guide's examples get the replies they expect rather than an unknown route.
enum UnpoweredRoutes {
    static func register(in router: inout Router) {
        // Jobs are Cloud Code too; Parse checks the master key first (`FunctionsRouter.handleCloudJob`).
        for path in ["jobs", "jobs/:name"] {
            router.add("POST", path) { _, context, _ in
                try context.requireMaster()
                throw ParseError(.scriptFailed, "Invalid job.")
            }
        }
        // No scheduled jobs: the lists are empty (`CloudCodeRouter`).
        router.add("GET", "cloud_code/jobs") { _, context, _ in
            try context.requireMaster()
            return APIResponse(body: [])
        }
        router.add("GET", "cloud_code/jobs/data") { _, context, _ in
            try context.requireMaster()
            return APIResponse(body: ["in_use": [], "jobs": []])
        }
        // Scheduling a job needs it deployed (`CloudCodeRouter.validateJobSchedule`: code 1, hence HTTP 500 as Parse
        // answers it); none ever is, so no schedule exists to change or delete.
        for (method, path) in [("POST", "cloud_code/jobs"), ("PUT", "cloud_code/jobs/:objectId")] {
            router.add(method, path) { _, context, _ in
                try context.requireMaster()
                // Answered, not thrown: a client's request, not a server fault to log.
                return APIResponse(status: 500, body: ParseError(.internalServerError, "Cannot Schedule a job that is not deployed").json)
            }
        }
        router.add("DELETE", "cloud_code/jobs/:objectId") { _, context, _ in
            try context.requireMaster()
            throw ObjectWriter.objectNotFound
        }
        // No push adapter: Parse checks the target, then fails for want of one (`PushController.sendPush`).
        router.add("POST", "push") { request, context, _ in
            try context.requireMaster()
            let body = try request.bodyObject()
            let hasWhere = body["where"].map { $0 != .null } ?? false, hasChannels = body["channels"].map { $0 != .null } ?? false
            if !hasWhere && !hasChannels {
                throw ParseError(.pushMisconfigured, "Sending a push requires either \"channels\" or a \"where\" query.")
            }
            if hasWhere && hasChannels { throw ParseError(.pushMisconfigured, "Channels and query can not be set at the same time.") }
            throw ParseError(.pushMisconfigured, "Missing push configuration")
        }
        // Analytics events are accepted and dropped, as by Parse without an analytics adapter.
        router.add("POST", "events/:name") { _, _, _ in APIResponse(body: [:]) }
    }
}
