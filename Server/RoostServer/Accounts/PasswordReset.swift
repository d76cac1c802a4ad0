import RoostCore

/// Password reset as Parse's `UserController` runs it: a mailed link carries a token; the page it leads
/// to sets a new password, checked against the policy; the user's sessions and reset links end with it.
enum PasswordReset {
    /// A refusal of the reset page, with Parse's message (its pages show it; `updatePassword` rejects with it).
    struct Refusal: Error {
        let message: String
    }

    /// Queues a reset mail for the user `email` names (Parse's `sendPasswordResetEmail`). Returns whether
    /// there is such a user. Both cases take one write, so the time of the reply tells no more than its body.
    static func request(email: String, context: RequestContext) throws -> Bool {
        try context.write { db in
            let schema = try UserStore.schema(in: db)
            guard let user = try UserStore.find(resetEmail: email, schema: schema, in: db)?.decoded() else { return false }
            try AccountMail.queueReset(for: user, context: context, in: db)  // Asked for: at most one per interval.
            return true
        }
    }

    /// Whether a reset link is still good (Parse's `checkResetTokenValidity`).
    /// - Throws: `Refusal` with Parse's message for an unknown or used token, or an expired one.
    static func check(username: String, token: String, context: RequestContext) throws -> String {
        switch try context.read({ db in try AccountTokens.find(token, .resetPassword, username: username, in: db) }) {
        case .valid(let userId): return userId
        case .expired: throw Refusal(message: "The password reset link has expired")
        case .unknown: throw Refusal(message: "Failed to reset password: username / email / token is invalid")
        }
    }

    /// Sets a new password through a reset link (Parse's `updatePassword`): the policy is checked, the
    /// token and every other reset link end, every session of the user is revoked, and with
    /// `unlockOnPasswordReset` the lockout ends. Runs outside the writer but for the final write (hashing).
    /// - Throws: `Refusal` with Parse's message.
    static func reset(username: String, token: String, newPassword: String, context: RequestContext) throws {
        let userId = try check(username: username, token: token, context: context)
        let policy = context.config.passwordPolicy
        do {
            try policy.check(newPassword, username: username)
        } catch let error as ParseError {
            throw Refusal(message: error.message)
        }
        let recent = try context.read { db in try PasswordRecord.recentHashes(of: userId, policy: policy, in: db) }
        if recent.contains(where: { context.verifyPassword(newPassword, against: $0) }) {
            throw Refusal(message: policy.repeatedPasswordError.message)
        }
        let hash = try context.hashPassword(newPassword)
        try context.write { db in
            // Checked again in the write: of two resets with one link, one wins.
            guard case .valid(userId) = try AccountTokens.find(token, .resetPassword, username: username, in: db),
                let schema = try SchemaStore.load(UserStore.className, in: db), var user = try UserStore.fetch(userId, in: db)
            else { throw Refusal(message: "Failed to reset password: username / email / token is invalid") }
            user.updatedAt = max(ParseDate.now(), user.updatedAt)
            try ObjectStore.update(user, in: schema, in: db)
            try PasswordRecord.setPassword(hash, of: userId, policy: policy, in: db)
            try AccountTokens.revoke(.resetPassword, of: userId, in: db)
            if context.config.revokeSessionOnPasswordReset { try SessionStore.deleteAll(userId: userId, in: db) }
            if context.config.accountLockout?.unlockOnPasswordReset == true { try AccountLockout.clear(userId, in: db) }
        }
    }
}
