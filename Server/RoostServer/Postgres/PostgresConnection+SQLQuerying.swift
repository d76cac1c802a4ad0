import CLibPQ
import Foundation

/// The stores' SQL on PostgreSQL: their `?` marks (`SQLPlaceholders`) and `SQLValue`s, read back as SQLite would
/// answer them, so one store runs on either database.
///
/// Values: `.integer` goes as int8, `.real` as float8, `.text` untyped (the server reads it as the column or cast
/// needs it: a `data jsonb` column takes JSON text). Read back: int2/int4/int8 → `.integer`, float4/float8/numeric →
/// `.real`, bool → `.integer` 1 or 0 (SQLite has no Booleans), anything else (text, jsonb, ...) → `.text`.
///
/// `cacheable` SQL runs as a prepared statement kept by the connection (`query`); other SQL runs as the unnamed
/// statement, never filling the prepared-statement cache.
extension PostgresConnection: SQLQuerying {
    func fetchRows(_ sql: String, _ arguments: [SQLValue], cacheable: Bool) throws -> [[SQLValue]] {
        let result = try Self.answeringClientErrors { try runCollected(sql, arguments, cacheable: cacheable) }
        guard result.count > 0 else { return [] }
        let types = (0..<Int32(result.columns.count)).map(result.type(of:))
        return (0..<result.count).map { row in
            types.indices.map { column in
                Self.sqlValue(result.text(row, Int32(column)), type: types[column])
            }
        }
    }

    /// Each row in turn, in libpq's single-row mode (https://www.postgresql.org/docs/current/libpq-single-row-mode.html):
    /// the server streams the rows and libpq hands over one PGresult per row, freed before the next is read, so
    /// memory stays at one row (plus the socket's buffer) however many rows the statement returns.
    ///
    /// When `body` throws, the rest of the rows are read and dropped (the connection must reach the end of the
    /// statement before its next one). Outside a transaction block the statement is cancelled first, so a long
    /// scan stops at once; inside one it is not, since a cancel aborts the whole transaction.
    func forEachRow(_ sql: String, _ arguments: [SQLValue], cacheable: Bool, _ body: ([SQLValue]) throws -> Void) throws {
        let text = SQLPlaceholders.postgres(sql), values = try arguments.map(PostgresValue.init)
        var delivered = false
        do {
            try Self.answeringClientErrors { try streamRows(text, values, cacheable: cacheable) { row in
                delivered = true
                try body(row)
            } }
        } catch let error as PostgresError where cacheable && !delivered && isIdle && error.isStalePreparedStatement {
            // As `query` does: the session lost its prepared statements (DISCARD ALL), or a table changed shape
            // under one ("cached plan must not change result type"). Prepared again, once.
            forgetPreparedStatements()
            try streamRows(text, values, cacheable: cacheable, body)
        }
    }

    private func streamRows(_ text: String, _ values: [PostgresValue], cacheable: Bool, _ body: ([SQLValue]) throws -> Void) throws {
        let outsideTransaction = isIdle
        try send(text, values, cacheable: cacheable)
        if PQsetSingleRowMode(handle) != 1 {
            // Only fails when no query is pending: the send did not go through.
            throw drainResults(firstError: lostOrFailed(message: "single-row mode was refused"))
        }
        var failure: Error?
        var types: [UInt32] = []
        while let result = PQgetResult(handle) {
            switch PQresultStatus(result) {
            case PGRES_SINGLE_TUPLE:
                if failure == nil {
                    if types.isEmpty { types = (0..<PQnfields(result)).map { PQftype(result, $0) } }
                    let row = types.indices.map { column in
                        Self.sqlValue(PQgetisnull(result, 0, Int32(column)) == 1 ? nil : String(cString: PQgetvalue(result, 0, Int32(column))),
                                      type: types[column])
                    }
                    PQclear(result)
                    do {
                        try body(row)
                    } catch {
                        failure = error
                        if outsideTransaction { cancelRunningStatement() }
                    }
                } else {
                    PQclear(result)
                }
            case PGRES_TUPLES_OK, PGRES_COMMAND_OK, PGRES_EMPTY_QUERY:
                noteChanges(PostgresResult(taking: result))
            default:
                do { _ = try check(result) } catch { failure = failure ?? error }
            }
        }
        if let failure { throw failure }
    }

