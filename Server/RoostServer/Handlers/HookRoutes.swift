import RoostCore

/// `/hooks` (master key only): webhooks that serve Cloud Functions, as Parse's `HooksRouter`
/// and `HooksController` keep them. `POST /functions/<name>` calls the function's webhook.
/// Trigger webhooks (`beforeSave`, `afterSave`, `beforeDelete`, `afterDelete` on the app's own
/// classes) are kept here and run by `Triggers`.
enum HookRoutes {
    static func register(in router: inout Router) {
        router.add("GET", "hooks/functions") { _, context, _ in
            try context.requireMaster()
            return APIResponse(body: .array(try context.read { try HookStore.functions(in: $0) }.map(\.json)))
        }
        router.add("GET", "hooks/functions/:name") { _, context, parameters in
            try context.requireMaster()
            let name = parameters["name"]
            guard let hook = try context.read({ try HookStore.hook(.function(name), in: $0) }) else { throw noFunction(name) }
            return APIResponse(body: hook.json)
        }
        router.add("GET", "hooks/triggers") { _, context, _ in
            try context.requireMaster()
            return APIResponse(body: .array(try context.read { try HookStore.triggers(in: $0) }.map(\.json)))
        }
        router.add("GET", "hooks/triggers/:className/:trigger") { _, context, parameters in
            try context.requireMaster()
            let target = Hook.Target.trigger(className: parameters["className"], triggerName: parameters["trigger"])
            guard let hook = try context.read({ try HookStore.hook(target, in: $0) }) else { throw noClass(parameters["className"]) }
            return APIResponse(body: hook.json)
        }
        for path in ["hooks/functions", "hooks/triggers"] {
            router.add("POST", path) { request, context, _ in
                try context.requireMaster()
                return try create(try request.bodyObject(), context: context)
            }
        }
        router.add("PUT", "hooks/functions/:name") { request, context, parameters in
            try context.requireMaster()
            return try change(.function(parameters["name"]), try request.bodyObject(), context: context)
        }
        router.add("PUT", "hooks/triggers/:className/:trigger") { request, context, parameters in
            try context.requireMaster()
            let target = Hook.Target.trigger(className: parameters["className"], triggerName: parameters["trigger"])
            return try change(target, try request.bodyObject(), context: context)
        }
        router.add("POST", "functions/:name") { request, context, parameters in
            try callFunction(parameters["name"], params: try functionParameters(request), context: context)
        }
    }

    /// `POST /hooks/...`: a new hook; one that exists already is refused (143).
    private static func create(_ body: [String: JSON], context: RequestContext) throws -> APIResponse {
        try refuseInBatch(context)
        let hook = try declaredHook(body)
        let response = try context.write { db -> APIResponse in
            if try HookStore.hook(hook.target, in: db) != nil {
                switch hook.target {
                case .function(let name): throw ParseError(.webhookError, "function name: \(name) already exists")
                case .trigger(let className, let triggerName):
                    throw ParseError(.webhookError, "class \(className) already has trigger \(triggerName)")
                }
            }
            try HookStore.save(hook, in: db)
            return APIResponse(body: hook.json)
        }
        context.storage.triggerHooks.invalidate()
        return response
    }

    /// `PUT /hooks/...`: a new URL for an existing hook, or `{"__op": "Delete"}` to remove it.
    private static func change(_ target: Hook.Target, _ body: [String: JSON], context: RequestContext) throws -> APIResponse {
        try refuseInBatch(context)
        defer { context.storage.triggerHooks.invalidate() }
        if body["__op"]?.stringValue == "Delete" {
            try context.write { try HookStore.delete(target, in: $0) }
            return APIResponse(body: [:])
        }
        guard let url = body["url"]?.nonEmptyString else { throw invalidDeclaration }
        let hook = Hook(target: target, url: url)
        if case .trigger = target { _ = try declaredHook(hook.json.objectValue ?? [:]) }  // Checks the trigger name.
        return try context.write { db in
            guard try HookStore.hook(target, in: db) != nil else {
                switch target {
                case .function(let name): throw noFunction(name)
                case .trigger(let className, _): throw noClass(className)
                }
            }
            try HookStore.save(hook, in: db)
            return APIResponse(body: hook.json)
        }
    }

