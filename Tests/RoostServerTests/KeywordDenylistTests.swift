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

    /// `--request-keyword-denylist`: strings are unanchored patterns, other values compared whole; an entry with
    /// neither a key nor a value matches nothing; the list replaces the default one.
    @Test func aCustomListMatchesPatternsAtAnyDepth() throws {
        let list = try [["key": "^sec"], ["value": "ev[a]l\\("], ["key": "n", "value": 5], "bare"].map { try KeywordDenylist.Entry($0) }
        func refusal(_ data: JSON) -> String? {
            do { try KeywordDenylist.check(data, custom: list) } catch let error as ParseError { return error.message } catch { return nil }
            return nil
        }
        #expect(refusal(["a": [["secret": 1]]]) == #"Prohibited keyword in request data: {"key":"^sec"}."#)
        #expect(refusal(["asecret": 1]) == nil)
        #expect(refusal(["code": ["x": "1; eval(2)"]]) == #"Prohibited keyword in request data: {"value":"ev[a]l\\("}."#)
        #expect(refusal(["n": 5]) == #"Prohibited keyword in request data: {"key":"n","value":5}."#)
        #expect(refusal(["n": "5", "bare": "bare", "constructor": 1]) == nil)
        #expect(throws: KeywordDenylist.Entry.InvalidPattern.self) { try KeywordDenylist.Entry(["key": "a("]) }
    }
}
