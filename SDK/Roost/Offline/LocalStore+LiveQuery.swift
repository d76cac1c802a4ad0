import Foundation
import GRDB
import RoostCore

/// Live changes kept locally: each subscription's resume point, and events applied to the query cache and the
/// pinned objects, so that an offline read after an event shows it.
extension LocalStore {
    func liveSeq(_ key: String) throws -> Int? {
        try pool.read { db in try Int.fetchOne(db, sql: "SELECT seq FROM liveQuery WHERE key = ?", arguments: [key]) }
    }

    func setLiveSeq(_ seq: Int, for key: String) throws {
        try pool.write { db in
            try db.execute(sql: """
                INSERT INTO liveQuery (key, seq) VALUES (?, ?)
                ON CONFLICT (key) DO UPDATE SET seq = max(seq, excluded.seq)
                """, arguments: [key, seq])
        }
    }

    /// One change (once, however many subscriptions saw it). Every cached result list of the class replaces (or, for a
    /// `delete`, drops) its copy of the object. Pinned copies take the new version (their localId kept: queued commands
    /// name it) and are unpinned on `delete`.
    /// - Parameter isPartial: the event carries only some fields (a subscription with `keys`): they overlay the copy.
    func applyLiveChange(_ kind: LiveQueryEvent.Kind, className: String, objectId: String, object: JSON, isPartial: Bool) throws {
        let restObject = Self.restShape(object)
        try pool.write { db in
            for (key, results) in try Self.cachedLists(className: className, in: db) {
                guard let index = results.firstIndex(where: { $0["objectId"]?.stringValue == objectId }) else { continue }
                var list = results
                if kind == .deleted { list.remove(at: index) } else { list[index] = Self.merge(restObject, into: list[index], isPartial: isPartial) }
                try db.execute(sql: "UPDATE queryCache SET results = ? WHERE key = ?", arguments: [JSON.array(list).jsonText, key])
            }
        }
        try pins.write { db in
            if kind == .deleted {
                try db.execute(sql: "DELETE FROM pin WHERE className = ? AND objectKey = ?", arguments: [className, objectId])
            } else {
                try Self.refreshPinned(className: className, objectId: objectId, with: restObject, isPartial: isPartial, in: db)
            }
        }
    }

    /// The subscribed query's own cached list (each subscription's) gains an object that was created or entered, and
    /// drops one that left.
    func applyLiveMembership(_ kind: LiveQueryEvent.Kind, objectId: String, object: JSON, cacheKey: String) throws {
        guard [.created, .entered, .left].contains(kind) else { return }
        try pool.write { db in
            guard let text = try String.fetchOne(db, sql: "SELECT results FROM queryCache WHERE key = ?", arguments: [cacheKey]),
                  var list = (try? JSONParser.parse(text))?.arrayValue else { return }
            let index = list.firstIndex { $0["objectId"]?.stringValue == objectId }
            switch (kind, index) {
            case (.left, let index?): list.remove(at: index)
            case (.created, nil), (.entered, nil): list.append(Self.restShape(object))
            default: return
            }
            try db.execute(sql: "UPDATE queryCache SET results = ? WHERE key = ?", arguments: [JSON.array(list).jsonText, cacheKey])
        }
    }

    /// A refresh (`result`): the subscribed query's cached list becomes the results, and pinned copies take them.
    func applyLiveRefresh(_ results: [JSON], className: String, isPartial: Bool, subscriptionCacheKey: String) throws {
        let objects = results.map(Self.restShape)
        try pool.write { db in
            try db.execute(sql: "UPDATE queryCache SET results = ?, updatedAt = ? WHERE key = ?",
                           arguments: [JSON.array(objects).jsonText, Date().timeIntervalSince1970, subscriptionCacheKey])
        }
        try pins.write { db in
            for object in objects {
                guard let objectId = object["objectId"]?.stringValue else { continue }
                try Self.refreshPinned(className: className, objectId: objectId, with: object, isPartial: isPartial, in: db)
            }
        }
    }

    /// A subscription with a pin name keeps what its query matches pinned under it: an object that is created or
    /// enters (or changes while not pinned yet) is pinned, one that leaves or is deleted is unpinned from it.
    func keepPinned(_ kind: LiveQueryEvent.Kind, className: String, objectId: String, object: JSON, name: String) throws {
        try pins.write { db in
            switch kind {
            case .left, .deleted:
                try db.execute(sql: "DELETE FROM pin WHERE name = ? AND className = ? AND objectKey = ?", arguments: [name, className, objectId])
            case .created, .entered, .updated:
                try Self.pinIfMissing(Self.restShape(object), className: className, objectId: objectId, name: name, in: db)
            case .subscribed, .refreshed:
                break
            }
        }
    }

