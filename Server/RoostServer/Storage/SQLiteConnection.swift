import CSQLite
import Dispatch
import Glibc

/// One SQLite connection, used by one thread at a time, with its own statement cache.
///
/// GRDB (which creates and migrates the database) costs a dispatch-queue hop, pool barriers and
/// transaction bookkeeping per call; measured on get-by-id and create, that overhead was larger
/// than the statements themselves, so requests run on these lean connections: one read-only
/// connection per HTTP worker thread (`ReaderPool`) and one writer (`WriteQueue`).
/// Not `Sendable`: never share one between threads.
final class SQLiteConnection: SQLConnection {
    private let handle: OpaquePointer
    private var statements: [String: OpaquePointer] = [:]
    let writeState = WriteState()
    let dialect = SQLDialect.sqlite
    /// On a read connection inside `Storage.read`: the shared schema cache and the generation the
    /// transaction's snapshot belongs to.
    var readerSchemas: (cache: SchemaCache, generation: UInt64)?
    let isReadOnly: Bool
    /// How long statements may run (read connections are timed; see `Storage.read`).
    let budget = QueryBudget()
    /// Text indexes with words staged in the current transaction: moved into FTS5 before it commits (`TextIndex`).
    let stagedTextIndexes = StagedTextIndexes()
    /// On a read connection: the transaction kept open between reads (`SQLiteEngine.read`).
    let keptSnapshot = KeptSnapshot()
    /// On a connection that checkpoints (the writer): ends the snapshots idle read connections keep, called while
    /// it waits for readers (`waitForLock`), since those would hold it to the timeout.
    var endIdleSnapshots: (@Sendable () -> Void)?
    /// How long a statement waits for a lock before SQLITE_BUSY, and since when this one waits (`waitForLock`).
    private var busyMilliseconds: UInt64 = 10_000
    private var busySince: UInt64 = 0
    /// The WAL hook's settings (`restartWAL`).
    private var walRestart: (frames: Int32, commits: CommitCounter)?

    /// Client-shaped SQL varies; past this many cached statements the cache starts over.
    private static let statementCacheLimit = 256

    /// Opens the existing database at `path`. See https://sqlite.org/c3ref/open.html
    /// - Parameter pragmas: SQL run once on the new connection (`SQLiteEngine.pragmas`).
    init(path: String, readOnly: Bool, pragmas: String) throws {
        var connection: OpaquePointer?
        let mode = readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE
        let status = sqlite3_open_v2(path, &connection, mode | SQLITE_OPEN_NOMUTEX, nil)
        guard status == SQLITE_OK, let connection else {
            let message = connection.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(connection)
            throw SQLiteError(code: status, message: message)
        }
        handle = connection
        isReadOnly = readOnly
        sqlite3_extended_result_codes(handle, 1)
        SQLFunctions.register(on: handle, budget: budget, stagedTextIndexes: stagedTextIndexes)
        if readOnly { budget.install(on: handle) }
        sqlite3_busy_handler(handle, { context, attempt in
            Unmanaged<SQLiteConnection>.fromOpaque(context!).takeUnretainedValue().waitForLock(attempt: attempt) ? 1 : 0
        }, Unmanaged.passUnretained(self).toOpaque())
        // Readers keep a small page cache (500 KB): there is one per HTTP worker thread, each a copy of pages the
        // system's page cache holds anyway. Measured with wrk (16 connections, 10,000 objects): at 2 MB each, gets
        // and queries ran at the same rate and peak RSS was 52 MB, against 46 MB. (The writer keeps 4 MB: at 1 MB,
        // creates into a class with 20 indexes were 12 % slower.)
        let pragmaStatus = sqlite3_exec(handle, readOnly ? pragmas + "PRAGMA cache_size = -500;" : pragmas, nil, nil, nil)
        guard pragmaStatus == SQLITE_OK else { throw error(pragmaStatus) }
    }

    /// Runs `body` with SQLite waiting at most `milliseconds` for a lock (10 s otherwise).
    func withBusyTimeout<T>(milliseconds: Int32, _ body: () throws -> T) rethrows -> T {
        busyMilliseconds = UInt64(max(0, milliseconds))
        defer { busyMilliseconds = 10_000 }
        return try body()
    }

    /// SQLite's busy handler, in place of `sqlite3_busy_timeout` (the same limits; it polls every 1 ms where SQLite's
    /// backs off): whether to try the lock again. Before each try, idle read connections give up their kept
    /// snapshots; the first try comes at once.
    private func waitForLock(attempt: Int32) -> Bool {
        let now = DispatchTime.now().uptimeNanoseconds
        if attempt == 0 { busySince = now }
        endIdleSnapshots?()
        if attempt == 0 { return true }
        guard now - busySince < busyMilliseconds * 1_000_000 else { return false }
        usleep(1000)
        return true
    }

