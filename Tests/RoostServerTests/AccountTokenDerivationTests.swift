import Foundation
import RoostCore
@testable import RoostServer
import Testing

/// The keyed digest behind reusable account links (`AccountTokens`, `--*-token-reuse-if-valid`).
@Suite struct AccountTokenDerivationTests {
    private func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    /// RFC 4231, test cases 1 and 2.
    @Test func hmacSHA256MatchesRFC4231() {
        #expect(hex(HMACSHA256.digest(key: [UInt8](repeating: 0x0b, count: 20), message: Array("Hi There".utf8)))
                == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        #expect(hex(HMACSHA256.digest(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8)))
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    /// The key depends on the master key, so another app's (or a changed) master key makes other links.
    @Test func theDerivationKeyFollowsTheMasterKey() {
        let one = AccountTokens.derivationKey(masterKey: "master-one"), two = AccountTokens.derivationKey(masterKey: "master-two")
        #expect(one.count == 32 && one != two)
        #expect(one == AccountTokens.derivationKey(masterKey: "master-one"))
    }
}
