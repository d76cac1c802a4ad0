import CLibPQ
import Foundation

/// One connection to PostgreSQL through libpq: blocking calls, for the thread that holds it.
///
/// libpq is thread-safe, but "no two threads [may] manipulate the same PGconn object at the same time"
/// (https://www.postgresql.org/docs/current/libpq-threading.html): use a connection from one thread at a time
/// (`PostgresPool` hands each out to one caller). Owns its `PGconn` (PQfinish in deinit).
///
///     let connection = try PostgresConnection(url: "postgres://roost:secret@127.0.0.1:5432/roost")
///     let rows = try connection.query("select n from t where id = $1", ["a1"])
///     let n = try rows[0].int("n")
///
/// Statements run with `query` are prepared once per connection and kept (at most `preparedLimit`, the least
/// recently used let go); `execute` runs SQL text as it is (several statements, no parameters). Passwords never
/// appear in errors: they name the server as `user@host:port/database`.
public final class PostgresConnection {
    let handle: OpaquePointer
    /// The server this connects to, without the password.
    public let endpoint: String
    /// How many prepared statements a connection keeps.
    public static let preparedLimit = 256

    private var prepared: [String: PreparedStatement] = [:]
    private var nextStatementNumber = 0
    private var useCounter = 0
    /// Rows the last INSERT, UPDATE or DELETE run through `SQLQuerying` changed (see `changes`).
    var lastChangedRows = 0
    /// What the current write transaction did (see `Storage.write`).
    let writeState = WriteState()
    /// Inside `PostgresEngine.read`: the node's schema cache and the generation the transaction's snapshot belongs to.
    var readerSchemas: (cache: SchemaCache, generation: UInt64)?
    /// Statements that go out ahead of the next one, in its round trip (`sendWithNext`).
    var statementsToSend: [(sql: String, parameters: [PostgresValue], preparedName: String?)] = []
    /// Pipelines that sent `statementsToSend` so far (see `unsentPosition`).
    var pipelinesSent = 0
    /// A COMMIT went out whose answer is read at the connection's next use (`commitWithoutWaiting`).
    var commitUnread = false
    /// The session's `statement_timeout` as this connection set it (nil: never set here, the server's default).
    var statementTimeoutOutsideTransactions: UInt64?

    private struct PreparedStatement {
        let name: String
        var lastUse: Int
    }

    /// Connects and authenticates.
    /// - Throws: `.badURL` for a URL that does not read; `.connectionFailed` with libpq's reason (which names the
    ///   host and user, never the password).
    public convenience init(url: String) throws {
        try self.init(url: try PostgresURL(url))
    }

    public init(url: PostgresURL) throws {
        endpoint = url.redacted
        // PQconnectdbParams with expand_dbname 0: every value is taken literally, nothing is re-parsed.
        let keys = url.parameters.map { strdup($0.key) } + [nil]
        let values = url.parameters.map { strdup($0.value) } + [nil]
        defer {
            keys.forEach { free($0) }
            values.forEach { free($0) }
        }
        let connection = keys.map { UnsafePointer($0) }.withUnsafeBufferPointer { keyPointers in
            values.map { UnsafePointer($0) }.withUnsafeBufferPointer { valuePointers in
                PQconnectdbParams(keyPointers.baseAddress, valuePointers.baseAddress, 0)
            }
        }
        guard let connection else {
            throw PostgresError(.connectionFailed, message: "libpq could not allocate a connection", endpoint: endpoint)
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = String(cString: PQerrorMessage(connection))
            PQfinish(connection)
            throw PostgresError(.connectionFailed, message: message, endpoint: endpoint)
        }
        handle = connection
        // NOTICE and WARNING lines ("table does not exist, skipping") would go to stderr; callers need none of them.
        PQsetNoticeProcessor(handle, { _, _ in }, nil)
        // No JIT: the query compiler's per-row subqueries (`$text`, the order of Objects and Arrays) are estimated at
        // 100–1,000 rows per set-returning function, which passes `jit_above_cost` on any table, and compiling them
        // took 0.6 s for a query that ran in 0.4 ms (PostgresQueryParityTests). Roost's statements are short. (A server
        // before PostgreSQL 11 has no `jit` setting, nor JIT: its refusal is ignored.)
        _ = try? check(PQexec(handle, "SET jit = off"))
        // float8 values as text that parses back to the same double (PostgreSQL 12+'s default, which a role, database or
        // PGOPTIONS may lower to 15 digits): `TypedGroup` answers to the bit from them.
        _ = try? check(PQexec(handle, "SET extra_float_digits = 3"))
    }

    deinit { PQfinish(handle) }

    /// The connection is usable as far as libpq knows (a broken one turns false at its next use).
    public var isConnected: Bool { PQstatus(handle) == CONNECTION_OK }

    /// Whether the connection is outside any transaction, idle (a BEGIN waiting in `statementsToSend` counts as inside).
    public var isIdle: Bool {
        readUnreadCommit()
        return PQtransactionStatus(handle) == PQTRANS_IDLE && statementsToSend.isEmpty
    }

    /// The server process serving this connection (what `pg_terminate_backend` takes).
    public var backendPID: Int32 { PQbackendPID(handle) }

