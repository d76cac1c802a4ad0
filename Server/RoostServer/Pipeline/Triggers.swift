import Dispatch
import Foundation
import Logging
import RoostCore
import Synchronization

/// A class's trigger webhooks, run around its writes as Parse Server runs webhook triggers (REST
/// guide, "Hooks"): `beforeSave` may refuse the save (its error, 141) or change it (the object it
/// answers is what gets saved), `beforeDelete` may refuse the delete, and `afterSave`/`afterDelete`
/// are told once the change is committed, in the background (their answers change nothing). `beforeFind` may refuse
/// a query or get of the class (as with Parse's webhooks, its answer cannot change the query). On `_User`, these run
/// on sign-ups, updates and deletions (`UserTriggers`: never shown a password), `beforeLogin` may refuse a log-in with a
/// password and `afterLogin` is told of it; on `_Session`, `afterLogout` is told of a log-out.
///
/// `before` hooks run before the write transaction opens, so a webhook does not hold the single
/// writer — except for a request with `X-Parse-Request-Id`, whose write and recorded reply must
/// commit together (one webhook, at most `webhookTimeout`). A batch whose items share one transaction
/// refuses them; a plain batch runs its items one by one once any trigger exists.
struct Triggers {
    static let supported: Set<String> = ["beforeSave", "afterSave", "beforeDelete", "afterDelete"]
    /// The triggers an app's own class takes.
    static let appClassTriggers = supported.union(["beforeFind"])
    /// The triggers run on a system class, which take no others: Parse's login and logout ones where its
    /// `validateClassNameForTriggers` puts them, and the save and delete ones on `_User` (`UserTriggers`) and `_Role`.
    /// Parse also runs save and delete triggers on `_Installation`; Roost does not.
    static let systemClassTriggers: [String: Set<String>] = [
        "_User": supported.union(["beforeLogin", "afterLogin"]), "_Session": ["afterLogout"], "_Role": supported,
    ]

    private let className: String
    private let context: RequestContext
    private let urls: [String: String]

    init(_ className: String, context: RequestContext) throws {
        self.className = className
        self.context = context
        urls = try context.storage.triggerURLs(for: className)
    }

    func has(_ trigger: String) -> Bool { urls[trigger] != nil }

    /// The object now, as a `before` hook of an update or delete is shown it. The write's permissions are checked first,
    /// as Parse checks them before it calls the hook: a caller they refuse never reaches it.
    /// - Throws: 101 when it is missing or the caller may not write it, 119 when the class permissions refuse the caller
    ///   (the write would fail the same way).
    func current(_ objectId: String, for operation: ClassPermissions.Operation) throws -> StoredObject {
        let object = try context.read { db -> StoredObject? in
            guard let schema = try SchemaStore.load(className, in: db) else { return nil }
            let grant = try ClassPermissions.check(operation, schema, context: context)
            guard let object = try ObjectStore.fetch(objectId, from: schema, in: db)?.decoded(),
                ClassPermissions.allows(grant, object, context: context) else { return nil }
            return object
        }
        guard let object, context.canWrite(object.acl) else { throw ObjectWriter.objectNotFound }
        return object
    }

    /// The create's class permissions, checked before a `beforeSave` hook of a create is called, as Parse checks them
    /// first: a caller they refuse never reaches the hook (the write checks them again).
    func checkCreate() throws {
        _ = try context.read { db in try ClassPermissions.check(.create, try SchemaStore.load(className, in: db), context: context) }
    }

    /// Runs `beforeSave` on the object as it would be saved; returns the body to save instead when
    /// the webhook answers an object (`nil`: save as asked).
    /// - Parameter body: the client's body, whose field deletions and relation changes an object cannot show.
    func beforeSave(_ object: JSON, original: JSON?, body: [String: JSON]) throws -> [String: JSON]? {
        guard let url = urls["beforeSave"] else { return nil }
        let answer = try call(url, "beforeSave", object, original: original)
        guard case .object(var fields)? = answer else { return nil }
        try KeywordDenylist.check(.object(fields), custom: context.config.requestKeywordDenylist)  // What the webhook answers is saved as the client's data would be.
        for key in ["objectId", "createdAt", "updatedAt", "className"] { fields.removeValue(forKey: key) }
        // Relation fields come back as their markers; the pairs are changed by operations only.
        fields = fields.filter { $0.value["__type"] != "Relation" }
        for (key, value) in body where fields[key] == nil {
            if let op = value["__op"]?.stringValue, ["Delete", "AddRelation", "RemoveRelation", "Batch"].contains(op) { fields[key] = value }
        }
        return fields
    }

