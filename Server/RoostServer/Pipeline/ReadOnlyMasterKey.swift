import RoostCore

/// Parse's `readOnlyMasterKey` (`--read-only-master-key`): a master key for tools that only look (a Dashboard user
/// who may not change anything). It reads whatever the master key reads; the writes Parse refuses it are refused
/// with Parse's 119 and messages: objects (`enforceRoleSecurity`), schemas, the config, purges and pushes. As in
/// Parse, webhooks and files are left to it.
enum ReadOnlyMasterKey {
    /// - Throws: `ParseError` 119 when `context` holds the read-only key and the request would write.
    static func check(method: String, segments: [String], context: RequestContext) throws {
        guard context.isReadOnly, method != "GET", let root = segments.first else { return }
        switch (root, method) {
        case ("classes", _), ("users", _), ("roles", _), ("installations", _), ("sessions", _), ("push_audiences", _):
            let operation = method == "POST" ? "create" : method == "DELETE" ? "delete" : "update"
            try context.refuseReadOnly("perform the \(operation) operation")
        case ("schemas", "POST"): try context.refuseReadOnly("create a schema")
        case ("schemas", "PUT"): try context.refuseReadOnly("update a schema")
        case ("schemas", "DELETE"): try context.refuseReadOnly("delete a schema")
        case ("config", "PUT"): try context.refuseReadOnly("update the config")
        case ("purge", "DELETE"): try context.refuseReadOnly("purge a schema")
        case ("push", "POST"): try context.refuseReadOnly("send push notifications")
        default: break
        }
    }
}
