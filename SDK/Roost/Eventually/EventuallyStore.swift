import Foundation
import GRDB
import RoostCore

/// One queued command, as stored.
struct QueuedCommand: Sendable, Equatable {
    enum Kind: String, Sendable { case save, delete, logout }

    let sequence: Int64
    let requestId: String
    let kind: Kind
    let className: String
    /// The target: a server objectId, or the localId of an object the queue creates.
    let objectId: String?
    let localId: String?
    /// The save's field operations in wire form (pointers to new objects by localId).
    let body: JSON
    /// Who queued it: a user objectId or an automatic user's localId (nil: no user).
    let userKey: String?
}

/// A command the server refused with a Parse error: kept until the app clears it.
public struct FailedCommand: Sendable, Equatable {
    public let requestId: String
    public let kind: String
    public let className: String
    public let objectId: String?
    public let code: ParseErrorCode
    public let message: String
}

/// The durable side of `saveEventually`: commands, the localId → objectId map, failed commands,
/// the session tokens of users who logged out with commands still queued, and the users whose
/// session the server revoked, in one SQLite file (`eventually.sqlite`, WAL, `synchronous=FULL`: a
/// command is on disk before its call returns).
///
/// The pinned objects live here too (`LocalStore` reads and writes them through `database`): a queued
/// change and the pinned copy it updates, a delivered create and the objectId its pinned copy learns,
/// each commit in one transaction. Several processes may share the file (one storage directory): each
/// write waits for another's lock (`StoreFile.busyTimeout`) instead of failing at once.
final class EventuallyStore: Sendable {
    /// WAL (GRDB's pool): the drainer reads while calls append.
    private let queue: DatabasePool

    /// The file's database, for the pins kept in it.
    var database: DatabasePool { queue }