    /// After each commit that wrote: counts it in `commits`, and if it leaves the WAL with `frames` frames or more,
    /// restarts the WAL (a RESTART checkpoint, waiting for older reads up to the busy timeout) before the commit
    /// returns. Replaces `wal_autocheckpoint`.
    func restartWAL(atFrames frames: Int32, counting commits: CommitCounter) {
        walRestart = (frames, commits)
        sqlite3_wal_hook(handle, { context, db, name, walFrames in
            let connection = Unmanaged<SQLiteConnection>.fromOpaque(context!).takeUnretainedValue()
            guard let (frames, commits) = connection.walRestart else { return SQLITE_OK }
            commits.increment()
            guard walFrames >= frames else { return SQLITE_OK }
            // Another connection's checkpoint in progress (the Checkpointer's) makes it fail at once, without
            // the busy handler: try again until that one ends, for at most the busy timeout.
            let started = DispatchTime.now().uptimeNanoseconds
            while sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_RESTART, nil, nil) & 0xff == SQLITE_BUSY,
                DispatchTime.now().uptimeNanoseconds - started < 10_000_000_000 {
                usleep(500)
            }
            return SQLITE_OK
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Inside a transaction (`BEGIN` without its `COMMIT` or `ROLLBACK` yet).
    var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// Stops whatever this connection runs now and later (shutdown). Callable from any thread.
    func interrupt() {
        budget.stop()
        sqlite3_interrupt(handle)
    }

    deinit {
        for statement in statements.values { sqlite3_finalize(statement) }
        sqlite3_close_v2(handle)
    }

    /// Runs `body` in one transaction: one snapshot for reads; for writes, all or nothing.
    /// - Parameter immediate: take the write lock at once (`BEGIN IMMEDIATE`).
    func inTransaction<T>(immediate: Bool = false, _ body: () throws -> T) throws -> T {
        try execute(immediate ? "BEGIN IMMEDIATE" : "BEGIN")
        writeState.rollbackProofWrites = []
        do {
            let result = try body()
            let staged = stagedTextIndexes.take()
            if !staged.isEmpty { try TextIndex.flush(staged, in: self) }
            try execute("COMMIT")
            writeState.rollbackProofWrites = []
            return result
        } catch {
            try? execute("ROLLBACK")
            _ = stagedTextIndexes.take()
            writeState.schemaCache.removeAll()
            writeState.objectChanges.removeAll()
            let kept = writeState.rollbackProofWrites
            writeState.rollbackProofWrites = []
            if !kept.isEmpty { try? inTransaction(immediate: immediate) { for write in kept { try write(self) } } }
            throw error
        }
    }

    func run(_ sql: String, _ arguments: [SQLValue], cacheable: Bool) throws {
        try forEachRow(sql, arguments, cacheable: cacheable) { _ in }
    }

    /// A statement costs no round trip here: it runs at once.
    func runSoon(_ sql: String) throws { try execute(sql) }

    func withdrawIfUnsent(_ sql: String) -> Bool { false }

    var namesSavepointsByDepth: Bool { true }

    var unsentPosition: UnsentPosition { UnsentPosition() }

    func withdrawUnsent(from position: UnsentPosition) -> Bool { false }

    /// Nothing waits here: the statement runs at once (its error thrown by it).
    func runAnsweredLater(_ sql: String, _ arguments: [SQLValue]) throws { try run(sql, arguments, cacheable: true) }

    func awaitAnswers() throws {}

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    var changes: Int { Int(sqlite3_changes(handle)) }

    /// The rowid of the last INSERT.
    var lastInsertedRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    private func statement(for sql: String) throws -> OpaquePointer {
        if let cached = statements[sql] { return cached }
        if statements.count >= SQLiteConnection.statementCacheLimit {
            for statement in statements.values { sqlite3_finalize(statement) }
            statements.removeAll()
        }
        var statement: OpaquePointer?
        let status = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard status == SQLITE_OK, let statement else { throw error(status) }
        statements[sql] = statement
        return statement
    }

    private func error(_ status: Int32) -> SQLiteError {
        SQLiteError(code: sqlite3_extended_errcode(handle), message: String(cString: sqlite3_errmsg(handle)))
    }
}

extension SQLiteConnection: SQLQuerying {
    func fetchRows(_ sql: String, _ arguments: [SQLValue], cacheable: Bool) throws -> [[SQLValue]] {
        var rows: [[SQLValue]] = []
        try forEachRow(sql, arguments, cacheable: cacheable) { rows.append($0) }
        return rows
    }

    func forEachRow(_ sql: String, _ arguments: [SQLValue], cacheable: Bool, _ body: ([SQLValue]) throws -> Void) throws {
        try withStatement(sql, arguments, cacheable: cacheable) { statement in
            let columnCount = sqlite3_column_count(statement)
            var row: [SQLValue] = []
            row.reserveCapacity(Int(columnCount))
            while true {
                let status = sqlite3_step(statement)
                if status == SQLITE_DONE { return }
                guard status == SQLITE_ROW else { throw error(status) }
                row.removeAll(keepingCapacity: true)
                for column in 0..<columnCount {
                    switch sqlite3_column_type(statement, column) {
                    case SQLITE_NULL: row.append(.null)
                    case SQLITE_INTEGER: row.append(.integer(sqlite3_column_int64(statement, column)))
                    case SQLITE_FLOAT: row.append(.real(sqlite3_column_double(statement, column)))
                    default:
                        let count = Int(sqlite3_column_bytes(statement, column))
                        let text = sqlite3_column_text(statement, column).map {
                            String(decoding: UnsafeBufferPointer(start: $0, count: count), as: UTF8.self)
                        }
                        row.append(.text(text ?? ""))
                    }
                }
                try body(row)
            }
        }
    }

    /// The UTF-8 bytes of each row's first column (empty for NULL), valid only during `body`: for scans that read one
    /// text column of many rows without making a `String` of each (`StreamedGroup`). SQL shaped by a client query:
    /// never cached.
    func forEachText(_ sql: String, _ arguments: [SQLValue], _ body: (UnsafeBufferPointer<UInt8>) throws -> Void) throws {
        try withStatement(sql, arguments, cacheable: false) { statement in
            while true {
                let status = sqlite3_step(statement)
                if status == SQLITE_DONE { return }
                guard status == SQLITE_ROW else { throw error(status) }
                // The text stays SQLite's until the next step: read in place, never copied.
                let text = sqlite3_column_text(statement, 0)
                try body(UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(statement, 0))))
            }
        }
    }

