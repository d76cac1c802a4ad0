import Foundation
import GRDB
import RoostCore

/// The client's local data: cached query results in `local.sqlite` (disposable: the server has all of
/// it, so a damaged file is moved aside and rebuilt), and pinned objects in the queue's file
/// (`eventually.sqlite`), so that a queued change and the pinned copy it updates commit in one
/// transaction: the local list and the queue change together, or neither does. The `static` pin
/// functions run inside such a transaction (see `EventuallyStore.enqueue` and `completeAll`).
final class LocalStore: Sendable {
    static let fileName = "local.sqlite"
    /// The query cache.
    let pool: DatabasePool
    /// The queue's file, which holds the pins.
    let pins: DatabasePool

    /// - Parameter pins: the queue's database (`EventuallyStore.database`).
    init(directory: URL, pins: DatabasePool) throws {
        self.pins = pins
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE queryCache (key TEXT PRIMARY KEY NOT NULL, results TEXT NOT NULL, updatedAt DOUBLE NOT NULL);
                CREATE TABLE pin (
                    name TEXT NOT NULL, className TEXT NOT NULL, objectKey TEXT NOT NULL, object TEXT NOT NULL,
                    PRIMARY KEY (name, className, objectKey)
                );
                CREATE INDEX pin_object ON pin (className, objectKey);
                """)
        }
        migrator.registerMigration("v2 live query resume points") { db in
            // Per live subscription (its query, watch list and user): the last change log `seq` processed.
            try db.execute(sql: "CREATE TABLE liveQuery (key TEXT PRIMARY KEY NOT NULL, seq INTEGER NOT NULL)")
        }
        pool = try StoreFile.open(directory.appendingPathComponent(Self.fileName), configuration: StoreFile.configuration(),
                                  migrator: migrator, damage: .rebuild)
        try movePinsOfEarlierVersions()
    }

    /// Pins used to live in `local.sqlite`: move any found there into the queue's file (once; idempotent).
    private func movePinsOfEarlierVersions() throws {
        let legacy = try pool.read { db in
            try Row.fetchAll(db, sql: "SELECT name, className, objectKey, object FROM pin").map { row in
                (name: row[0] as String, className: row[1] as String, key: row[2] as String, object: row[3] as String)
            }
        }
        guard !legacy.isEmpty else { return }
        try pins.write { db in
            for pin in legacy {
                try db.execute(sql: "INSERT OR IGNORE INTO pin (name, className, objectKey, object) VALUES (?, ?, ?, ?)",
                               arguments: [pin.name, pin.className, pin.key, pin.object])
            }
        }
        try pool.write { db in try db.execute(sql: "DELETE FROM pin") }
    }

    // MARK: Query cache

    func cached(_ key: String) throws -> (results: [JSON], updatedAt: Date)? {
        try pool.read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT results, updatedAt FROM queryCache WHERE key = ?", arguments: [key])
            else { return nil }
            let results = (try? JSONParser.parse(row[0] as String))?.arrayValue ?? []
            return (results, Date(timeIntervalSince1970: row[1]))
        }
    }

    func cache(_ results: [JSON], for key: String) throws {
        try pool.write { db in
            try db.execute(sql: "INSERT OR REPLACE INTO queryCache (key, results, updatedAt) VALUES (?, ?, ?)",
                           arguments: [key, JSON.array(results).jsonText, Date().timeIntervalSince1970])
        }
    }

    func clearCache(_ key: String?) throws {
        try pool.write { db in
            if let key { try db.execute(sql: "DELETE FROM queryCache WHERE key = ?", arguments: [key]) } else {
                try db.execute(sql: "DELETE FROM queryCache")
            }
        }
    }

    // MARK: Pins

    /// Stores (or refreshes) objects under a pin name.
    func pin(_ objects: [(className: String, key: String, json: JSON)], name: String) throws {
        try pins.write { db in try Self.pin(objects, name: name, in: db) }
    }

    static func pin(_ objects: [(className: String, key: String, json: JSON)], name: String, in db: Database) throws {
        for object in objects {
            try db.execute(sql: "INSERT OR REPLACE INTO pin (name, className, objectKey, object) VALUES (?, ?, ?, ?)",
                           arguments: [name, object.className, object.key, object.json.jsonText])
        }
    }

    /// Refreshes an object wherever it is pinned; returns whether it was.
    @discardableResult
    func refresh(className: String, keys: [String], json: JSON, newKey: String) throws -> Bool {
        try pins.write { db in try Self.refresh(className: className, keys: keys, json: json, newKey: newKey, in: db) }
    }

    @discardableResult
    static func refresh(className: String, keys: [String], json: JSON, newKey: String, in db: Database) throws -> Bool {
        var found = false
        for key in keys {
            try db.execute(sql: "UPDATE pin SET object = ?, objectKey = ? WHERE className = ? AND objectKey = ?",
                           arguments: [json.jsonText, newKey, className, key])
            found = found || db.changesCount > 0
        }
        return found
    }

    /// A pinned object created by the queue: it now has an objectId (the key and the stored copy learn it).
    static func assignObjectId(_ objectId: String, toLocalId localId: String, className: String, in db: Database) throws {
        for row in try Row.fetchAll(db, sql: "SELECT name, object FROM pin WHERE className = ? AND objectKey = ?",
                                    arguments: [className, localId]) {
            guard case .object(var members)? = try? JSONParser.parse(row[1] as String) else { continue }
            members["objectId"] = .string(objectId)
            try db.execute(sql: "UPDATE pin SET objectKey = ?, object = ? WHERE name = ? AND className = ? AND objectKey = ?",
                           arguments: [objectId, JSON.object(members).jsonText, row[0] as String, className, localId])
        }
    }

    func unpin(className: String, keys: [String], name: String?) throws {
        try pins.write { db in
            for key in keys {
                if let name {
                    try db.execute(sql: "DELETE FROM pin WHERE name = ? AND className = ? AND objectKey = ?", arguments: [name, className, key])
                } else {
                    try db.execute(sql: "DELETE FROM pin WHERE className = ? AND objectKey = ?", arguments: [className, key])
                }
            }
        }
    }

    func unpinAll(name: String) throws {
        try pins.write { db in try db.execute(sql: "DELETE FROM pin WHERE name = ?", arguments: [name]) }
    }

    /// Pinned objects of a class (under any name, or one name), each once.
    func pinned(className: String, name: String?) throws -> [JSON] {
        try pins.read { db in
            let rows = name == nil
                ? try Row.fetchAll(db, sql: "SELECT DISTINCT objectKey, object FROM pin WHERE className = ? GROUP BY objectKey", arguments: [className])
                : try Row.fetchAll(db, sql: "SELECT objectKey, object FROM pin WHERE className = ? AND name = ?", arguments: [className, name])
            return rows.compactMap { try? JSONParser.parse($0[1] as String) }
        }
    }
}
