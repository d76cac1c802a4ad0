import RoostCore

/// Master-key endpoints for tools such as Parse Dashboard: `GET /serverInfo` (Parse's
/// `FeaturesRouter`) and `DELETE /purge/<C>` (`PurgeRouter`).
enum AdminRoutes {
    /// The Parse Server release whose REST API Roost follows; Parse Dashboard reads it to decide
    /// which screens to offer.
    static let parseServerVersion = "8.0.0"

    static func register(in router: inout Router) {
        router.add("GET", "serverInfo") { _, context, _ in
            try context.requireMaster()
            var features = features.objectValue ?? [:]
            if context.config.securityCheck.enabled { features["settings"] = ["securityCheck": true] }
            return APIResponse(body: ["features": .object(features), "parseServerVersion": .string(parseServerVersion)])
        }
        router.add("DELETE", "purge/:className") { _, context, parameters in
            try context.requireMaster()
            try purge(parameters["className"], context: context)
            return APIResponse(body: [:])
        }
    }

    /// Parse's feature list (its keys, in full), answered for what Roost has: webhooks (`/hooks`), push audiences
    /// (`/push_audiences`), logs (`/scriptlog`) and the jobs pages (no job is ever deployed, as a Parse Server without
    /// any: `UnpoweredRoutes`), but no sending of push; the security check with `--security-check`. Parse Dashboard
    /// shows its pages by these.
    static let features: JSON = [
        "globalConfig": ["create": true, "read": true, "update": true, "delete": true],
        "hooks": ["create": true, "read": true, "update": true, "delete": true],
        "cloudCode": ["jobs": true],
        "logs": ["level": true, "size": true, "order": true, "until": true, "from": true],
        "push": ["immediatePush": false, "scheduledPush": false, "storedPushData": false, "pushAudiences": true,
                 "localization": true],
        "schemas": ["addField": true, "removeField": true, "addClass": true, "removeClass": true,
                    "clearAllDataFromClass": true, "exportClass": false, "editClassLevelPermissions": true,
                    "editPointerPermissions": true],
        "settings": ["securityCheck": false],
    ]

    /// Deletes every object of the class and keeps its schema. Users take their password hashes and
    /// sessions with them; `_Session` empties the session table.
    private static func purge(_ className: String, context: RequestContext) throws {
        try context.write { db in
            db.changedAuthentication = true  // Users, sessions and roles may all be gone.
            if className == SessionStore.className {
                try db.execute("DELETE FROM _session")
                try db.writeState.changeRecorder?.markGap(in: SessionStore.className, in: db)  // Deleted without events, as below.
                return
            }
            guard let schema = try SchemaStore.load(className, in: db) else { return }  // Nothing stored: nothing to purge.
            try db.execute("DELETE FROM \(schema.tableName)", cacheable: false)
            db.countRows(-Int64(db.changes), in: schema)
            try db.writeState.changeRecorder?.markGap(in: className, in: db)  // Deleted without events: no resume across it.
            try db.execute("DELETE FROM _join WHERE owningClass = ?", [.text(className)])
            if className == UserStore.className {
                try db.execute("DELETE FROM _password")
                try db.execute("DELETE FROM _session")
                try db.writeState.changeRecorder?.markGap(in: SessionStore.className, in: db)
            }
        }
    }
}
