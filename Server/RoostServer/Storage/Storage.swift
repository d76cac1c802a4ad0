import GRDB

/// Errors of the storage layer that are not the client's fault.
public enum StorageError: Error, CustomStringConvertible {
    case corruptRow(className: String, objectId: String)

    public var description: String {
        switch self {
        case .corruptRow(let className, let objectId): "stored row \(className)/\(objectId) does not decode"
        }
    }
}

/// The SQLite database: one writer and concurrent readers in WAL mode (GRDB `DatabasePool`).
///
/// A write closure is one transaction: when it returns, the change is committed.
public final class Storage: Sendable {
    let pool: DatabasePool
    private let readers: ReaderPool

    /// Opens (creating if needed) the database file at `path` and brings its tables up to date.
    public init(path: String, readers: Int) throws {
        var configuration = Configuration()
        configuration.maximumReaderCount = max(2, readers)
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in try Storage.applyPragmas(db) }
        pool = try DatabasePool(path: path, configuration: configuration)
        try Storage.migrator.migrate(pool)
        self.readers = ReaderPool(path: path)
    }

    /// Every pragma in one place. WAL is set by `DatabasePool`; with WAL, `synchronous=NORMAL` keeps
    /// commits atomic and durable across a process crash without an fsync per commit.
    static func applyPragmas(_ db: Database) throws {
        try db.execute(sql: """
            PRAGMA synchronous = NORMAL;
            PRAGMA foreign_keys = ON;
            PRAGMA temp_store = MEMORY;
            PRAGMA cache_size = -4000;
            """)
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: schema table") { db in
            try db.execute(sql: """
                CREATE TABLE _schema (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    className TEXT NOT NULL UNIQUE,
                    fields TEXT NOT NULL,
                    classLevelPermissions TEXT,
                    indexes TEXT
                )
                """)
        }
        return migrator
    }

    /// Runs `body` in a write transaction, committed when it returns and rolled back when it throws.
    public func write<T>(_ body: (Database) throws -> T) throws -> T {
        try pool.write(body)
    }

    /// Runs `body` on the calling thread's read connection, in one snapshot of the last commit.
    func read<T>(_ body: (any SQLQuerying) throws -> T) throws -> T {
        let reader = try readers.reader()
        return try reader.inTransaction { try body(reader) }
    }

    /// Checkpoints the WAL and closes every connection. No request may be running.
    public func close() throws {
        readers.close()
        try pool.writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) }
        try pool.close()
    }
}
