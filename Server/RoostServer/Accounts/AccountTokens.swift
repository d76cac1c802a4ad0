import RoostCore

/// The tokens of emailed links (email verification, password reset), in `_account_token`: random,
/// kept only as their SHA-256, used once, expiring. Parse keeps them in plain text on the user
/// (`_email_verify_token`, `_perishable_token`); a copy of the database here opens no account.
enum AccountTokens {
    enum Purpose: String {
        case verifyEmail = "verify"
        case resetPassword = "reset"
    }

    /// A new token for the user, replacing any earlier one of the same purpose (only the latest link
    /// works, as Parse keeps one token per user). Returned once, for the mail; never stored as is.
    /// - Parameter lifetimeSeconds: nil for a token that lasts until used or replaced.
    static func issue(_ purpose: Purpose, for userId: String, lifetimeSeconds: Int?, in db: any SQLConnection) throws -> String {
        let token = try SecureRandom.alphanumeric(32)
        try revoke(purpose, of: userId, in: db)
        let now = ParseDate.now().millisecondsSince1970
        let expiresAt: SQLValue = lifetimeSeconds.map { .integer(now + Int64($0) * 1000) } ?? .null
        try db.execute("INSERT INTO _account_token (tokenHash, userId, purpose, expiresAt, issuedAt) VALUES (?, ?, ?, ?, ?)",
                       [.text(SHA256.hex(Array(token.utf8))), .text(userId), .text(purpose.rawValue), expiresAt, .integer(now)])
        return token
    }

    /// Whether the user has a good (unused, unexpired) token of `purpose` issued in the last `seconds`.
    static func issuedRecently(_ purpose: Purpose, of userId: String, withinSeconds seconds: Int, in db: any SQLConnection) throws -> Bool {
        let now = ParseDate.now().millisecondsSince1970
        return try !db.fetchRows("""
            SELECT 1 FROM _account_token
            WHERE userId = ? AND purpose = ? AND issuedAt > ? AND (expiresAt IS NULL OR expiresAt >= ?)
            """, [.text(userId), .text(purpose.rawValue), .integer(now - Int64(seconds) * 1000), .integer(now)], cacheable: true).isEmpty
    }

    enum Lookup: Equatable {
        case valid(userId: String)
        case expired(userId: String)
        case unknown
    }

    /// The user a token belongs to, if it is of this purpose and that user's name is `username` (Parse's
    /// links carry both, and its lookup needs both to match).
    /// - Parameter expiring: a token issued without an expiry counts as expired (a verification link mailed before
    ///   `--email-verify-token-validity` was set: Parse's query asks for an expiry in the future).
    static func find(_ token: String, _ purpose: Purpose, username: String, expiring: Bool = false,
                     in db: some SQLQuerying) throws -> Lookup {
        guard let row = try db.fetchRows("SELECT userId, expiresAt FROM _account_token WHERE tokenHash = ? AND purpose = ?",
                                         [.text(SHA256.hex(Array(token.utf8))), .text(purpose.rawValue)], cacheable: true).first,
            let userId = row[0].text, try UserStore.fetch(userId, in: db)?.fields["username"]?.stringValue == username
        else { return .unknown }
        if let expiresAt = row[1].integer, expiresAt < ParseDate.now().millisecondsSince1970 { return .expired(userId: userId) }
        if expiring, row[1].integer == nil { return .expired(userId: userId) }
        return .valid(userId: userId)
    }

    /// Ends the user's tokens of `purpose` (used, replaced, or made stale by a new password or email).
    static func revoke(_ purpose: Purpose, of userId: String, in db: any SQLConnection) throws {
        try db.execute("DELETE FROM _account_token WHERE userId = ? AND purpose = ?", [.text(userId), .text(purpose.rawValue)])
    }

    /// Ends every token of the user (a deleted user).
    static func revokeAll(of userId: String, in db: any SQLConnection) throws {
        try db.execute("DELETE FROM _account_token WHERE userId = ?", [.text(userId)])
    }
}
