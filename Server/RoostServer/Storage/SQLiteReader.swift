import CSQLite

/// A read-only SQLite connection used by one thread at a time, with its own statement cache.
///
/// GRDB's `DatabasePool.read` costs a dispatch-queue hop, a reader-pool barrier and read-only
/// pragmas per call; measured on get-by-id that overhead was larger than the query itself, so
/// the hot read path uses one of these per HTTP worker thread (see `ReaderPool`). Writes still go
/// through GRDB's single writer. Not `Sendable`: never share one between threads.
final class SQLiteReader {
    private let handle: OpaquePointer
    private var statements: [String: OpaquePointer] = [:]
    /// Client-shaped SQL varies; past this many cached statements the cache starts over.
    private static let statementCacheLimit = 256

    /// Opens `path` read-only. See https://sqlite.org/c3ref/open.html
    init(path: String) throws {
        var connection: OpaquePointer?
        let status = sqlite3_open_v2(path, &connection, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nil)
        guard status == SQLITE_OK, let connection else {
            let message = connection.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(connection)
            throw SQLiteReaderError.sqlite(status, message)
        }
        handle = connection
        sqlite3_busy_timeout(handle, 10_000)
        try execute("PRAGMA cache_size = -4000")
    }

    deinit {
        for statement in statements.values { sqlite3_finalize(statement) }
        sqlite3_close_v2(handle)
    }

    /// Runs `body` in one read transaction, so every statement sees the same snapshot.
    func inTransaction<T>(_ body: () throws -> T) throws -> T {
        _ = try fetchRows("BEGIN", [], cacheable: true)
        defer { _ = try? fetchRows("COMMIT", [], cacheable: true) }
        return try body()
    }

    private func execute(_ sql: String) throws {
        let status = sqlite3_exec(handle, sql, nil, nil, nil)
        guard status == SQLITE_OK else { throw error(status) }
    }

    private func statement(for sql: String) throws -> OpaquePointer {
        if let cached = statements[sql] { return cached }
        if statements.count >= SQLiteReader.statementCacheLimit {
            for statement in statements.values { sqlite3_finalize(statement) }
            statements.removeAll()
        }
        var statement: OpaquePointer?
        let status = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard status == SQLITE_OK, let statement else { throw error(status) }
        statements[sql] = statement
        return statement
    }

    private func error(_ status: Int32) -> SQLiteReaderError {
        .sqlite(status, String(cString: sqlite3_errmsg(handle)))
    }
}

extension SQLiteReader: SQLQuerying {
    func fetchRows(_ sql: String, _ arguments: [SQLValue], cacheable: Bool) throws -> [[SQLValue]] {
        let statement = try statement(for: sql)
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
        var rows: [[SQLValue]] = []
        let columnCount = sqlite3_column_count(statement)
        while true {
            let status = sqlite3_step(statement)
            if status == SQLITE_DONE { return rows }
            guard status == SQLITE_ROW else { throw error(status) }
            var row: [SQLValue] = []
            row.reserveCapacity(Int(columnCount))
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
            rows.append(row)
        }
    }
}

/// An SQLite failure on a read connection (the message is SQLite's own; it never holds bound values).
enum SQLiteReaderError: Error, CustomStringConvertible {
    case sqlite(Int32, String)

    var description: String {
        switch self {
        case .sqlite(let code, let message): "SQLite error \(code): \(message)"
        }
    }
}
