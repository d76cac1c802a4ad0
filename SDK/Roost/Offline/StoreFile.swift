import Foundation
import GRDB

/// Opens the client's SQLite files (`eventually.sqlite`, `local.sqlite`): shared with other processes
/// using the same storage directory, checked for damage, and never deleted.
enum StoreFile {
    /// How long a write waits for another process's lock before it fails (several `todo` commands can
    /// run at once on one storage directory; without a wait they failed at once with "database is locked").
    static let busyTimeout: TimeInterval = 10

    /// What to do with a file SQLite cannot read.
    enum DamagePolicy {
        /// Disposable data: move it aside and start a new, empty file.
        case rebuild
        /// The user's unsent writes: move it aside and throw, saying where it went.
        case setAsideAndThrow(what: String)
    }

    static func configuration() -> Configuration {
        var configuration = Configuration()
        configuration.busyMode = .timeout(busyTimeout)
        return configuration
    }

    /// Opens `url` and migrates it. A damaged file (unreadable, failing `quick_check`, or truncated to
    /// nothing) is renamed to `<name>.damaged-<date>` and handled by `damage`; other failures
    /// (read-only directory, full disk) throw `RoostError.localStorage`.
    static func open(_ url: URL, configuration: Configuration, migrator: DatabaseMigrator, damage: DamagePolicy) throws -> DatabasePool {
        do {
            return try openChecked(url, configuration: configuration, migrator: migrator)
        } catch StoreFileDamage.damaged(let reason) {
            let aside = try setAside(url)
            switch damage {
            case .rebuild:
                do { return try openChecked(url, configuration: configuration, migrator: migrator) } catch {
                    throw RoostError.localStorage("cannot create \(url.path): \(describe(error))")
                }
            case .setAsideAndThrow(let what):
                throw RoostError.localStorage(
                    "\(what) \(url.path) was damaged (\(reason)) and was moved to \(aside.path); the changes it held were not sent, "
                        + "and the local list is read again from the server. A new, empty one is used from the next start.")
            }
        } catch let error as RoostError {
            throw error
        } catch {
            throw RoostError.localStorage("cannot open \(url.path): \(describe(error))")
        }
    }

    private static func openChecked(_ url: URL, configuration: Configuration, migrator: DatabaseMigrator) throws -> DatabasePool {
        do {
            if !FileManager.default.fileExists(atPath: url.path) { try create(url, configuration: configuration, migrator: migrator) }
            if isTruncatedToNothing(url) { throw StoreFileDamage.damaged("the file is empty") }
            let pool = try DatabasePool(path: url.path, configuration: configuration)
            let check = try pool.read { db in try String.fetchOne(db, sql: "PRAGMA quick_check") }
            guard check == "ok" else { throw StoreFileDamage.damaged(check ?? "quick_check failed") }
            try migrator.migrate(pool)
            return pool
        } catch let error as DatabaseError where [.SQLITE_CORRUPT, .SQLITE_NOTADB].contains(error.resultCode) {
            throw StoreFileDamage.damaged(error.message ?? "\(error.resultCode)")
        }
    }

    /// Builds a new file under a temporary name and links it into place, so that no process ever sees
    /// it empty (which would read as a truncated file). Another process creating it at once wins.
    private static func create(_ url: URL, configuration: Configuration, migrator: DatabaseMigrator) throws {
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).new-\(UUID().uuidString)")
        defer { for suffix in ["", "-wal", "-shm"] { unlink(temporary.path + suffix) } }
        let pool = try DatabasePool(path: temporary.path, configuration: configuration)
        try migrator.migrate(pool)
        try pool.close()  // Checkpoints: the pages are in the file itself, not in a WAL left behind.
        guard placeExclusively(temporary.path, at: url.path) else {
            throw RoostError.localStorage("cannot create \(url.path): \(String(cString: strerror(errno)))")
        }
    }

    /// Links `source` to `target` unless `target` exists (then another process made it: fine). On a file
    /// system without hard links, renames instead (a narrow race with another creator, not a failure).
    static func placeExclusively(_ source: String, at target: String) -> Bool {
        if link(source, target) == 0 || errno == EEXIST { return true }
        guard [EPERM, ENOTSUP, EOPNOTSUPP, EXDEV].contains(errno) else { return false }
        return FileManager.default.fileExists(atPath: target) || rename(source, target) == 0
    }

    /// An existing file of 0 bytes with no WAL holding its pages: SQLite would take it for a new,
    /// empty database, and the data it had would be silently gone. (A file we create is never so: see `create`.)
    private static func isTruncatedToNothing(_ url: URL) -> Bool {
        func size(_ path: String) -> Int? { (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? nil }
        guard size(url.path) == 0 else { return false }
        return (size(url.path + "-wal") ?? 0) == 0
    }

    /// Renames the file (and its WAL and shared-memory files) aside; returns the new path of the main file.
    private static func setAside(_ url: URL) throws -> URL {
        let stamp = ISO8601DateFormatter().string(from: Date()).replacingOccurrences(of: ":", with: "")
        let aside = URL(fileURLWithPath: "\(url.path).damaged-\(stamp)-\(UUID().uuidString.prefix(8))")
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: url.path + suffix) {
            guard rename(url.path + suffix, aside.path + suffix) == 0 else {
                throw RoostError.localStorage("\(url.path) is damaged and cannot be moved aside: \(String(cString: strerror(errno)))")
            }
        }
        return aside
    }

    static func describe(_ error: Error) -> String {
        if let error = error as? DatabaseError { return error.message ?? "\(error.resultCode)" }
        return "\(error)"
    }
}

extension DatabasePool {
    /// `write`, except that a write the disk refuses (full, read-only, failing) throws `RoostError.localStorage`
    /// with a plain message; a raw SQLite error ("… while executing `COMMIT TRANSACTION`") reached the user.
    func writeOrThrowLocalStorage<T>(_ updates: (Database) throws -> T) throws -> T {
        do {
            return try write(updates)
        } catch let error as DatabaseError where [.SQLITE_FULL, .SQLITE_READONLY, .SQLITE_IOERR, .SQLITE_CANTOPEN].contains(error.resultCode) {
            throw RoostError.localStorage("cannot write \(path): \(StoreFile.describe(error))")
        }
    }
}

private enum StoreFileDamage: Error {
    case damaged(String)
}
