import Foundation
import RoostCore
@testable import RoostServer
import Testing

/// `PasswordHasher` (PBKDF2-HMAC-SHA256 with its parameters in the stored form) and `SessionToken`.
@Suite struct PasswordHasherTests {
    let fast = PasswordHasher(iterations: 1000)

    /// `pbkdf2-sha256$<iterations>$<salt>$<hash>` split into its parts.
    func parts(_ stored: String) -> [String] { stored.split(separator: "$", omittingEmptySubsequences: false).map(String.init) }

    @Test func defaultIsAtLeastOWASPsFigure() {
        #expect(PasswordHasher.defaultIterations >= 600_000)
        #expect(PasswordHasher().iterations == PasswordHasher.defaultIterations)
        #expect(PasswordHasher(iterations: 0).iterations == 1)
        #expect(PasswordHasher(iterations: -5).iterations == 1)
    }

    @Test func storedFormCarriesItsParameters() throws {
        let stored = try fast.hash("correct horse")
        let fields = parts(stored)
        try #require(fields.count == 4)
        #expect(fields[0] == "pbkdf2-sha256")
        #expect(fields[1] == "1000")
        #expect(Base64.decode(fields[2])?.count == 16)
        #expect(Base64.decode(fields[3])?.count == 32)
        #expect(!stored.contains("correct horse"))
    }

    @Test func verifiesOnlyTheRightPassword() throws {
        let stored = try fast.hash("correct horse")
        #expect(fast.verify("correct horse", against: stored))
        for wrong in ["correct horsf", "Correct horse", "correct horse ", "", "correct", "correct horse correct horse"] {
            #expect(!fast.verify(wrong, against: stored), "\(wrong)")
        }
    }

