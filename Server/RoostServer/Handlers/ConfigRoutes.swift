import RoostCore

/// `GET/PUT /config`: app parameters clients read at start-up (Parse's `GlobalConfigRouter`).
///
/// `PUT` (master key) merges `params` into the stored ones, applying operations (`Delete`, `Increment`,
/// `Add`, `AddUnique`, `Remove`) to the stored value as Parse's update of `params.<key>` does, and
/// `masterKeyOnly` marks the given keys as readable by the master key only.
enum ConfigRoutes {
    static func register(in router: inout Router) {
        router.add("GET", "config") { _, context, _ in
            guard let (params, masterKeyOnly) = try context.read({ db in try load(in: db) }) else {
                return APIResponse(body: ["params": [:]])  // Nothing stored yet.
            }
            var visible = params, flags = masterKeyOnly
            if !context.isMaster {
                for (key, hidden) in masterKeyOnly where hidden == .bool(true) {
                    visible.removeValue(forKey: key)
                    flags.removeValue(forKey: key)
                }
            }
            return APIResponse(body: ["params": .object(visible), "masterKeyOnly": .object(flags)])
        }
        router.add("PUT", "config") { request, context, _ in
            try context.requireMaster()
            let body = try request.bodyObject()
            let changes = try object(body["params"], "params"), onlyMaster = try object(body["masterKeyOnly"], "masterKeyOnly")
            try context.write { db in
                var (params, masterKeyOnly) = try load(in: db) ?? ([:], [:])
                for (key, value) in changes {
                    params[key] = try applying(value, to: params[key])
                    // As Parse: `false` unless given, also for a deleted key, unless its flag is deleted too (Parse Dashboard's
                    // deletion sends both).
                    if onlyMaster[key]?["__op"] == .string("Delete") {
                        masterKeyOnly.removeValue(forKey: key)
                    } else {
                        masterKeyOnly[key] = .bool(onlyMaster[key] == .bool(true))
                    }
                }
                try db.execute(
                    "INSERT INTO _config (id, params, masterKeyOnly) VALUES (1, ?1, ?2) ON CONFLICT (id) DO UPDATE SET params = ?1, masterKeyOnly = ?2",
                    [.text(JSON.object(params).jsonText), .text(JSON.object(masterKeyOnly).jsonText)])
            }
            return APIResponse(body: ["result": true])
        }
    }

    /// The parameter's new value (`nil`: removed); a plain value replaces it as sent.
    private static func applying(_ value: JSON, to current: JSON?) throws -> JSON? {
        guard value["__op"] != nil else { return value }
        let (operation, _) = try FieldOperation.decode(value)
        if case .relation = operation { throw ParseError(.invalidJSON, "Relation operations do not apply to config parameters.") }
        return try operation.applied(to: current)
    }

    private static func load(in db: some SQLQuerying) throws -> (params: [String: JSON], masterKeyOnly: [String: JSON])? {
        guard let row = try db.fetchRows("SELECT params, masterKeyOnly FROM _config WHERE id = 1", [], cacheable: true).first,
            case .object(let params) = try JSONParser.parse(row[0].text ?? "{}"),
            case .object(let masterKeyOnly) = try JSONParser.parse(row[1].text ?? "{}")
        else { return nil }
        return (params, masterKeyOnly)
    }

    private static func object(_ value: JSON?, _ name: String) throws -> [String: JSON] {
        switch value {
        case nil, .null?: return [:]
        case .object(let members)?: return members
        default: throw ParseError(.invalidJSON, "\(name) must be an object.")
        }
    }
}
