import RoostCore

/// `X-Parse-Request-Id`: a write is applied at most once per request id.
///
/// The id and the reply are stored in the same transaction as the write, so a recorded id means
/// the write committed. A repeat of the same request (method, path, body and caller) gets the original
/// reply replayed (Parse Server answers 159 instead, which leaves clients guessing); a different
/// request under a used id gets Parse's 159 `Duplicate request` and changes nothing. A failed request
/// records nothing and can be retried. Records live for `--idempotency-ttl`, pruned in the background.
///
/// Secrets never rest in a record: a request that carries a password, or whose reply starts a
/// session, is recorded without its reply and its repeats get 159, as Parse answers every repeat.
/// So only a digest of requests with no secret in them is stored, and no session token at all.
enum Idempotency {
    /// Writes of classes, users, roles, installations and batches are deduplicated.
    static func applies(method: String, segments: [String]) -> Bool {
        guard method == "POST" || method == "PUT" || method == "DELETE", let first = segments.first else { return false }
        return ["classes", "users", "roles", "installations", "batch"].contains(first)
    }

    /// Calls of Cloud functions and jobs (webhooks) are deduplicated too, by `runClaimed`: a webhook runs outside
    /// any write, so its record cannot commit with it.
    static func appliesOutsideWrite(method: String, segments: [String]) -> Bool {
        method == "POST" && segments.count == 2 && ["functions", "jobs"].contains(segments[0])
    }

    /// Runs `handle` unless `requestId` already has a record, which answers instead.
    static func run(_ requestId: String, request: APIRequest, context: RequestContext,
                    handle: (RequestContext) throws -> APIResponse) throws -> APIResponse {
        let fingerprint = try Fingerprint(checking: requestId, request, context: context)
        if let recorded = try recordedAnswer(requestId, fingerprint, context) { return recorded }
        do {
            // `after` webhooks wait for the commit (a batch's, when inside one).
            func attempt(_ db: any SQLConnection) throws -> APIResponse {
                // The handler's writes and this record commit together.
                let response = try handle(context.joining(db))
                try Record(fingerprint, response).insert(requestId, ttl: context.config.idempotencyTTLSeconds, in: db)
                return response
            }
            // Inside a batch's transaction, a savepoint keeps a refused attempt from leaving half its writes.
            let response = try context.transaction.map { transaction in try transaction.inSavepoint { try attempt(transaction) } }
                ?? context.storage.write(attempt)
            // Committed now, unless a batch's transaction holds it: then the batch answers it.
            return context.transaction == nil ? try response.committed() : response
        } catch let error as any DatabaseError where error.isPrimaryKeyViolation {
            // A twin of this request committed first (its write is the one kept): answer as it would a repeat.
            if let recorded = try recordedAnswer(requestId, fingerprint, context) { return recorded }
            throw error
        }
    }

    /// `run` for a request whose work is not a write of this server (a function's or a job's webhook): the id is
    /// claimed first, in a record of its own with no reply, so a twin arriving meanwhile gets 159 (Parse's answer
    /// to every repeat); the reply is recorded once `handle` returns, for repeats to get it as `run`'s do. A failed
    /// call gives the id back, to be retried. A server stopped between the two keeps the claim: its repeats get 159
    /// until the record expires, and the webhook is not called twice.
    static func runClaimed(_ requestId: String, request: APIRequest, context: RequestContext,
                           handle: (RequestContext) throws -> APIResponse) throws -> APIResponse {
        let fingerprint = try Fingerprint(checking: requestId, request, context: context)
        if let recorded = try recordedAnswer(requestId, fingerprint, context) { return recorded }
        let ttl = context.config.idempotencyTTLSeconds
        do {
            try context.storage.write { db in try Record.claim(fingerprint).insert(requestId, ttl: ttl, in: db) }
        } catch let error as any DatabaseError where error.isPrimaryKeyViolation {
            if let recorded = try recordedAnswer(requestId, fingerprint, context) { return recorded }
            throw error
        }
        let response: APIResponse
        do {
            response = try handle(context)
        } catch {
            try? context.storage.write { db in try db.execute("DELETE FROM _idempotency WHERE requestId = ?", [.text(requestId)]) }
            throw error
        }
        // Not recorded (the write failed): repeats keep getting 159, and the function is not run again.
        try? context.storage.write { db in try Record(fingerprint, response).replace(requestId, in: db) }
        return response
    }

    /// What the record of `requestId` answers this request, if there is one (a replay, or 159).
    private static func recordedAnswer(_ requestId: String, _ fingerprint: Fingerprint, _ context: RequestContext) throws -> APIResponse? {
        try context.read { db in try Record.find(requestId, in: db) }.map { try $0.answer(fingerprint) }
    }

    /// Forgets expired records.
    static func prune(in db: any SQLConnection) throws {
        try db.execute("DELETE FROM _idempotency WHERE expiresAt <= ?", [.integer(ParseDate.now().millisecondsSince1970)])
    }

