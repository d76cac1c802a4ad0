@testable import RoostServer
import RoostCore
import Testing

/// The denylist's substring test, on its own (the refusals are `VulnerabilitiesSpecTests`).
@Suite struct KeywordDenylistTests {
    @Test func findsAKeywordAnywhereInTheText() {
        #expect(KeywordDenylist.holds("constructor", "constructor"))
        #expect(KeywordDenylist.holds("a.constructor", "constructor"))
        #expect(KeywordDenylist.holds("constructorX", "constructor"))
        #expect(KeywordDenylist.holds("éé__proto__", "__proto__"))
        #expect(KeywordDenylist.holds("ccconstructor", "constructor"))  // A false start just before the match.
        #expect(!KeywordDenylist.holds("constructo", "constructor"))
        #expect(!KeywordDenylist.holds("", "Code"))
        #expect(!KeywordDenylist.holds("Cod\u{0}e", "Code"))
        #expect(KeywordDenylist.holds("x\u{0}Code", "Code"))  // A NUL before it does not end the text.
    }

    @Test func refusesNestedKeysAndTheBSONTypeOnlyWithCode() throws {
        #expect(throws: ParseError.self) { try KeywordDenylist.check(["a": ["b": ["x__proto__y": 1]]]) }
        #expect(throws: ParseError.self) { try KeywordDenylist.check(["list": [["_bsontype": "aCode"]]]) }
        try KeywordDenylist.check(["_bsontype": "Binary", "proto": 1, "construct": "constructor"])
    }
}
