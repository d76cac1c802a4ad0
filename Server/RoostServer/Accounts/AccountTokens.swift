import RoostCore

/// The tokens of emailed links (email verification, password reset), in `_account_token`: random,
/// kept only as their SHA-256, used once, expiring. Parse keeps them in plain text on the user
/// (`_email_verify_token`, `_perishable_token`); a copy of the database here opens no account.
///
/// A link that may be mailed again while good (`--email-verify-token-reuse-if-valid`, `--reset-token-reuse-if-valid`)
/// has a token derived from the row (purpose, user, time of issue) with a key from the master key (HMAC-SHA256), so the
/// server can make it again from what it stores, and still only its digest is stored.
enum AccountTokens {
    enum Purpose: String {
        case verifyEmail = "verify"
        case resetPassword = "reset"
    }

    /// A new token for the user, replacing any earlier one of the same purpose (only the latest link
    /// works, as Parse keeps one token per user). Returned once, for the mail; never stored as is.
    /// - Parameters:
    ///   - lifetimeSeconds: nil for a token that lasts until used or replaced.
    ///   - derivingWith: the key of a token that can be made again (`reusable`); nil for a random one.
    static func issue(_ purpose: Purpose, for userId: String, lifetimeSeconds: Int?, derivingWith key: [UInt8]? = nil,
                      in db: any SQLConnection) throws -> String {
        let now = ParseDate.now().millisecondsSince1970
        let token = try key.map { derived(purpose, of: userId, issuedAt: now, key: $0) } ?? SecureRandom.alphanumeric(32)
        try revoke(purpose, of: userId, in: db)
        let expiresAt: SQLValue = lifetimeSeconds.map { .integer(now + Int64($0) * 1000) } ?? .null
        try db.execute("INSERT INTO _account_token (tokenHash, userId, purpose, expiresAt, issuedAt) VALUES (?, ?, ?, ?, ?)",
                       [.text(SHA256.hex(Array(token.utf8))), .text(userId), .text(purpose.rawValue), expiresAt, .integer(now)])
        return token
    }

    /// The user's good token of `purpose` made again, when it expires and was derived with `key` (Parse's
    /// `*TokenReuseIfValid`: the link mailed again). Nil when there is none, or it was random or made with another key
    /// (the master key changed): a new one is issued then.
    static func reusable(_ purpose: Purpose, of userId: String, key: [UInt8], in db: any SQLConnection) throws -> String? {
        let now = ParseDate.now().millisecondsSince1970
        guard let row = try db.fetchRows("""
            SELECT tokenHash, issuedAt FROM _account_token WHERE userId = ? AND purpose = ? AND expiresAt >= ?
            """, [.text(userId), .text(purpose.rawValue), .integer(now)], cacheable: true).first,
            let hash = row[0].text, let issuedAt = row[1].integer
        else { return nil }
        let token = derived(purpose, of: userId, issuedAt: issuedAt, key: key)
        return SHA256.hex(Array(token.utf8)) == hash ? token : nil
    }

    /// The key of derived tokens, from the master key (which every node of an app shares, and which the database does not hold).
    static func derivationKey(masterKey: String) -> [UInt8] {
        HMACSHA256.digest(key: Array(masterKey.utf8), message: Array("roost account links".utf8))
    }

    /// 32 characters of `A–Z a–z 0–9` from HMAC-SHA256 of the row's identity (each byte modulo 62: about 190 bits).
    private static func derived(_ purpose: Purpose, of userId: String, issuedAt: Int64, key: [UInt8]) -> String {
        let digest = HMACSHA256.digest(key: key, message: Array("\(purpose.rawValue)\u{0}\(userId)\u{0}\(issuedAt)".utf8))
        return String(decoding: digest.map { SecureRandom.alphanumerics[Int($0 % 62)] }, as: UTF8.self)
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