    static let duplicate = ParseError(.duplicateRequest, "Duplicate request")

    /// What binds a reply to the request that made it: SHA-256 of the method, the path (the same whether the
    /// request came alone or as a batch item), the caller and the body in canonical form (keys sorted, so a
    /// client re-encoding its body after a restart still matches). `nil` when the request carries a password.
    struct Fingerprint {
        let digest: String?

        /// - Throws: `ParseError` 107 for a request id that is empty or over 256 bytes.
        init(checking requestId: String, _ request: APIRequest, context: RequestContext) throws {
            guard !requestId.isEmpty, requestId.utf8.count <= 256 else {
                throw ParseError(.invalidJSON, "X-Parse-Request-Id must be 1 to 256 bytes")
            }
            self.init(request, context: context)
        }

        init(_ request: APIRequest, context: RequestContext) {
            guard !(request.body.map(Self.carriesPassword) ?? false) else {
                digest = nil
                return
            }
            // The user, not the session: a retry after a sign-up converted the anonymous user (a new token) still matches.
            let caller = context.isMaster ? "master" : context.user.map { "user:" + $0.id } ?? "public"
            var material = Array("roost-request-v1\n\(request.method)\n\(request.segments.joined(separator: "/"))\n\(caller)\n".utf8)
            request.body?.write(to: &material)
            digest = SHA256.hex(material)
        }

        private static func carriesPassword(_ value: JSON) -> Bool {
            switch value {
            case .object(let members): members["password"] != nil || members.values.contains(where: carriesPassword)
            case .array(let elements): elements.contains(where: carriesPassword)
            default: false
            }
        }
    }

    /// One row of `_idempotency`. `fingerprint` NULL: recorded before requests were bound (replayed to any
    /// repeat until it expires); `body` NULL: withheld (every repeat gets 159).
    private struct Record {
        let fingerprint: String?
        let status: Int
        let body: String?
        let location: String?

        init(_ fingerprint: Fingerprint, _ response: APIResponse) {
            let text = response.body.jsonText
            let replayable = fingerprint.digest != nil && !text.contains("\"sessionToken\"")
            self.fingerprint = replayable ? fingerprint.digest : ""
            status = response.status
            body = replayable ? text : nil
            location = replayable ? response.headers.first { $0.0 == "Location" }?.1 : nil
        }

        private init(fingerprint: String?, status: Int, body: String?, location: String?) {
            self.fingerprint = fingerprint
            self.status = status
            self.body = body
            self.location = location
        }

        /// A claim of a request id before its work is done: no reply, so every repeat meanwhile gets 159.
        static func claim(_ fingerprint: Fingerprint) -> Record {
            Record(fingerprint: fingerprint.digest ?? "", status: 0, body: nil, location: nil)
        }

        private init(row: [SQLValue]) {
            fingerprint = row[0].text
            status = Int(row[1].integer ?? 200)
            body = row[2].text
            location = row[3].text
        }

        func answer(_ request: Fingerprint) throws -> APIResponse {
            guard let body, fingerprint == nil || (request.digest != nil && fingerprint == request.digest) else {
                throw Idempotency.duplicate
            }
            return APIResponse(status: status, body: .encodedFragment(Array(body.utf8)),
                               headers: location.map { [("Location", $0)] } ?? [])
        }

        static func find(_ requestId: String, in db: some SQLQuerying) throws -> Record? {
            try db.fetchRows("SELECT fingerprint, status, body, location FROM _idempotency WHERE requestId = ? AND expiresAt > ?",
                             [.text(requestId), .integer(ParseDate.now().millisecondsSince1970)], cacheable: true)
                .first.map(Record.init(row:))
        }

        /// Puts the reply into the claim of `requestId` (`claim`), keeping its expiry.
        func replace(_ requestId: String, in db: any SQLConnection) throws {
            try db.execute("UPDATE _idempotency SET fingerprint = ?, status = ?, body = ?, location = ? WHERE requestId = ?",
                           [fingerprint.map(SQLValue.text) ?? .null, .integer(Int64(status)), body.map(SQLValue.text) ?? .null,
                            location.map(SQLValue.text) ?? .null, .text(requestId)])
        }

        func insert(_ requestId: String, ttl: Int, in db: any SQLConnection) throws {
            let now = ParseDate.now().millisecondsSince1970
            // An expired record not yet pruned gives its id back.
            try db.execute("DELETE FROM _idempotency WHERE requestId = ? AND expiresAt <= ?", [.text(requestId), .integer(now)])
            let expiresAt = now + Int64(ttl) * 1000
            try db.execute(
                "INSERT INTO _idempotency (requestId, fingerprint, status, body, location, expiresAt) VALUES (?, ?, ?, ?, ?, ?)",
                [.text(requestId), fingerprint.map(SQLValue.text) ?? .null, .integer(Int64(status)),
                 body.map(SQLValue.text) ?? .null, location.map(SQLValue.text) ?? .null, .integer(expiresAt)])
        }
    }
}