    /// Runs `body` with `sql` prepared and `arguments` bound, then resets it.
    private func withStatement(_ sql: String, _ arguments: [SQLValue], cacheable: Bool,
                               _ body: (OpaquePointer) throws -> Void) throws {
        // DDL and one-off statements are not kept: a prepared statement on a dropped table must go.
        let statement = try statement(for: sql)
        defer { if !cacheable { forget(sql) } }
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        for (offset, argument) in arguments.enumerated() {
            let index = Int32(offset + 1)
            let status: Int32
            switch argument {
            case .null: status = sqlite3_bind_null(statement, index)
            case .integer(let value): status = sqlite3_bind_int64(statement, index, value)
            case .real(let value): status = sqlite3_bind_double(statement, index, value)
            case .text(let value):
                var value = value
                status = value.withUTF8 { bytes in
                    bytes.withMemoryRebound(to: CChar.self) { characters in
                        // A NULL pointer would bind SQL NULL: an empty string needs a real one.
                        guard let base = characters.baseAddress else { return roost_sqlite3_bind_text(statement, index, "", 0) }
                        return roost_sqlite3_bind_text(statement, index, base, Int32(characters.count))
                    }
                }
            }
            guard status == SQLITE_OK else { throw error(status) }
        }
        try body(statement)
    }
}

extension SQLiteConnection {
    private func forget(_ sql: String) {
        if let statement = statements.removeValue(forKey: sql) { sqlite3_finalize(statement) }
    }
}

/// An SQLite failure, with its extended result code. The message is SQLite's own and never
/// holds bound values, so it is safe to log.
struct SQLiteError: DatabaseError, CustomStringConvertible {
    let code: Int32
    let message: String

    // SQLITE_CONSTRAINT_PRIMARYKEY and _UNIQUE are macros Swift cannot import: SQLITE_CONSTRAINT | n << 8.
    var isPrimaryKeyViolation: Bool { code == SQLITE_CONSTRAINT | (6 << 8) }
    var isUniqueViolation: Bool { code == SQLITE_CONSTRAINT | (8 << 8) }
    /// SQLITE_FULL: the disk (or the file system holding the database) has no room left.
    var isDiskFull: Bool { code & 0xFF == SQLITE_FULL }
    var isInterrupted: Bool { code & 0xFF == SQLITE_INTERRUPT }

    var description: String { "SQLite error \(code): \(message)" }
}
