import CLibPQ
import Foundation

/// The rows of one statement, read in text format. Owns its `PGresult` (PQclear in deinit); not Sendable: read it
/// on the thread that ran the statement, or copy the values out.
public final class PostgresResult {
    private let handle: OpaquePointer
    /// Rows returned (0 for statements without rows).
    public let count: Int
    /// Column names, in order.
    public let columns: [String]
    /// Rows the statement changed, inserted or returned (`PQcmdTuples`; 0 when it does not say).
    public let affectedRows: Int
    /// The command tag (`PQcmdStatus`): `INSERT 0 1`, `UPDATE 3`, `SELECT 2`, `BEGIN`.
    public let commandTag: String

    /// Takes ownership of a result whose status is already checked.
    init(taking handle: OpaquePointer) {
        self.handle = handle
        count = Int(PQntuples(handle))
        columns = (0..<PQnfields(handle)).map { String(cString: PQfname(handle, $0)) }
        affectedRows = Int(String(cString: PQcmdTuples(handle))) ?? 0
        commandTag = String(cString: PQcmdStatus(handle))
    }

    deinit { PQclear(handle) }

    /// The rows, for iteration: `for row in result.rows { try row.int("n") }`.
    public var rows: [PostgresRow] { (0..<count).map { PostgresRow(result: self, index: $0) } }

    public subscript(row: Int) -> PostgresRow {
        precondition(row >= 0 && row < count, "row \(row) out of 0..<\(count)")
        return PostgresRow(result: self, index: row)
    }

    func column(named name: String) throws -> Int32 {
        let index = PQfnumber(handle, "\"\(name.replacingOccurrences(of: "\"", with: "\"\""))\"")
        guard index >= 0 else {
            throw PostgresError(.badValue, message: "no column \(name) in the result (\(columns.joined(separator: ", ")))",
                                endpoint: "")
        }
        return index
    }

    func isNull(_ row: Int, _ column: Int32) -> Bool { PQgetisnull(handle, Int32(row), column) == 1 }

    func type(of column: Int32) -> UInt32 { PQftype(handle, column) }

    func text(_ row: Int, _ column: Int32) -> String? {
        isNull(row, column) ? nil : String(cString: PQgetvalue(handle, Int32(row), column))
    }

    /// The raw bytes of a value (text format: bytea arrives as `\x` and hex digits).
    func bytes(_ row: Int, _ column: Int32) -> UnsafeBufferPointer<UInt8>? {
        guard !isNull(row, column), let value = PQgetvalue(handle, Int32(row), column) else { return nil }
        let length = Int(PQgetlength(handle, Int32(row), column))
        return UnsafeBufferPointer(start: UnsafeRawPointer(value).assumingMemoryBound(to: UInt8.self), count: length)
    }
}
