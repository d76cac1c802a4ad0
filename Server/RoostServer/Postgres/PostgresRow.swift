import CLibPQ
import Foundation

/// A column of a row: by position (`0`) or name (`"n"`).
public protocol PostgresColumn {}
extension Int: PostgresColumn {}
extension String: PostgresColumn {}

/// One row of a `PostgresResult`, with typed access. Each accessor returns nil for SQL NULL and throws `.badValue`
/// when the value does not read as that type (an `int` from `'abc'`), so a wrong column is an error, not a zero.
public struct PostgresRow {
    let result: PostgresResult
    let index: Int

    private func position(_ column: PostgresColumn) throws -> Int32 {
        if let name = column as? String { return try result.column(named: name) }
        guard let number = column as? Int, number >= 0 && number < result.columns.count else {
            throw PostgresError(.badValue, message: "no column \(column) (the result has \(result.columns.count))", endpoint: "")
        }
        return Int32(number)
    }

    private func read<T>(_ column: PostgresColumn, as type: String, _ parse: (String) -> T?) throws -> T? {
        guard let text = result.text(index, try position(column)) else { return nil }
        guard let value = parse(text) else {
            throw PostgresError(.badValue, message: "column \(column) holds '\(text.prefix(40))', not \(type)", endpoint: "")
        }
        return value
    }

    public func isNull(_ column: PostgresColumn) throws -> Bool { result.isNull(index, try position(column)) }

    public func string(_ column: PostgresColumn) throws -> String? { result.text(index, try position(column)) }

    public func int(_ column: PostgresColumn) throws -> Int? { try read(column, as: "an integer") { Int($0) } }

    /// Reads float8, float4 and numeric text, `Infinity` and `NaN` included.
    public func double(_ column: PostgresColumn) throws -> Double? {
        try read(column, as: "a number") { text in
            switch text {
            case "Infinity": .infinity
            case "-Infinity": -.infinity
            case "NaN": .nan
            default: Double(text)
            }
        }
    }

    public func bool(_ column: PostgresColumn) throws -> Bool? {
        try read(column, as: "a boolean") { $0 == "t" ? true : $0 == "f" ? false : nil }
    }

    /// A bytea value, hex output (PostgreSQL's default since 9.0) or the older escape format, decoded by PQunescapeBytea: in C,
    /// so a debug build decodes a file chunk as fast as a release one (a loop in Swift took ~280 ns a byte there).
    public func bytes(_ column: PostgresColumn) throws -> [UInt8]? {
        let position = try position(column)
        guard let raw = result.bytes(index, position) else { return nil }
        var length = 0
        guard let unescaped = PQunescapeBytea(raw.baseAddress, &length) else {
            throw PostgresError(.badValue, message: "column \(column) is not bytea", endpoint: "")
        }
        defer { PQfreemem(unescaped) }
        return Array(UnsafeBufferPointer(start: unescaped, count: length))
    }

    /// The value as the column's type says: integers, floats and numeric, booleans, bytea; anything else as text.
    public func value(_ column: PostgresColumn) throws -> PostgresValue {
        let position = try position(column)
        if result.isNull(index, position) { return .null }
        typealias OID = PostgresValue.TypeOID
        switch result.type(of: position) {
        case OID.int2, OID.int4, OID.int8, OID.oid: return .int(Int64(try int(column)!))
        case OID.float4, OID.float8, OID.numeric: return .double(try double(column)!)
        case OID.bool: return .bool(try bool(column)!)
        case OID.bytea: return .bytes(try bytes(column)!)
        default: return .text(result.text(index, position)!)
        }
    }
}