    /// Parse's `createOrUpdateHook` checks: a function name and a URL, or a class, a trigger name and a URL.
    private static func declaredHook(_ body: [String: JSON]) throws -> Hook {
        guard let url = body["url"]?.nonEmptyString else { throw invalidDeclaration }
        if let name = body["functionName"]?.nonEmptyString { return Hook(target: .function(name), url: url) }
        guard let className = body["className"]?.nonEmptyString, let triggerName = body["triggerName"]?.nonEmptyString,
            parseTriggerNames.contains(triggerName)
        else { throw invalidDeclaration }
        // Saying so beats storing a hook that would never be called.
        let supported = className.hasPrefix("_") ? Triggers.systemClassTriggers[className, default: []] : Triggers.appClassTriggers
        guard supported.contains(triggerName) else {
            throw ParseError(.webhookError, "Roost runs \(Triggers.appClassTriggers.sorted().joined(separator: ", ")) webhooks on the app's own "
                                 + "classes, the save and delete ones on _User and _Role, beforeLogin and afterLogin on _User, afterLogout on _Session.")
        }
        return Hook(target: .trigger(className: className, triggerName: triggerName), url: url)
    }

    /// Parse's trigger names (`triggers.Types`).
    private static let parseTriggerNames: Set<String> = [
        "beforeSave", "afterSave", "beforeDelete", "afterDelete", "beforeFind", "afterFind", "beforeLogin", "afterLogin",
        "afterLogout", "beforePasswordResetRequest", "beforeConnect", "beforeSubscribe", "afterEvent",
    ]

    /// `POST /functions/<name>`: the body is the function's `params`; the webhook gets them with the
    /// caller (`master`, `user`, `installationId`), and its `success` value comes back as `result`.
    /// Inside a batch: hooks change only on their own (the trigger cache is reset after a commit it
    /// can see), and a function's webhook must not answer while the batch holds the single writer.
    private static func refuseInBatch(_ context: RequestContext) throws {
        guard context.transaction == nil else { throw ParseError(.webhookError, "Webhooks cannot be used inside a batch.") }
    }

    /// The body with the URL's parameters over it, as strings (Parse's `Object.assign({}, req.body, req.query)`; brackets
    /// nest as Express's parser nests them).
    private static func functionParameters(_ request: APIRequest) throws -> [String: JSON] {
        var params = try request.bodyObject()
        request.mergeURLParameters(into: &params) { .string($0) }
        return params
    }

    /// What a Cloud Code function's params become on the way to its webhook: Parse decodes a `Date` into a JavaScript
    /// Date, which `JSON.stringify` writes as its ISO string (Files and the rest keep their JSON form).
    static func webhookParams(_ value: JSON) -> JSON {
        switch value {
        case .object(let members):
            if members["__type"] == "Date", let iso = members["iso"]?.stringValue { return .string(iso) }
            return .object(members.mapValues(webhookParams))
        case .array(let items): return .array(items.map(webhookParams))
        default: return value
        }
    }

    private static func callFunction(_ name: String, params: [String: JSON], context: RequestContext) throws -> APIResponse {
        try refuseInBatch(context)
        guard let hook = try context.read({ try HookStore.hook(.function(name), in: $0) }) else {
            throw ParseError(.scriptFailed, "Invalid function: \"\(name)\"")
        }
        var request = try Webhook.caller(context)
        request["params"] = webhookParams(.object(params))
        request["functionName"] = .string(name)
        // No `success` (undefined to Parse's FunctionsRouter) answers no `result`.
        guard let result = try Webhook(url: hook.url, key: context.config.webhookKey).call(.object(request)) else { return APIResponse(body: [:]) }
        return APIResponse(body: ["result": result])
    }

    private static var invalidDeclaration: ParseError { ParseError(.webhookError, "invalid hook declaration") }
    private static func noFunction(_ name: String) -> ParseError { ParseError(.webhookError, "no function named: \(name) is defined") }
    private static func noClass(_ className: String) -> ParseError { ParseError(.webhookError, "class \(className) does not exist") }
}