    init(directory: URL) throws {
        var configuration = StoreFile.configuration()
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE command (
                    sequence INTEGER PRIMARY KEY AUTOINCREMENT,
                    requestId TEXT NOT NULL UNIQUE,
                    kind TEXT NOT NULL,
                    className TEXT NOT NULL,
                    objectId TEXT,
                    localId TEXT,
                    body TEXT NOT NULL,
                    userKey TEXT
                );
                CREATE TABLE localId (localId TEXT PRIMARY KEY NOT NULL, objectId TEXT NOT NULL);
                CREATE TABLE failed (
                    sequence INTEGER PRIMARY KEY, requestId TEXT NOT NULL, kind TEXT NOT NULL, className TEXT NOT NULL,
                    objectId TEXT, code INTEGER NOT NULL, message TEXT NOT NULL
                );
                CREATE TABLE session (userKey TEXT PRIMARY KEY NOT NULL, sessionToken TEXT NOT NULL);
                """)
        }
        migrator.registerMigration("v2: users to sign in again") { db in
            // The revoked token: the user's commands wait until a session other than this one exists.
            try db.execute(sql: "CREATE TABLE awaitingSignIn (userKey TEXT PRIMARY KEY NOT NULL, sessionToken TEXT NOT NULL)")
        }
        migrator.registerMigration("v3: pins") { db in
            try db.execute(sql: """
                CREATE TABLE pin (
                    name TEXT NOT NULL, className TEXT NOT NULL, objectKey TEXT NOT NULL, object TEXT NOT NULL,
                    PRIMARY KEY (name, className, objectKey)
                );
                CREATE INDEX pin_object ON pin (className, objectKey);
                """)
        }
        queue = try StoreFile.open(directory.appendingPathComponent("eventually.sqlite"), configuration: configuration,
                                   migrator: migrator, damage: .setAsideAndThrow(what: "The offline queue"))
    }

    /// Appends commands in one durable transaction, with `alongside`'s changes to the pins.
    func enqueue(_ commands: [(kind: QueuedCommand.Kind, className: String, objectId: String?, localId: String?, body: JSON,
                               userKey: String?, requestId: String)],
                 alongside: ((Database) throws -> Void)? = nil) throws {
        try queue.writeOrThrowLocalStorage { db in
            try alongside?(db)
            let insert = try db.cachedStatement(
                sql: "INSERT INTO command (requestId, kind, className, objectId, localId, body, userKey) VALUES (?, ?, ?, ?, ?, ?, ?)")
            for command in commands {
                try insert.execute(arguments: [command.requestId, command.kind.rawValue, command.className, command.objectId,
                                               command.localId, command.body.jsonText, command.userKey])
            }
        }
    }

    /// The oldest commands, in order, except those of users who must sign in again.
    func next(limit: Int) throws -> [QueuedCommand] {
        try queue.read { db in
            try Row.fetchAll(db, sql: """
                SELECT sequence, requestId, kind, className, objectId, localId, body, userKey FROM command
                WHERE userKey IS NULL OR userKey NOT IN (SELECT userKey FROM awaitingSignIn) ORDER BY sequence LIMIT ?
                """, arguments: [limit]).map { row in
                QueuedCommand(
                    sequence: row[0], requestId: row[1], kind: QueuedCommand.Kind(rawValue: row[2]) ?? .save, className: row[3],
                    objectId: row[4], localId: row[5], body: (try? JSONParser.parse(row[6] as String)) ?? [:], userKey: row[7])
            }
        }
    }

    var pendingCount: Int { (try? countPending()) ?? 0 }

    func countPending() throws -> Int { try queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM command") ?? 0 } }

    func pendingCount(userKey: String) throws -> Int {
        try queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM command WHERE userKey = ?", arguments: [userKey]) ?? 0 }
    }

    /// Removes a delivered command and, for a create, records its objectId, in one transaction.
    func complete(_ command: QueuedCommand, createdObjectId: String?) throws {
        try completeAll([(command, createdObjectId)])
    }

    /// Removes delivered commands (a whole batch: one transaction, one fsync) with their new objectIds,
    /// with `alongside`'s changes to the pins.
    func completeAll(_ outcomes: [(command: QueuedCommand, createdObjectId: String?)],
                     alongside: ((Database) throws -> Void)? = nil) throws {
        try queue.writeOrThrowLocalStorage { db in
            try alongside?(db)
            let delete = try db.cachedStatement(sql: "DELETE FROM command WHERE sequence = ?")
            let map = try db.cachedStatement(sql: "INSERT OR REPLACE INTO localId (localId, objectId) VALUES (?, ?)")
            for (command, createdObjectId) in outcomes {
                try delete.execute(arguments: [command.sequence])
                if let localId = command.localId, let createdObjectId {
                    try map.execute(arguments: [localId, createdObjectId])
                }
                if command.kind == .logout, let userKey = command.userKey {
                    try db.execute(sql: "DELETE FROM session WHERE userKey = ?", arguments: [userKey])
                }
            }
        }
    }

    /// Moves a refused command to the failed table.
    func fail(_ command: QueuedCommand, code: ParseErrorCode, message: String) throws {
        try queue.writeOrThrowLocalStorage { db in
            try db.execute(sql: "DELETE FROM command WHERE sequence = ?", arguments: [command.sequence])
            try db.execute(
                sql: "INSERT INTO failed (sequence, requestId, kind, className, objectId, code, message) VALUES (?, ?, ?, ?, ?, ?, ?)",
                arguments: [command.sequence, command.requestId, command.kind.rawValue, command.className,
                            command.objectId ?? command.localId, code.rawValue, message])
        }
    }

    func failed() throws -> [FailedCommand] {
        try queue.read { db in
            try Row.fetchAll(db, sql: "SELECT requestId, kind, className, objectId, code, message FROM failed ORDER BY sequence").map { row in
                FailedCommand(requestId: row[0], kind: row[1], className: row[2], objectId: row[3],
                              code: ParseErrorCode(rawValue: row[4]), message: row[5])
            }
        }
    }

    func clearFailed() throws { try queue.writeOrThrowLocalStorage { db in try db.execute(sql: "DELETE FROM failed") } }

    /// The objectIds known for these localIds, in one read.
    func objectIds(forLocalIds localIds: [String]) throws -> [String: String] {
        guard !localIds.isEmpty else { return [:] }
        return try queue.read { db in
            var result: [String: String] = [:]
            let placeholders = Array(repeating: "?", count: localIds.count).joined(separator: ",")
            for row in try Row.fetchAll(db, sql: "SELECT localId, objectId FROM localId WHERE localId IN (\(placeholders))",
                                        arguments: StatementArguments(localIds)) {
                result[row[0]] = row[1]
            }
            return result
        }
    }

    enum Creation: Equatable {
        case queued, delivered(objectId: String), neverQueued
    }

    /// Where the creation of a new object stands. When the store cannot be read, `queued`: the object
    /// is then taken as it is pinned, as before this check existed.
    func creation(ofLocalId localId: String) -> Creation {
        let found = try? queue.read { db -> Creation in
            if let objectId = try String.fetchOne(db, sql: "SELECT objectId FROM localId WHERE localId = ?", arguments: [localId]) {
                return .delivered(objectId: objectId)
            }
            let queued = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM command WHERE localId = ?)", arguments: [localId])
            return queued == true ? .queued : .neverQueued
        }
        return found ?? .queued
    }

    func objectId(forLocalId localId: String) throws -> String? {
        try queue.read { db in try String.fetchOne(db, sql: "SELECT objectId FROM localId WHERE localId = ?", arguments: [localId]) }
    }

    func record(localId: String, objectId: String) throws {
        try queue.writeOrThrowLocalStorage { db in
            try db.execute(sql: "INSERT OR REPLACE INTO localId (localId, objectId) VALUES (?, ?)", arguments: [localId, objectId])
        }
    }

    /// The server revoked `sessionToken`: the user's commands wait until they sign in again.
    func awaitSignIn(userKey: String, revokedToken: String) throws {
        try queue.writeOrThrowLocalStorage { db in
            try db.execute(sql: "INSERT OR REPLACE INTO awaitingSignIn (userKey, sessionToken) VALUES (?, ?)",
                           arguments: [userKey, revokedToken])
        }
    }

    /// Users whose commands wait for a sign-in, with the token the server revoked.
    func awaitingSignIn() throws -> [(userKey: String, revokedToken: String)] {
        try queue.read { db in
            try Row.fetchAll(db, sql: "SELECT userKey, sessionToken FROM awaitingSignIn").map { ($0[0], $0[1]) }
        }
    }

    func signedInAgain(userKey: String) throws {
        try queue.writeOrThrowLocalStorage { db in try db.execute(sql: "DELETE FROM awaitingSignIn WHERE userKey = ?", arguments: [userKey]) }
    }

    func sessionToken(userKey: String) throws -> String? {
        try queue.read { db in try String.fetchOne(db, sql: "SELECT sessionToken FROM session WHERE userKey = ?", arguments: [userKey]) }
    }

    /// Keeps a logged-out user's token for their queued commands, and queues the logout behind them.
    func queueLogout(userKey: String, sessionToken: String) throws {
        try queue.writeOrThrowLocalStorage { db in
            try db.execute(sql: "INSERT OR REPLACE INTO session (userKey, sessionToken) VALUES (?, ?)", arguments: [userKey, sessionToken])
            try db.execute(
                sql: "INSERT INTO command (requestId, kind, className, body, userKey) VALUES (?, 'logout', '_Session', '{}', ?)",
                arguments: [UUID().uuidString, userKey])
        }
    }
}
