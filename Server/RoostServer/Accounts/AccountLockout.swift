import RoostCore

/// Parse Server's `accountLockout` option: after `threshold` wrong passwords in a row, a user's log-ins
/// are refused for `duration` minutes, the right password included (`AccountLockout.js`).
public struct AccountLockoutPolicy: Sendable, Equatable {
    public var threshold: Int
    /// Minutes (a fraction too, as Parse allows).
    public var duration: Double
    /// Whether a password reset through the emailed link ends the lockout.
    public var unlockOnPasswordReset: Bool

    public init(threshold: Int, duration: Double, unlockOnPasswordReset: Bool = false) {
        self.threshold = threshold
        self.duration = duration
        self.unlockOnPasswordReset = unlockOnPasswordReset
    }

    /// Parse's start-up check (`Config.validateAccountLockoutPolicy`): its message, or nil when valid.
    public func problem() -> String? {
        if !(duration > 0 && duration <= 99999) { return "Account lockout duration should be greater than 0 and less than 100000" }
        if threshold < 1 || threshold > 999 {
            return "Account lockout threshold should be an integer greater than 0 and less than 1000"
        }
        return nil
    }

    /// Parse's message for a locked account (its `duration` as JavaScript prints the number).
    var lockedError: ParseError {
        let minutes = duration == duration.rounded() ? String(Int(duration)) : String(duration)
        return ParseError(.objectNotFound, "Your account is locked due to multiple failed login attempts. Please try again after \(minutes) minute(s)")
    }
}

/// The failed log-ins of each user, in `_login_failure` (no object query reaches it).
enum AccountLockout {
    /// Records a log-in attempt whose password was checked, as Parse's `handleLoginAttempt`: a locked
    /// account is refused whatever the password; otherwise a right one clears the count and a wrong one
    /// adds to it, locking the account once the count reaches the threshold.
    /// - Throws: 101 with Parse's message while the account is locked.
    static func recordAttempt(userId: String, succeeded: Bool, policy: AccountLockoutPolicy, in db: any SQLConnection) throws {
        let now = ParseDate.now().millisecondsSince1970
        let row = try db.fetchRows("SELECT failedCount, lockedUntil FROM _login_failure WHERE userId = ?", [.text(userId)],
                                   cacheable: true).first
        let count = row?[0].integer ?? 0
        if let until = row?[1].integer, until > now, count >= Int64(policy.threshold) { throw policy.lockedError }
        if succeeded {
            if row != nil { try clear(userId, in: db) }
            return
        }
        let failed = count + 1
        let lockedUntil: SQLValue = failed >= Int64(policy.threshold) ? .integer(now + Int64(policy.duration * 60_000)) : (row?[1] ?? .null)
        try db.execute("""
            INSERT INTO _login_failure (userId, failedCount, lockedUntil) VALUES (?, ?, ?)
            ON CONFLICT (userId) DO UPDATE SET failedCount = excluded.failedCount, lockedUntil = excluded.lockedUntil
            """, [.text(userId), .integer(failed), lockedUntil])
    }

    /// Forgets the user's failed log-ins (a right password, an unlocking reset, a deleted user).
    static func clear(_ userId: String, in db: any SQLConnection) throws {
        try db.execute("DELETE FROM _login_failure WHERE userId = ?", [.text(userId)])
    }
}