    /// Runs one statement that returns no rows (or whose rows are not needed), with `?` marks.
    func execute(_ sql: String, _ arguments: [SQLValue], cacheable: Bool = true) throws {
        _ = try Self.answeringClientErrors { try runCollected(sql, arguments, cacheable: cacheable) }
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE run through these methods (other statements leave it as it
    /// is, as `sqlite3_changes` does).
    var changes: Int { lastChangedRows }

    /// The value as SQLite would return it (see the type comment).
    static func sqlValue(_ text: String?, type: UInt32) -> SQLValue {
        guard let text else { return .null }
        typealias OID = PostgresValue.TypeOID
        switch type {
        case OID.int2, OID.int4, OID.int8, OID.oid: return Int64(text).map(SQLValue.integer) ?? .text(text)
        case OID.float4, OID.float8, OID.numeric:
            switch text {
            case "Infinity": return .real(.infinity)
            case "-Infinity": return .real(-.infinity)
            case "NaN": return .real(.nan)
            default: return Double(text).map(SQLValue.real) ?? .text(text)
            }
        case OID.bool: return .integer(text == "t" ? 1 : 0)
        default: return .text(text)
        }
    }

    private func runCollected(_ sql: String, _ arguments: [SQLValue], cacheable: Bool) throws -> PostgresResult {
        let text = SQLPlaceholders.postgres(sql)
        let values = try arguments.map(PostgresValue.init)
        let result: PostgresResult
        if cacheable {
            result = try query(text, values)
        } else {
            readUnreadCommit()
            result = try withParameters(values) { count, pointers, lengths, formats in
                let types = values.map(\.parameterType)
                guard statementsToSend.isEmpty else {
                    return try pipelined { queue(PQsendQueryParams(handle, text, count, types, pointers, lengths, formats, 0), &$0) }
                }
                return try check(PQexecParams(handle, text, count, types, pointers, lengths, formats, 0))
            }
        }
        noteChanges(result)
        return result
    }

    /// Sends the statement without waiting for its rows (for single-row mode).
    private func send(_ text: String, _ values: [PostgresValue], cacheable: Bool) throws {
        readUnreadCommit()
        try sendWaitingStatements()  // Single-row mode is set per statement, outside a pipeline.
        let types = values.map(\.parameterType)
        let name = cacheable ? try statementName(for: types.map(String.init).joined(separator: ",") + ";" + text, sql: text, types: types) : nil
        let sent = withParameters(values) { count, pointers, lengths, formats in
            if let name { return PQsendQueryPrepared(handle, name, count, pointers, lengths, formats, 0) }
            return PQsendQueryParams(handle, text, count, types, pointers, lengths, formats, 0)
        }
        guard sent == 1 else { throw lostOrFailed(message: String(cString: PQerrorMessage(handle))) }
    }

    /// Reads every result left of a statement, so the connection is ready for the next; returns the error to throw.
    private func drainResults(firstError: Error) -> Error {
        while let result = PQgetResult(handle) { PQclear(result) }
        return firstError
    }

    /// Asks the server to stop the statement running on this connection (PQcancel, on a connection of its own);
    /// its rows stop coming and it ends with 57014, which the caller's error replaces.
    private func cancelRunningStatement() {
        guard let cancel = PQgetCancel(handle) else { return }
        defer { PQfreeCancel(cancel) }
        var reason = [CChar](repeating: 0, count: 256)
        _ = PQcancel(cancel, &reason, Int32(reason.count))
    }

    private func noteChanges(_ result: PostgresResult) {
        let tag = result.commandTag
        if tag.hasPrefix("INSERT ") || tag.hasPrefix("UPDATE ") || tag.hasPrefix("DELETE ") || tag.hasPrefix("MERGE ") {
            lastChangedRows = result.affectedRows
        }
    }

    /// The parameters as libpq takes them: C strings (text format, NUL-terminated) or bytes (binary), nil for NULL.
    /// Each copy lives until `body` returns; every one ends with a NUL, as libpq's text format needs.
    func withParameters<T>(_ values: [PostgresValue],
                                   _ body: (Int32, [UnsafePointer<CChar>?], [Int32], [Int32]) throws -> T) rethrows -> T {
        var lengths: [Int32] = []
        let buffers: [UnsafeMutableBufferPointer<CChar>?] = values.map { value in
            let bytes = value.parameterBytes
            lengths.append(Int32(bytes?.count ?? 0))
            guard let bytes else { return nil }
            let buffer = UnsafeMutableBufferPointer<CChar>.allocate(capacity: bytes.count + 1)
            // One copy, not a loop: a debug build copied a 256 KB file chunk byte by byte at ~100 ns each.
            bytes.withUnsafeBytes { UnsafeMutableRawBufferPointer(buffer).copyMemory(from: $0) }
            buffer[bytes.count] = 0
            return buffer
        }
        defer { buffers.forEach { $0?.deallocate() } }
        let pointers: [UnsafePointer<CChar>?] = buffers.map { $0.map { UnsafePointer($0.baseAddress!) } }
        return try body(Int32(values.count), pointers, lengths, values.map { $0.isBinaryParameter ? 1 : 0 })
    }
}

extension PostgresError {
    /// A prepared statement the connection kept is gone or no longer fits its tables.
    var isStalePreparedStatement: Bool {
        sqlState == .invalidSQLStatementName || (sqlState == .featureNotSupported && message.contains("cached plan"))
    }
}

extension PostgresValue {
    /// A store's value as a parameter.
    /// - Throws: `.badValue` for text holding a NUL character: parameters travel as C strings (it would cut the text
    ///   short, silently), and PostgreSQL's text cannot hold one either (SQLite's can).
    init(_ value: SQLValue) throws {
        switch value {
        case .null: self = .null
        case .integer(let number): self = .int(number)
        case .real(let number): self = .double(number)
        case .text(let text):
            guard !text.utf8.contains(0) else {
                throw PostgresError(.badValue, sqlState: .untranslatableCharacter, message: "a text value holds a NUL character, which PostgreSQL cannot store", endpoint: "")
            }
            self = .text(text)
        }
    }
}
