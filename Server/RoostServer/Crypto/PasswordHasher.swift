import COpenSSL
import RoostCore

/// Password hashes with PBKDF2-HMAC-SHA256 (OpenSSL `PKCS5_PBKDF2_HMAC`), a random 16-byte salt per
/// password, and the parameters kept in the stored form so they can be raised later:
/// `pbkdf2-sha256$<iterations>$<salt base64>$<hash base64>`.
public struct PasswordHasher: Sendable {
    /// OWASP's 2023 figure for PBKDF2-HMAC-SHA256.
    public static let defaultIterations = 600_000

    public let iterations: Int

    public init(iterations: Int = PasswordHasher.defaultIterations) {
        self.iterations = max(1, iterations)
    }

    /// The stored form of `password`.
    /// - Throws: `CryptoError` when OpenSSL fails.
    public func hash(_ password: String) throws -> String {
        let salt = try SecureRandom.bytes(16)
        let digest = try PasswordHasher.derive(password, salt: salt, iterations: iterations)
        return "pbkdf2-sha256$\(iterations)$\(Base64.encode(salt))$\(Base64.encode(digest))"
    }

    /// Whether `password` matches `stored`, compared in constant time. A malformed `stored` never matches.
    public func verify(_ password: String, against stored: String) -> Bool {
        let parts = stored.split(separator: "$")
        guard parts.count == 4, parts[0] == "pbkdf2-sha256", let rounds = Int(parts[1]), rounds > 0,
            let salt = Base64.decode(String(parts[2])), let expected = Base64.decode(String(parts[3])),
            let digest = try? PasswordHasher.derive(password, salt: salt, iterations: rounds)
        else { return false }
        return digest.count == expected.count && CRYPTO_memcmp(digest, expected, digest.count) == 0
    }

    /// Whether `stored` was made with other parameters than this hasher's (it should be hashed again at
    /// the next successful log-in, so every user's log-in costs the same as an unknown user's).
    public func needsRehash(_ stored: String) -> Bool {
        let parts = stored.split(separator: "$")
        return parts.count != 4 || parts[0] != "pbkdf2-sha256" || Int(parts[1]) != iterations
    }

    /// Spends the time of one verification, so a login for an unknown user answers as slowly as one
    /// with a wrong password.
    public func simulateVerification() {
        _ = try? PasswordHasher.derive("", salt: [UInt8](repeating: 0, count: 16), iterations: iterations)
    }

    private static func derive(_ password: String, salt: [UInt8], iterations: Int) throws -> [UInt8] {
        var output = [UInt8](repeating: 0, count: 32)
        let passwordBytes = Array(password.utf8).map { CChar(bitPattern: $0) }
        let status = PKCS5_PBKDF2_HMAC(passwordBytes, Int32(passwordBytes.count), salt, Int32(salt.count),
                                       Int32(iterations), EVP_sha256(), Int32(output.count), &output)
        guard status == 1 else { throw CryptoError.current("PKCS5_PBKDF2_HMAC") }
        return output
    }
}

/// Session tokens; only their SHA-256 is stored.
public enum SessionToken {
    /// `r:` and 32 lowercase hex characters (128 random bits), the form Parse Server issues.
    public static func generate() throws -> String { "r:" + (try SecureRandom.hex(16)) }

    /// Lowercase hex SHA-256 of the token: what the database keeps.
    public static func digest(_ token: String) -> String { SHA256.hex(Array(token.utf8)) }
}