    /// After a refresh the pin group holds exactly the results, plus objects not on the server yet (queued creations).
    func keepPinned(_ results: [JSON], className: String, name: String) throws {
        let objects = results.map(Self.restShape)
        let ids = Set(objects.compactMap { $0["objectId"]?.stringValue })
        try pins.write { db in
            let pinned = try String.fetchAll(db, sql: "SELECT objectKey FROM pin WHERE name = ? AND className = ?", arguments: [name, className])
            for key in pinned where !ids.contains(key) && !key.hasPrefix("local_") {
                try db.execute(sql: "DELETE FROM pin WHERE name = ? AND className = ? AND objectKey = ?", arguments: [name, className, key])
            }
            for object in objects {
                guard let objectId = object["objectId"]?.stringValue else { continue }
                try Self.pinIfMissing(object, className: className, objectId: objectId, name: name, in: db)
            }
        }
    }

    // MARK: Internals

    /// Pins a server object under `name` unless it is there (its pinned copy elsewhere lends its local id).
    private static func pinIfMissing(_ object: JSON, className: String, objectId: String, name: String, in db: Database) throws {
        guard try Int.fetchOne(db, sql: "SELECT 1 FROM pin WHERE name = ? AND className = ? AND objectKey = ?",
                               arguments: [name, className, objectId]) == nil else { return }
        let existing = try String.fetchOne(db, sql: "SELECT object FROM pin WHERE className = ? AND objectKey = ? LIMIT 1",
                                           arguments: [className, objectId]).flatMap { try? JSONParser.parse($0) }
        var pinned: [String: JSON] = [
            "className": .string(className), "objectId": .string(objectId),
            "localId": existing?["localId"] ?? .string("local_" + UUID().uuidString.lowercased()),
        ]
        var fields = object.objectValue ?? [:]
        for key in ["objectId", "createdAt", "updatedAt"] { fields.removeValue(forKey: key) }
        pinned["fields"] = .object(fields)
        if let date = object["createdAt"].flatMap(Date.init(roostJSON:)) { pinned["createdAt"] = date.roostJSON }
        if let date = object["updatedAt"].flatMap(Date.init(roostJSON:)) { pinned["updatedAt"] = date.roostJSON }
        try db.execute(sql: "INSERT INTO pin (name, className, objectKey, object) VALUES (?, ?, ?, ?)",
                       arguments: [name, className, objectId, JSON.object(pinned).jsonText])
    }

    private static func cachedLists(className: String, in db: Database) throws -> [(String, [JSON])] {
        let prefix = className + "|"
        return try Row.fetchAll(db, sql: "SELECT key, results FROM queryCache WHERE substr(key, 1, ?) = ?",
                                arguments: [prefix.utf8.count, prefix]).map { row in
            (row[0] as String, (try? JSONParser.parse(row[1] as String))?.arrayValue ?? [])
        }
    }

    private static func refreshPinned(className: String, objectId: String, with object: JSON, isPartial: Bool, in db: Database) throws {
        // Fields with changes still queued here (saveEventually) keep showing them: the event predates their delivery.
        let queuedKeys = Set(try String.fetchAll(db, sql: "SELECT body FROM command WHERE className = ? AND objectId = ?",
                                                 arguments: [className, objectId])
            .flatMap { (try? JSONParser.parse($0))?.objectValue?.keys.map { $0 } ?? [] })
        let rows = try Row.fetchAll(db, sql: "SELECT name, object FROM pin WHERE className = ? AND objectKey = ?",
                                    arguments: [className, objectId])
        for row in rows {
            guard case .object(var pinned)? = try? JSONParser.parse(row[1] as String) else { continue }
            let current = pinned["fields"]?.objectValue ?? [:]
            var fields = isPartial ? current : current.filter { queuedKeys.contains($0.key) }
            for (key, value) in object.objectValue ?? [:]
            where !["objectId", "createdAt", "updatedAt"].contains(key) && !queuedKeys.contains(key) { fields[key] = value }
            pinned["fields"] = .object(fields)
            if let updated = object["updatedAt"] { pinned["updatedAt"] = Date(roostJSON: updated)?.roostJSON ?? pinned["updatedAt"] }
            if let created = object["createdAt"] { pinned["createdAt"] = Date(roostJSON: created)?.roostJSON ?? pinned["createdAt"] }
            try db.execute(sql: "UPDATE pin SET object = ? WHERE name = ? AND className = ? AND objectKey = ?",
                           arguments: [JSON.object(pinned).jsonText, row[0] as String, className, objectId])
        }
    }

    /// An event's object as a REST answer has it (no `className`, no `__type`).
    private static func restShape(_ object: JSON) -> JSON {
        object.removing("className").removing("__type")
    }

    private static func merge(_ object: JSON, into cached: JSON, isPartial: Bool) -> JSON {
        guard isPartial, case .object(var members) = cached else { return object }
        for (key, value) in object.objectValue ?? [:] { members[key] = value }
        return .object(members)
    }
}
