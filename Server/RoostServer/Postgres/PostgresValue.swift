import Foundation

/// A statement parameter or a result value.
///
/// Parameters go in text format (bytes in binary), typed as `int8`, `float8`, `boolean` and `bytea`; `.text` goes
/// untyped, so the server reads it as whatever the statement needs there (`$1::jsonb`, a `timestamptz` column, ...).
public enum PostgresValue: Sendable, Equatable, CustomStringConvertible {
    case null
    case text(String)
    case int(Int64)
    case double(Double)
    case bool(Bool)
    case bytes([UInt8])

    /// Type OIDs from `pg_type` (src/include/catalog/pg_type.dat), fixed across PostgreSQL versions.
    enum TypeOID {
        static let bool: UInt32 = 16, bytea: UInt32 = 17, int8: UInt32 = 20, int2: UInt32 = 21, int4: UInt32 = 23
        static let oid: UInt32 = 26, float4: UInt32 = 700, float8: UInt32 = 701, numeric: UInt32 = 1700
        static let unknown: UInt32 = 0
    }

    /// The OID the parameter is declared with (0: let the server infer it).
    var parameterType: UInt32 {
        switch self {
        case .null, .text: TypeOID.unknown
        case .int: TypeOID.int8
        case .double: TypeOID.float8
        case .bool: TypeOID.bool
        case .bytes: TypeOID.bytea
        }
    }

    /// The parameter's bytes, nil for SQL NULL (text format, except `.bytes`, sent as they are in binary format).
    var parameterBytes: [UInt8]? {
        switch self {
        case .null: nil
        case .text(let text): Array(text.utf8)
        case .int(let number): Array(String(number).utf8)
        case .double(let number):
            // Swift prints the shortest text that reads back to the same double; PostgreSQL spells the specials.
            Array((number.isNaN ? "NaN" : number.isInfinite ? (number < 0 ? "-Infinity" : "Infinity") : "\(number)").utf8)
        case .bool(let flag): flag ? [UInt8(ascii: "t")] : [UInt8(ascii: "f")]
        case .bytes(let bytes): bytes
        }
    }

    var isBinaryParameter: Bool { if case .bytes = self { true } else { false } }

    public var description: String {
        switch self {
        case .null: "NULL"
        case .text(let text): "'\(text)'"
        case .int(let number): String(number)
        case .double(let number): String(number)
        case .bool(let flag): String(flag)
        case .bytes(let bytes): "<\(bytes.count) bytes>"
        }
    }
}

extension PostgresValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByNilLiteral
{
    public init(stringLiteral value: String) { self = .text(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(nilLiteral: ()) { self = .null }
}