    @Test func saltIsRandomPerHash() throws {
        let hashes = try (0..<10).map { _ in try fast.hash("same password") }
        #expect(Set(hashes).count == 10)
        #expect(Set(hashes.map { parts($0)[2] }).count == 10)
        for stored in hashes { #expect(fast.verify("same password", against: stored)) }
    }

    @Test func unicodeAndEmptyPasswords() throws {
        for password in ["pässwörd 🔑", "", "\u{0}nul", String(repeating: "long", count: 1000)] {
            let stored = try fast.hash(password)
            #expect(fast.verify(password, against: stored), "\(password.prefix(10))")
            #expect(!fast.verify(password + "x", against: stored), "\(password.prefix(10))")
        }
    }

    /// The iteration count comes from the stored hash, so the configured count can be raised later.
    @Test func verifyUsesTheStoredIterationCount() throws {
        let old = try PasswordHasher(iterations: 500).hash("kept across upgrades")
        let raised = PasswordHasher(iterations: 2000)
        #expect(raised.verify("kept across upgrades", against: old))
        #expect(parts(try raised.hash("new")).dropFirst().first == "2000")
        // Changing the count in a stored hash breaks it.
        var fields = parts(old)
        fields[1] = "501"
        #expect(!raised.verify("kept across upgrades", against: fields.joined(separator: "$")))
    }

    /// RFC 7914 §11 / well-known PBKDF2-HMAC-SHA256 vectors ("password", salt "salt", 32 bytes).
    @Test(arguments: [
        (1, "Eg+2z/z4syxD5yJSVsT4N6hlSMkszDVICAWYfLcL4Xs="),
        (2, "rk0Mla9rRtMtCt/5KPBt0CowP47zwlHf1uLYWpVHTEM="),
        (4096, "xeR41ZKIyEGqUw22hFxMjZYok6ABzk4RpJY4c6qYE0o="),
    ])
    func matchesKnownPBKDF2Vectors(iterations: Int, digest: String) {
        let stored = "pbkdf2-sha256$\(iterations)$c2FsdA==$\(digest)"
        #expect(fast.verify("password", against: stored))
        #expect(!fast.verify("Password", against: stored))
    }

    @Test func knownVectorWithUnicodePassword() {
        // Python: hashlib.pbkdf2_hmac('sha256', 'pässwörd 🔑'.encode(), b'0123456789abcdef', 1000, 32)
        let stored = "pbkdf2-sha256$1000$MDEyMzQ1Njc4OWFiY2RlZg==$qS4yoKtcj0lUOQHX1U4RYT1b5yKtax3sj+J+RsVSXsg="
        #expect(fast.verify("pässwörd 🔑", against: stored))
    }

    @Test func malformedStoredFormsNeverMatch() throws {
        let good = try fast.hash("pw")
        let fields = parts(good)
        let bad = [
            "", "pw", "$$$", "pbkdf2-sha256", "pbkdf2-sha256$1000$\(fields[2])",
            "bcrypt$1000$\(fields[2])$\(fields[3])", "pbkdf2-sha1$1000$\(fields[2])$\(fields[3])",
            "pbkdf2-sha256$0$\(fields[2])$\(fields[3])", "pbkdf2-sha256$-1$\(fields[2])$\(fields[3])",
            "pbkdf2-sha256$abc$\(fields[2])$\(fields[3])", "pbkdf2-sha256$1000$!!!$\(fields[3])",
            "pbkdf2-sha256$1000$\(fields[2])$!!!", "pbkdf2-sha256$1000$\(fields[2])$",
            "pbkdf2-sha256$1000$\(fields[2])$\(Base64.encode(Array(Base64.decode(fields[3])!.prefix(16))))",
            "pbkdf2-sha256$1000$\(fields[2])$\(fields[3])$extra", good + "x", "x" + good,
        ]
        for stored in bad { #expect(!fast.verify("pw", against: stored), "\(stored)") }
        // A flipped bit in the digest.
        var digest = Base64.decode(fields[3])!
        digest[0] ^= 1
        #expect(!fast.verify("pw", against: "pbkdf2-sha256$1000$\(fields[2])$\(Base64.encode(digest))"))
        #expect(fast.verify("pw", against: good))
    }

    @Test func simulatedVerificationCostsAboutAsMuchAsARealOne() throws {
        let hasher = PasswordHasher(iterations: 200_000)
        let stored = try hasher.hash("pw")
        let clock = ContinuousClock()
        var real: [Duration] = []
        var simulated: [Duration] = []
        for _ in 0..<3 {
            real.append(clock.measure { _ = hasher.verify("wrong", against: stored) })
            simulated.append(clock.measure { hasher.simulateVerification() })
        }
        let median = { (values: [Duration]) in values.sorted()[1] }
        #expect(median(simulated) * 3 > median(real), "simulated \(simulated), real \(real)")
    }

    /// Parse Server's form: `r:` and 32 lowercase hex characters (16 random bytes).
    @Test func sessionTokensAreRandomHex() throws {
        var tokens: Set<String> = []
        for _ in 0..<1000 {
            let token = try SessionToken.generate()
            #expect(token.hasPrefix("r:"))
            #expect(token.count == 34)
            #expect(token.dropFirst(2).unicodeScalars.allSatisfy { ("a"..."f").contains($0) || ("0"..."9").contains($0) })
            tokens.insert(token)
        }
        #expect(tokens.count == 1000)
        // Every symbol shows up about equally often over 32,000 characters (a biased generator would show).
        var counts: [Character: Int] = [:]
        for token in tokens { for symbol in token.dropFirst(2) { counts[symbol, default: 0] += 1 } }
        #expect(counts.count == 16)
        #expect(counts.values.allSatisfy { $0 > 1_700 && $0 < 2_300 }, "\(counts)")
    }

    @Test func sessionTokenDigestIsLowercaseHexSHA256() {
        #expect(SessionToken.digest("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SessionToken.digest("r:abc") == "c40ea82ff6e8df75efc3c7ac26796cf7e291b8d1c8c0049c92e853b42ee8509a")
        #expect(SessionToken.digest("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        let token = "r:" + String(repeating: "A", count: 32)
        #expect(SessionToken.digest(token) == SessionToken.digest(token))
        #expect(SessionToken.digest(token) != SessionToken.digest(token.lowercased()))
        #expect(SessionToken.digest(token).range(of: "^[0-9a-f]{64}$", options: .regularExpression) != nil)
    }

    @Test func hashesFromOtherParametersAreMarkedForRehashing() throws {
        let stored = try fast.hash("pw-rehash")
        #expect(!fast.needsRehash(stored))
        #expect(PasswordHasher(iterations: 2000).needsRehash(stored))
        #expect(fast.needsRehash("not-a-hash"))
        // The old hash still verifies under a hasher with new parameters (it reads them from the hash).
        #expect(PasswordHasher(iterations: 2000).verify("pw-rehash", against: stored))
    }
}