    /// Runs one statement with `$1`, `$2`, ... parameters, prepared on first use and reused after.
    /// - Throws: `.server` with the SQLSTATE (catch `.uniqueViolation`, `.serializationFailure`, ...);
    ///   `.connectionLost` when the connection broke.
    @discardableResult
    public func query(_ sql: String, _ parameters: [PostgresValue] = []) throws -> PostgresResult {
        readUnreadCommit()
        let types = parameters.map(\.parameterType)
        let key = Self.statementKey(sql, types)
        do {
            return try runPrepared(key: key, sql: sql, types: types, parameters)
        } catch let error as PostgresError where error.sqlState == .invalidSQLStatementName && isIdle {
            // Someone ran DEALLOCATE ALL or DISCARD ALL on this session: prepare again, once.
            prepared = [:]
            return try runPrepared(key: key, sql: sql, types: types, parameters)
        } catch let error as PostgresError where error.sqlState == .featureNotSupported && error.message.contains("cached plan") && isIdle {
            // "cached plan must not change result type": a table's columns changed since (SELECT *); prepare again, once.
            if let stale = prepared.removeValue(forKey: key) { _ = try? execute("DEALLOCATE " + stale.name) }
            return try runPrepared(key: key, sql: sql, types: types, parameters)
        }
    }

    /// Runs the statement prepared under `key`, preparing it first (in the same round trip) when the connection has
    /// not yet; statements waiting in `statementsToSend` go out ahead of it, in that round trip too.
    private func runPrepared(key: String, sql: String, types: [UInt32], _ parameters: [PostgresValue]) throws -> PostgresResult {
        useCounter += 1
        if let statement = prepared[key], statementsToSend.isEmpty {
            prepared[key]?.lastUse = useCounter
            return try run(name: statement.name, parameters)
        }
        let name: String
        let preparing = prepared[key] == nil
        if let statement = prepared[key] {
            prepared[key]?.lastUse = useCounter
            name = statement.name
        } else {
            try makeRoomForStatement()
            nextStatementNumber += 1
            name = "roost_\(nextStatementNumber)"
        }
        let answers = withParameters(parameters) { count, values, lengths, formats in
            runPipeline { queued in
                (!preparing || queue(PQsendPrepare(handle, name, sql, Int32(types.count), types), &queued))
                    && queue(PQsendQueryPrepared(handle, name, count, values, lengths, formats, 0), &queued)
            }
        }
        // Kept once its PREPARE took, whatever its run did: the statement is on the server (a rollback keeps it).
        if preparing, let prepare = answers.results.first, prepare != nil {
            prepared[key] = PreparedStatement(name: name, lastUse: useCounter)
        }
        return try lastResult(of: answers)
    }

    /// Lets the least recently used prepared statement go when the connection keeps `preparedLimit`; forgotten only
    /// once the server let it go (in an aborted transaction it cannot: the session would keep a statement the
    /// connection no longer counts, for good).
    /// - Throws: the DEALLOCATE's error (the statement that needed the room would fail there too).
    private func makeRoomForStatement() throws {
        guard prepared.count >= Self.preparedLimit, let oldest = prepared.min(by: { $0.value.lastUse < $1.value.lastUse }) else { return }
        do {
            try execute("DEALLOCATE " + oldest.value.name)
        } catch let error as PostgresError where error.sqlState == .invalidSQLStatementName {
            // Gone already (the session lost its statements: DISCARD ALL): nothing held.
        }
        prepared[oldest.key] = nil
    }

    /// Forgets every prepared statement this connection keeps (after the session lost them, or a table changed shape).
    func forgetPreparedStatements() {
        for statement in prepared.values { _ = try? execute("DEALLOCATE " + statement.name) }
        prepared = [:]
    }

    /// Runs SQL text as it is: several statements separated by `;`, no parameters (DDL, `BEGIN`, `LISTEN`).
    /// Returns the last statement's result.
    @discardableResult
    public func execute(_ sql: String) throws -> PostgresResult {
        readUnreadCommit()
        try sendWaitingStatements()
        return try check(PQexec(handle, sql))
    }

    /// Quotes a name for SQL text: `"my ""table"""`.
    public static func quoteIdentifier(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// What a prepared statement is kept under: its text and its parameters' types.
    static func statementKey(_ sql: String, _ types: [UInt32]) -> String {
        types.map(String.init).joined(separator: ",") + ";" + sql
    }

    /// The name `key`'s statement is prepared under, prepared now if it was not (for `send`, which cannot pipeline).
    func statementName(for key: String, sql: String, types: [UInt32]) throws -> String {
        useCounter += 1
        if let statement = prepared[key] {
            prepared[key]?.lastUse = useCounter
            return statement.name
        }
        try makeRoomForStatement()
        try sendWaitingStatements()
        nextStatementNumber += 1
        let name = "roost_\(nextStatementNumber)"
        _ = try check(PQprepare(handle, name, sql, Int32(types.count), types))
        prepared[key] = PreparedStatement(name: name, lastUse: useCounter)
        return name
    }

    private func run(name: String, _ parameters: [PostgresValue]) throws -> PostgresResult {
        try withParameters(parameters) { count, values, lengths, formats in
            try check(PQexecPrepared(handle, name, count, values, lengths, formats, 0))
        }
    }

    /// Turns a PGresult into a result or a thrown error (freeing it then).
    func check(_ result: OpaquePointer?) throws -> PostgresResult {
        guard let result else { throw lostOrFailed(message: String(cString: PQerrorMessage(handle))) }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return PostgresResult(taking: result)
        default:
            defer { PQclear(result) }
            func field(_ code: Character) -> String? {
                PQresultErrorField(result, Int32(code.asciiValue!)).map { String(cString: $0) }
            }
            let message = field("M") ?? String(cString: PQresultErrorMessage(result))
            let state = field("C").map(SQLState.init(rawValue:))
            if !isConnected {
                throw PostgresError(.connectionLost, sqlState: state, message: message, endpoint: endpoint)
            }
            throw PostgresError(.server, sqlState: state, message: message, detail: field("D"), constraint: field("n"),
                                endpoint: endpoint)
        }
    }

    func lostOrFailed(message: String) -> PostgresError {
        PostgresError(isConnected ? .server : .connectionLost, message: message, endpoint: endpoint)
    }
}
