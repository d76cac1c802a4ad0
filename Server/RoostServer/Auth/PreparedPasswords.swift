import Foundation
import RoostCore

/// The password work (PBKDF2) of one request, done before any write transaction is opened, so none
/// of it runs while the single writer is held.
///
/// A request that hashes or checks passwords — a sign-up, log-in or password change, also as an item
/// of a `/batch` or under `X-Parse-Request-Id`, whose writes share one transaction — is prepared first
/// on a password worker (`PasswordPreparation`): each hash it will store and each check it will make
/// is computed then. Inside the writer the handlers only look the results up. A 50-item batch of
/// log-ins used to hash 50 times holding the writer (every other write waited ~28 s).
///
/// Used by one thread at a time (the request's worker, then the writer running its transaction).
final class PreparedPasswords: @unchecked Sendable {
    private let hasher: PasswordHasher
    private let lock = NSLock()
    /// New stored forms, per password, made ahead for the writes to come (each used once: a salt is never reused).
    private var pendingHashes: [String: [String]] = [:]
    /// Stored forms handed out, with their password: a later item of the same batch logging in with it needs no check.
    private var madeHere: [String: String] = [:]
    private var checks: [Check: Bool] = [:]
    /// Verifications spent ahead for log-ins of unknown users (they must cost as much as a wrong password).
    private var simulationsAhead = 0

    private struct Check: Hashable {
        let password: String
        let stored: String
    }

    init(hasher: PasswordHasher) {
        self.hasher = hasher
    }

    /// Hashes `password` now, for a write to come that stores it.
    func prepareHash(of password: String) throws {
        let stored = try hasher.hash(password)
        locked { pendingHashes[password, default: []].append(stored) }
    }

    /// Spends one verification's time now, for a log-in to come whose user does not exist.
    func prepareSimulatedVerification() {
        hasher.simulateVerification()
        locked { simulationsAhead += 1 }
    }

    /// The stored form of `password`: one prepared ahead, or made now outside the writer.
    /// - Throws: `ParseError` 1 inside the writer when none was prepared (hashing there would hold every write).
    func hash(_ password: String, holdingWriter: Bool) throws -> String {
        if let stored = locked({ pendingHashes[password]?.popLast() }) {
            locked { madeHere[stored] = password }
            return stored
        }
        guard !holdingWriter else { throw ParseError(.internalServerError, "A password was not hashed before the write.") }
        let stored = try hasher.hash(password)
        locked { madeHere[stored] = password }
        return stored
    }

    /// Whether `password` matches `stored`: checked ahead, known (made by this request), or checked now
    /// outside the writer. Inside the writer an unprepared check fails: the stored hash changed since
    /// (a concurrent password change), and the log-in answers as for a wrong password.
    func verify(_ password: String, against stored: String, holdingWriter: Bool) -> Bool {
        let check = Check(password: password, stored: stored)
        if let known = locked({ checks[check] }) { return known }
        if let original = locked({ madeHere[stored] }) { return original == password }
        guard !holdingWriter else { return false }
        let matches = hasher.verify(password, against: stored)
        locked { checks[check] = matches }
        return matches
    }

    /// The time of one verification, for a log-in whose user does not exist: spent ahead, or now outside the writer.
    func simulateVerification(holdingWriter: Bool) {
        let spentAhead = locked { () -> Bool in
            guard simulationsAhead > 0 else { return false }
            simulationsAhead -= 1
            return true
        }
        if !spentAhead, !holdingWriter { hasher.simulateVerification() }
    }

    private func locked<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}
