import RoostCore

/// A webhook registered through `/hooks`: a Cloud Function by name, or a trigger of a class.
struct Hook: Equatable {
    enum Target: Equatable {
        case function(String)
        case trigger(className: String, triggerName: String)
    }

    var target: Target
    var url: String

    /// As Parse answers a hook: `{functionName, url}` or `{className, triggerName, url}`.
    var json: JSON {
        switch target {
        case .function(let name): ["functionName": .string(name), "url": .string(url)]
        case .trigger(let className, let triggerName):
            ["className": .string(className), "triggerName": .string(triggerName), "url": .string(url)]
        }
    }
}

/// The `_hooks` table (Parse's `_Hooks` collection).
enum HookStore {
    static func functions(in db: some SQLQuerying) throws -> [Hook] {
        try hooks("SELECT functionName, className, triggerName, url FROM _hooks WHERE functionName IS NOT NULL ORDER BY functionName", [], in: db)
    }

    static func triggers(in db: some SQLQuerying) throws -> [Hook] {
        try hooks("SELECT functionName, className, triggerName, url FROM _hooks WHERE className IS NOT NULL ORDER BY className, triggerName",
                  [], in: db)
    }

    static func hook(_ target: Hook.Target, in db: some SQLQuerying) throws -> Hook? {
        let (condition, arguments) = match(target)
        return try hooks("SELECT functionName, className, triggerName, url FROM _hooks WHERE \(condition)", arguments, in: db).first
    }

    /// Adds the hook, or points the existing one at its new URL.
    static func save(_ hook: Hook, in db: any SQLConnection) throws {
        try delete(hook.target, in: db)
        switch hook.target {
        case .function(let name):
            try db.execute("INSERT INTO _hooks (functionName, url) VALUES (?, ?)", [.text(name), .text(hook.url)])
        case .trigger(let className, let triggerName):
            try db.execute("INSERT INTO _hooks (className, triggerName, url) VALUES (?, ?, ?)",
                           [.text(className), .text(triggerName), .text(hook.url)])
        }
    }

    static func delete(_ target: Hook.Target, in db: any SQLConnection) throws {
        let (condition, arguments) = match(target)
        try db.execute("DELETE FROM _hooks WHERE \(condition)", arguments)
        if case .trigger = target { db.writeState.changedHooks = true }  // Functions are not cached.
    }

    private static func match(_ target: Hook.Target) -> (String, [SQLValue]) {
        switch target {
        case .function(let name): ("functionName = ?", [.text(name)])
        case .trigger(let className, let triggerName): ("className = ? AND triggerName = ?", [.text(className), .text(triggerName)])
        }
    }

    private static func hooks(_ sql: String, _ arguments: [SQLValue], in db: some SQLQuerying) throws -> [Hook] {
        try db.fetchRows(sql, arguments, cacheable: true).compactMap { row in
            guard let url = row[3].text else { return nil }
            if let name = row[0].text { return Hook(target: .function(name), url: url) }
            guard let className = row[1].text, let triggerName = row[2].text else { return nil }
            return Hook(target: .trigger(className: className, triggerName: triggerName), url: url)
        }
    }
}