    /// Runs `beforeDelete`; its error refuses the delete.
    func beforeDelete(_ object: JSON) throws {
        guard let url = urls["beforeDelete"] else { return }
        _ = try call(url, "beforeDelete", object, original: nil)
    }

    /// Runs `beforeFind` before a query (`count` when it counts) or a get (`isGet`); its error refuses the read.
    /// The hook is shown the query as Parse shows a webhook its `Parse.Query` (`toJSON`): `where` and the options that
    /// came with it. Parse takes only a `Parse.Query` that a JavaScript trigger returns as a new query, so a webhook's
    /// answer, as here, changes nothing.
    func beforeFind(_ parameters: @autoclosure () throws -> [String: JSON], count: Bool, isGet: Bool) throws {
        guard let url = urls["beforeFind"] else { return }
        var body = try Webhook.caller(context)
        body["triggerName"] = "beforeFind"
        body["query"] = .object(Triggers.queryJSON(try parameters(), count: count))
        body["count"] = .bool(count)
        body["isGet"] = .bool(isGet)
        _ = try post(url, "beforeFind", .object(body))
    }

    /// A REST query's parameters as `Parse.Query.toJSON` writes them: `where` as an object, `limit` and `skip` as
    /// numbers, `count` as 1 when asked.
    static func queryJSON(_ parameters: [String: JSON], count: Bool) -> [String: JSON] {
        var query: [String: JSON] = ["where": [:]]
        for (name, value) in parameters {
            switch name {
            case "where":
                if case .string(let text) = value, let parsed = try? JSONParser.parse(text) { query[name] = parsed } else { query[name] = value }
            case "limit", "skip":
                query[name] = value.stringValue.flatMap(Double.init).map(JSON.number) ?? value
            case "count":
                continue
            default:
                query[name] = value
            }
        }
        if count { query["count"] = 1 }
        return query
    }

    /// Runs `beforeLogin` on the user whose password was just checked; its error refuses the log-in.
    func beforeLogin(_ user: @autoclosure () -> JSON) throws {
        guard let url = urls["beforeLogin"] else { return }
        _ = try call(url, "beforeLogin", user(), original: nil)
    }

    /// Tells `afterLogin` of the user who logged in, as its `object` and its `user` (without the new session token:
    /// Roost never posts one).
    func afterLogin(_ user: @autoclosure () -> JSON) {
        guard has("afterLogin") else { return }
        let user = user()
        notify("afterLogin", user, original: nil, caller: user)
    }

    /// Tells `afterLogout` of the session that ended (without its token).
    func afterLogout(_ session: @autoclosure () -> JSON) {
        if has("afterLogout") { notify("afterLogout", session(), original: nil) }
    }

    /// The objects are built only when the hook exists: every write calls these.
    func afterSave(_ object: @autoclosure () -> JSON, original: @autoclosure () -> JSON?) {
        if has("afterSave") { notify("afterSave", object(), original: original()) }
    }

    func afterDelete(_ object: @autoclosure () -> JSON) {
        if has("afterDelete") { notify("afterDelete", object(), original: nil) }
    }

    private func call(_ url: String, _ trigger: String, _ object: JSON, original: JSON?) throws -> JSON? {
        try post(url, trigger, try body(trigger, object, original: original))
    }

    private func post(_ url: String, _ trigger: String, _ body: @autoclosure () throws -> JSON) throws -> JSON? {
        if context.inGroupedWrite { throw WriteBatcher.NeedsOwnWrite() }
        guard !context.inBatchTransaction else {
            throw ParseError(.scriptFailed, "\(trigger) webhooks do not run inside a batch that shares one write: they would hold the single writer while they answer.")
        }
        return try Webhook(url: url, key: context.config.webhookKey, timeout: Triggers.webhookTimeout).call(try body())
    }

    /// Shorter than a function's: a save waits for its `before` hook.
    static let webhookTimeout: TimeInterval = 10

