import Logging
import RoostCore

/// Who is calling and with what: built once per request by the pipeline, handed to every handler.
struct RequestContext {
    let config: ServerConfig
    let storage: Storage
    let isMaster: Bool
    let requestId: String
    let logger: Logger
    /// `http://<Host><mount>`, the base of `Location` headers, as Parse builds it.
    let publicURL: String
    /// Set inside a transactional batch: every sub-request shares this write transaction.
    var transaction: SQLiteConnection?

    /// Runs `body` in the enclosing batch transaction, or in a new write transaction.
    func write<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        if let transaction { return try body(transaction) }
        return try storage.write(body)
    }

    /// Runs `body` inside the enclosing batch transaction (to see its writes), or on a reader.
    func read<T>(_ body: (any SQLQuerying) throws -> T) throws -> T {
        if let transaction { return try body(transaction) }
        return try storage.read(body)
    }

    /// - Throws: `APIError.masterKeyRequired` unless the request carries the master key.
    func requireMaster() throws {
        guard isMaster else { throw APIError.masterKeyRequired }
    }
}
