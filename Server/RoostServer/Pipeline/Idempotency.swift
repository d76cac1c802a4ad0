import RoostCore

/// `X-Parse-Request-Id`: a write is applied at most once per request id.
///
/// The id and the reply are stored in the same transaction as the write, so a recorded id means
/// the write committed; a repeat gets the original reply replayed (Parse Server answers 159
/// instead, which leaves clients guessing). A failed request records nothing and can be retried.
/// Records live for `--idempotency-ttl` and are pruned in the background.
enum Idempotency {
    /// Writes of classes, users, roles and batches are deduplicated.
    static func applies(method: String, segments: [String]) -> Bool {
        guard method == "POST" || method == "PUT" || method == "DELETE", let first = segments.first else { return false }
        return ["classes", "users", "roles", "batch"].contains(first)
    }

    /// Runs `handle` unless `requestId` already has a recorded reply, which is replayed instead.
    static func run(_ requestId: String, context: RequestContext,
                    handle: (RequestContext) throws -> APIResponse) throws -> APIResponse {
        guard !requestId.isEmpty, requestId.utf8.count <= 256 else {
            throw ParseError(.invalidJSON, "X-Parse-Request-Id must be 1 to 256 bytes")
        }
        if let recorded = try context.read({ db in try replay(requestId, in: db) }) { return recorded }
        do {
            // `after` webhooks wait for the commit (a batch's, when inside one).
            return try context.notifyingAfterCommit { afterCommit in
                func attempt(_ db: SQLiteConnection) throws -> APIResponse {
                    // The handler's writes and this record commit together.
                    let response = try handle(context.joining(db, afterCommit: afterCommit))
                    try record(requestId, response, ttl: context.config.idempotencyTTLSeconds, in: db)
                    return response
                }
                // Inside a batch's transaction, a savepoint keeps a refused attempt from leaving half its writes.
                if let transaction = context.transaction { return try transaction.inSavepoint { try attempt(transaction) } }
                return try context.storage.write(attempt)
            }
        } catch let error as SQLiteError where error.isPrimaryKeyViolation {
            // A twin of this request committed first (its write is the one kept): answer as it did.
            if let recorded = try context.read({ db in try replay(requestId, in: db) }) { return recorded }
            throw error
        }
    }

    private static func replay(_ requestId: String, in db: some SQLQuerying) throws -> APIResponse? {
        let rows = try db.fetchRows("SELECT status, body, location FROM _idempotency WHERE requestId = ? AND expiresAt > ?",
                                    [.text(requestId), .integer(ParseDate.now().millisecondsSince1970)], cacheable: true)
        guard let row = rows.first else { return nil }
        let headers = row[2].text.map { [("Location", $0)] } ?? []
        return APIResponse(status: Int(row[0].integer ?? 200), body: .encodedFragment(Array((row[1].text ?? "{}").utf8)),
                           headers: headers)
    }

    private static func record(_ requestId: String, _ response: APIResponse, ttl: Int, in db: SQLiteConnection) throws {
        let expiresAt = ParseDate.now().millisecondsSince1970 + Int64(ttl) * 1000
        let location = response.headers.first { $0.0 == "Location" }?.1
        try db.execute(
            "INSERT INTO _idempotency (requestId, status, body, location, expiresAt) VALUES (?, ?, ?, ?, ?)",
            [.text(requestId), .integer(Int64(response.status)), .text(response.body.jsonText),
             location.map(SQLValue.text) ?? .null, .integer(expiresAt)])
    }

    /// Forgets expired records.
    static func prune(in db: SQLiteConnection) throws {
        try db.execute("DELETE FROM _idempotency WHERE expiresAt <= ?", [.integer(ParseDate.now().millisecondsSince1970)])
    }
}