    /// `after` hooks: sent in order on a background queue once the write is committed (at the end
    /// of a transactional batch, when inside one).
    private func notify(_ trigger: String, _ object: JSON, original: JSON?, caller user: JSON? = nil) {
        guard let url = urls[trigger], let told = try? body(trigger, object, original: original) else { return }
        let body = user.flatMap { try? told.setting("user", to: $0) } ?? told
        let webhook = Webhook(url: url, key: context.config.webhookKey, timeout: Triggers.webhookTimeout)
        let logger = context.logger, className = className
        let send = {
            // A dead webhook must not pile up work without bound: past the limit, notices are dropped.
            guard Triggers.pendingNotices.add(1, ordering: .relaxed).newValue <= Triggers.maximumPendingNotices else {
                Triggers.pendingNotices.subtract(1, ordering: .relaxed)
                logger.warning("\(trigger) webhook of \(className) dropped: too many pending")
                return
            }
            Triggers.afterQueue.async {
                defer { Triggers.pendingNotices.subtract(1, ordering: .relaxed) }
                do { _ = try webhook.call(body) } catch { logger.warning("\(trigger) webhook of \(className) failed: \(error)") }
            }
        }
        // Inside a batch's or an idempotent request's transaction: once it has committed.
        if let db = context.transaction { db.afterCommit(send) } else { send() }
    }

    private func body(_ trigger: String, _ object: JSON, original: JSON?) throws -> JSON {
        var body = try Webhook.caller(context)
        body["triggerName"] = .string(trigger)
        body["object"] = try object.setting("className", to: .string(className))
        if let original { body["original"] = try original.setting("className", to: .string(className)) }
        return .object(body)
    }

    private static let afterQueue = DispatchQueue(label: "roost.after-triggers")
    private static let pendingNotices = Atomic<Int>(0)
    private static let maximumPendingNotices = 1000
}

extension Storage {
    /// Trigger name → URL of `className`'s trigger webhooks, from the cache.
    func triggerURLs(for className: String) throws -> [String: String] {
        try triggerHooks.urls(for: className, load: committedTriggers)
    }

    var hasTriggerHooks: Bool {
        get throws { try !triggerHooks.isEmpty(load: committedTriggers) }
    }

    /// Whether some class has a `beforeFind` webhook: every read asks, so this is one atomic load while none does.
    func anyClassHasBeforeFind() throws -> Bool {
        try triggerHooks.anyClassHasBeforeFind(load: committedTriggers)
    }

    /// Through a reader, never a batch's open transaction: the cache holds committed hooks only.
    private func committedTriggers() throws -> [Hook] { try read { try HookStore.triggers(in: $0) } }
}

/// The trigger webhooks of every class, cached: each write asks, and hooks change rarely (through `/hooks` only).
final class TriggerHookCache: @unchecked Sendable {
    private let lock = NSLock()
    /// Trigger name → URL, by class; `nil` until loaded.
    private var byClass: [String: [String: String]]?

    func urls(for className: String, load: () throws -> [Hook]) throws -> [String: String] {
        try loaded(load)[className] ?? [:]
    }

    func isEmpty(load: () throws -> [Hook]) throws -> Bool { try loaded(load).isEmpty }

    func anyClassHasBeforeFind(load: () throws -> [Hook]) throws -> Bool {
        switch beforeFind.load(ordering: .acquiring) {
        case BeforeFind.none: return false
        case BeforeFind.some: return true
        default: return try loaded(load).values.contains { $0["beforeFind"] != nil }
        }
    }

    /// Called after `/hooks` changed a trigger: the next write reads them again.
    func invalidate() {
        lock.withLock {
            byClass = nil
            beforeFind.store(BeforeFind.unknown, ordering: .releasing)
        }
    }

    /// Whether some class has a `beforeFind` webhook, set with `byClass` under the lock: unknown until loaded.
    private let beforeFind = Atomic<UInt8>(BeforeFind.unknown)
    private enum BeforeFind {
        static let unknown: UInt8 = 0, none: UInt8 = 1, some: UInt8 = 2
    }

    private func loaded(_ load: () throws -> [Hook]) throws -> [String: [String: String]] {
        lock.lock()
        defer { lock.unlock() }
        if let byClass { return byClass }
        var triggers: [String: [String: String]] = [:]
        for hook in try load() {
            if case .trigger(let className, let triggerName) = hook.target { triggers[className, default: [:]][triggerName] = hook.url }
        }
        byClass = triggers
        beforeFind.store(triggers.values.contains { $0["beforeFind"] != nil } ? BeforeFind.some : BeforeFind.none, ordering: .releasing)
        return triggers
    }
}
