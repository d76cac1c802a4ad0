import Logging
import RoostCore

/// Who is calling and with what: built once per request by the pipeline, handed to every handler.
struct RequestContext {
    let config: ServerConfig
    let storage: Storage
    let isMaster: Bool
    /// The master key given was `--read-only-master-key`: reads as the master key, writes refused (119).
    var isReadOnly = false
    /// The maintenance key was given (`ServerConfig.maintenanceKey`): `isMaster` for objects, but not for the master
    /// key's routes (`requireMaster`); a create may give its own `createdAt` and `updatedAt`.
    var isMaintenance = false
    /// The user of the request's valid session token, if any.
    let user: AuthenticatedUser?
    /// The session token of a request whose token is not checked before its route (GET /sessions/me).
    var uncheckedSessionToken: String? = nil
    /// `X-Parse-Installation-Id`, stored on the sessions this request creates.
    let installationId: String?
    let requestId: String
    let logger: Logger
    /// `http://<Host><mount>`, the base of `Location` headers, as Parse builds it.
    let publicURL: String
    /// Set inside a batch or an idempotent request: the write transaction its writes share.
    var transaction: (any SQLConnection)?
    /// The request's password hashes and checks, computed before the writer is taken (`PasswordPreparation`).
    let passwords: PreparedPasswords
    /// Inside a batch whose items share one write: its many items must not each hold the writer for a webhook.
    var inBatchTransaction = false
    /// Run by `WriteBatcher` in a transaction shared with other clients' requests: a `before` webhook
    /// makes the request start over on its own (`WriteBatcher.NeedsOwnWrite`).
    var inGroupedWrite = false
    /// What webhooks are told of the request, as Parse tells Cloud Code (`Webhook.caller`); kept for the requests that
    /// can call one (all but GETs, and GETs too once some class has a `beforeFind` webhook).
    var origin: RequestOrigin?

    /// This request inside a write that commits later (a batch, an idempotent request, a write
    /// group): its writes go into `db`, its `after` actions wait for that commit (`SQLConnection.afterCommit`).
    func joining(_ db: any SQLConnection) -> RequestContext {
        var joined = self
        joined.transaction = db
        return joined
    }

    /// Runs `body` in the enclosing batch transaction, or in a new write transaction.
    func write<T>(_ body: (any SQLConnection) throws -> T) throws -> T {
        if let transaction { return try body(transaction) }
        return try storage.write(body)
    }

    /// Runs `body` inside the enclosing batch transaction (to see its writes), or on a reader.
    func read<T>(_ consistency: ReadConsistency, _ body: (any SQLQuerying) throws -> T) throws -> T {
        if let transaction { return try body(transaction) }
        return try storage.read(consistency, body)
    }

    func read<T>(_ body: (any SQLQuerying) throws -> T) throws -> T { try read(.snapshot, body) }

    /// The stored form of a new password; inside the writer, only one hashed ahead (see `PreparedPasswords`).
    func hashPassword(_ password: String) throws -> String {
        try passwords.hash(password, holdingWriter: transaction != nil)
    }

    /// Whether `password` matches the stored form; inside the writer, only from a check made ahead.
    func verifyPassword(_ password: String, against stored: String) -> Bool {
        passwords.verify(password, against: stored, holdingWriter: transaction != nil)
    }

    /// The ACL subjects the caller holds, for `FindQuery.readableBy`; `nil` (everything) for the master key.
    var aclSubjects: [String]? {
        if isMaster { return nil }
        guard let user else { return ["*"] }
        return ["*", user.id] + user.roles.map { "role:" + $0 }
    }

    /// Whether `acl` (`nil` meaning public) lets the caller write.
    func canWrite(_ acl: JSON?) -> Bool {
        guard let acl, let subjects = aclSubjects else { return true }
        return !Set(ACL.subjects(of: acl, granting: "write")).isDisjoint(with: subjects)
    }

    /// - Throws: `APIError.masterKeyRequired` unless the request carries the master key (the maintenance key is not
    ///   enough, as Parse's `enforceMasterKeyAccess`).
    func requireMaster() throws {
        guard isMaster, !isMaintenance else { throw APIError.masterKeyRequired }
    }

    /// Parse's answers to the read-only master key where a master key would change something, e.g.
    /// `read-only masterKey isn't allowed to update a schema.`
    func refuseReadOnly(_ action: String) throws {
        if isReadOnly { throw ParseError(.operationForbidden, "read-only masterKey isn't allowed to \(action).") }
    }
}

/// The client's address, its headers and its Cloud Code context. A class, made only for requests that may call a
/// webhook: as three fields of `RequestContext`, which is copied often, they cost every request ~0.5k instructions
/// (callgrind: its copies and destroys); a GET now carries a nil reference.
final class RequestOrigin: Sendable {
    let clientAddress: String
    let headers: [String: String]
    let cloudContext: [String: JSON]

    init(clientAddress: String, headers: [String: String], cloudContext: [String: JSON]) {
        self.clientAddress = clientAddress
        self.headers = headers
        self.cloudContext = cloudContext
    }
}

/// The user behind a valid session token.
struct AuthenticatedUser {
    let id: String
    let sessionId: String
    /// The token as the client sent it (never stored), echoed by `/users/me` and `/sessions/me`.
    let sessionToken: String
    /// Names of the roles the user holds, directly or inherited (read once per request).
    let roles: [String]
}
