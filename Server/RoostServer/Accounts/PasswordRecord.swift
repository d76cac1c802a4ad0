import RoostCore

/// What the password policy keeps beside a user's hash in `_password`: when the password was set
/// (`maxPasswordAge`) and the hashes it replaced (`maxPasswordHistory`), as Parse's hidden
/// `_password_changed_at` and `_password_history` fields.
enum PasswordRecord {
    /// The current hash and the earlier ones the policy remembers, newest last.
    static func hashes(of userId: String, in db: some SQLQuerying) throws -> (current: String, history: [String])? {
        guard let row = try db.fetchRows("SELECT hash, history FROM _password WHERE userId = ?", [.text(userId)], cacheable: true).first,
            let current = row[0].text
        else { return nil }
        let history = (row[1].text.flatMap { try? JSONParser.parse(Array($0.utf8)) }?.arrayValue ?? []).compactMap(\.stringValue)
        return (current, history)
    }

    /// The hashes a new password must not match: the current one and the `maxPasswordHistory - 1` before it.
    static func recentHashes(of userId: String, policy: PasswordPolicy, in db: some SQLQuerying) throws -> [String] {
        guard let limit = policy.maxPasswordHistory, let (current, history) = try hashes(of: userId, in: db) else { return [] }
        return Array(history.suffix(max(0, limit - 1))) + [current]
    }

    /// Stores `hash` as the user's password, keeping the replaced one in the history and noting when,
    /// as far as the policy asks (Parse's `runDatabaseOperation` for `_User`).
    static func setPassword(_ hash: String, of userId: String, policy: PasswordPolicy, in db: any SQLConnection) throws {
        var history: [String] = []
        if let limit = policy.maxPasswordHistory, let (current, earlier) = try hashes(of: userId, in: db) {
            history = Array((earlier + [current]).suffix(max(0, limit - 1)))
        }
        let changedAt: SQLValue = policy.maxPasswordAge != nil ? .integer(ParseDate.now().millisecondsSince1970) : .null
        try db.execute("""
            INSERT INTO _password (userId, hash, history, changedAt) VALUES (?, ?, ?, ?)
            ON CONFLICT (userId) DO UPDATE SET hash = excluded.hash, history = excluded.history,
                changedAt = coalesce(excluded.changedAt, _password.changedAt)
            """, [.text(userId), .text(hash), .text(JSON.array(history.map { .string($0) }).jsonText), changedAt])
    }

    /// Parse's password expiry check at log-in: a password older than `maxPasswordAge` days is refused;
    /// one set before the policy existed starts its age now.
    /// - Throws: 101 `Your password has expired. Please reset your password.`
    static func checkAge(of userId: String, policy: PasswordPolicy, in db: any SQLConnection) throws {
        guard let days = policy.maxPasswordAge else { return }
        let now = ParseDate.now().millisecondsSince1970
        let row = try db.fetchRows("SELECT changedAt FROM _password WHERE userId = ?", [.text(userId)], cacheable: true).first
        guard let changedAt = row?[0].integer else {
            try db.execute("UPDATE _password SET changedAt = ? WHERE userId = ?", [.integer(now), .text(userId)])
            return
        }
        if Double(changedAt) + 86_400_000 * days < Double(now) {
            throw ParseError(.objectNotFound, "Your password has expired. Please reset your password.")
        }
    }
}
