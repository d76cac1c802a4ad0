import Foundation

/// A PostgreSQL error class and condition: the five-character SQLSTATE the server sends with every error
/// (https://www.postgresql.org/docs/current/errcodes-appendix.html). Catch by value:
///
///     catch let error as PostgresError where error.sqlState == .uniqueViolation { ... }
public struct SQLState: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let uniqueViolation = SQLState(rawValue: "23505")
    public static let foreignKeyViolation = SQLState(rawValue: "23503")
    public static let notNullViolation = SQLState(rawValue: "23502")
    public static let checkViolation = SQLState(rawValue: "23514")
    public static let serializationFailure = SQLState(rawValue: "40001")
    public static let deadlockDetected = SQLState(rawValue: "40P01")
    public static let undefinedTable = SQLState(rawValue: "42P01")
    public static let undefinedColumn = SQLState(rawValue: "42703")
    public static let duplicateTable = SQLState(rawValue: "42P07")
    public static let duplicateColumn = SQLState(rawValue: "42701")
    public static let syntaxError = SQLState(rawValue: "42601")
    public static let invalidTextRepresentation = SQLState(rawValue: "22P02")
    public static let invalidRegularExpression = SQLState(rawValue: "2201B")
    /// `\u0000` in JSON text cast to jsonb, which cannot hold it.
    public static let untranslatableCharacter = SQLState(rawValue: "22P05")
    public static let queryCanceled = SQLState(rawValue: "57014")
    public static let adminShutdown = SQLState(rawValue: "57P01")
    public static let invalidPassword = SQLState(rawValue: "28P01")
    public static let invalidSQLStatementName = SQLState(rawValue: "26000")
    public static let inFailedTransaction = SQLState(rawValue: "25P02")
    public static let featureNotSupported = SQLState(rawValue: "0A000")

    /// The class: the first two characters ("23" integrity constraint violation, "40" transaction rollback, ...).
    public var errorClass: String { String(rawValue.prefix(2)) }
    /// A transaction that failed this way may succeed when run again from the start.
    public var isRetryable: Bool { self == .serializationFailure || self == .deadlockDetected }
    public var description: String { rawValue }
}

/// An error of the PostgreSQL client layer. It names the server (`user@host:port/database`, or the socket
/// directory) but never the password: messages and descriptions may be logged.
public struct PostgresError: Error, CustomStringConvertible, Sendable {
    public enum Kind: Sendable, Equatable {
        /// The URL could not be read (no password is quoted back).
        case badURL
        /// Connecting or authenticating failed.
        case connectionFailed
        /// The connection broke (the server went away, the backend was terminated).
        case connectionLost
        /// The server refused a statement; `sqlState` says why.
        case server
        /// A result value is not of the type asked for.
        case badValue
        /// No pooled connection came free in time, or no notification came.
        case timeout
        /// A misuse the layer detects (a transaction inside a transaction).
        case misuse
    }

    public let kind: Kind
    /// The server's SQLSTATE, for `.server` errors (and for a connection the server ended, such as 57P01).
    public let sqlState: SQLState?
    /// The primary message (the server's, or libpq's).
    public let message: String
    /// The server's DETAIL line, if any (for 23505: which key was duplicated).
    public let detail: String?
    /// The constraint a 23xxx error names (`_session_pkey`, `c3_objectid_key`), as the server reports it.
    public let constraint: String?
    /// Which server, redacted: `roost@127.0.0.1:5432/roost`.
    public let endpoint: String

    public init(_ kind: Kind, sqlState: SQLState? = nil, message: String, detail: String? = nil, constraint: String? = nil,
                endpoint: String) {
        self.kind = kind
        self.sqlState = sqlState
        self.message = message.trimmingCharacters(in: .whitespacesAndNewlines)
        self.detail = detail
        self.constraint = constraint
        self.endpoint = endpoint
    }

    public var description: String {
        var text = endpoint.isEmpty ? "PostgreSQL: " : "PostgreSQL \(endpoint): "
        if let sqlState { text += "[\(sqlState)] " }
        text += message
        if let detail { text += " (\(detail))" }
        return text
    }
}
