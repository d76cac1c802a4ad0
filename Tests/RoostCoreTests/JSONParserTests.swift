import RoostCore
import Testing

/// Parses `bytes`, returning `nil` when the parser refuses them.
private func parsed(_ bytes: [UInt8], maximumDepth: Int = JSONParser.defaultMaximumDepth) -> JSON? {
    try? JSONParser.parse(bytes, maximumDepth: maximumDepth)
}

private func parsed(_ text: String) -> JSON? { parsed(Array(text.utf8)) }

/// `depth` arrays, one inside the other, around `1`.
private func nestedArrays(_ depth: Int) -> String {
    String(repeating: "[", count: depth) + "1" + String(repeating: "]", count: depth)
}

/// `depth` objects, one inside the other, around `1`.
private func nestedObjects(_ depth: Int) -> String {
    String(repeating: #"{"a":"#, count: depth) + "1" + String(repeating: "}", count: depth)
}

@Suite struct JSONParserTests {
    @Test(arguments: [
        (#"{"a":1,"b":[true,false,null],"c":{"d":"e"}}"#, ["a": 1, "b": [true, false, nil], "c": ["d": "e"]]),
        (" \t\r\n{ \"a\" : [ 1 , 2 ] }\n ", ["a": [1, 2]]),
        ("{}", [:]),
        ("[]", []),
        ("[[],{}]", [[], [:]]),
        (#""text""#, "text"),
        ("true", true),
        ("false", false),
        ("null", nil),
        ("42", 42),
        (#"{"a":1,"a":2}"#, ["a": 2]),
        (#"{"":""}"#, ["": ""]),
    ] as [(String, JSON)])
    func validDocuments(text: String, expected: JSON) throws {
        #expect(try JSONParser.parse(text) == expected)
        #expect(try JSONParser.parse(Array(text.utf8)) == expected)
        #expect(try JSONParser.parse(ArraySlice(Array(text.utf8))) == expected)
    }

    @Test(arguments: [
        ("0", 0.0), ("-0", 0.0), ("7", 7), ("-12", -12), ("1.5", 1.5), ("-0.25", -0.25),
        ("1e3", 1000), ("1E3", 1000), ("1e+3", 1000), ("25e-2", 0.25), ("-12.25e2", -1225),
        ("9007199254740991", 9_007_199_254_740_991), ("123456789.125", 123_456_789.125),
        // Around the integer fast path's 15-digit limit.
        ("999999999999999", 999_999_999_999_999), ("-999999999999999", -999_999_999_999_999),
        ("1000000000000000", 1_000_000_000_000_000), ("-1234567890123456", -1_234_567_890_123_456),
        ("1.7976931348623157e308", 1.7976931348623157e308), ("5e-324", .leastNonzeroMagnitude),
    ] as [(String, Double)])
    func numbers(text: String, expected: Double) throws {
        #expect(try JSONParser.parse(text) == .number(expected))
        #expect(try JSONParser.parse("[\(text)]") == [.number(expected)])
    }

    @Test(arguments: [
        "01", "-01", "1.", ".5", "+1", "1e", "1e+", "-", "--1", "1.e3", "0x10", "NaN", "Infinity", "-Infinity",
        "1e400", "-1e400", "1_000", "١",
    ])
    func invalidNumbers(text: String) {
        #expect(parsed(text) == nil)
        #expect(parsed(#"{"n":\#(text)}"#) == nil)
    }

    @Test(arguments: [
        (#""\"\\\/\b\f\n\r\t""#, "\"\\/\u{08}\u{0C}\n\r\t"),
        (#""\u0041\u00e9\u20AC""#, "Aé€"),
        (#""\u0000""#, "\u{00}"),
        (#""a\u005cb""#, "a\\b"),
        (#""\uD83D\uDE00""#, "😀"),
        (#""\ud83d\ude00""#, "😀"),
        (#""x\uD834\uDD1Ey""#, "x𝄞y"),
        (#""\uDBFF\uDFFF""#, "\u{10FFFF}"),
        (#""é😀 raw""#, "é😀 raw"),
        (#""before \n after \u00e9 é""#, "before \n after é é"),
        ("\"del \u{7F} is fine\"", "del \u{7F} is fine"),
    ] as [(String, String)])
    func stringEscapes(text: String, expected: String) throws {
        #expect(try JSONParser.parse(text) == .string(expected))
        #expect(try JSONParser.parse("{\(text):1}") == [expected: 1])
    }

    @Test(arguments: [
        #""\uD83D""#, #""\uD83Dx""#, #""\uD83D\n""#, #""\uDE00""#, #""\uD83D\uD83D""#, #""\uD83D\u0041""#,
        #""\x""#, #""\u12""#, #""\u12G4""#, #""\U0041""#, #""\'""#, #""abc\""#, #""\"#,
    ])
    func invalidEscapes(text: String) {
        #expect(parsed(text) == nil)
    }

    @Test(arguments: [
        [0x22, 0xFF, 0x22],                          // never valid in UTF-8
        [0x22, 0xC0, 0xAF, 0x22],                    // overlong "/"
        [0x22, 0xE2, 0x82, 0x22],                    // truncated sequence
        [0x22, 0xED, 0xA0, 0x80, 0x22],              // a surrogate encoded in UTF-8
        [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22],        // above U+10FFFF
        [0x22, 0x80, 0x22],                          // lone continuation byte
        [0x22, 0x5C, 0x6E, 0xFF, 0x22],              // after an escape (slow path)
        [0x7B, 0x22, 0xFE, 0x22, 0x3A, 0x31, 0x7D],  // in a member name
    ] as [[UInt8]])
    func invalidUTF8(bytes: [UInt8]) {
        #expect(parsed(bytes) == nil)
    }

    @Test(arguments: [0x00, 0x01, 0x08, 0x09, 0x0A, 0x0D, 0x1F] as [UInt8])
    func controlCharactersInStrings(byte: UInt8) {
        #expect(parsed([0x22, 0x61, byte, 0x62, 0x22]) == nil)
        #expect(parsed([0x22, 0x5C, 0x6E, byte, 0x22]) == nil)
        #expect(parsed(Array(#"{"a":"#.utf8) + [0x22, byte, 0x22, 0x7D]) == nil)
    }

    @Test(arguments: [
        "{} x", "1 2", "[1]]", #"{"a":1}}"#, #""a""b""#, "null,", "true false", "{}{}", "[] []", "0 0", "{}\u{00}",
    ])
    func trailingGarbage(text: String) {
        #expect(parsed(text) == nil)
    }

    @Test(arguments: [
        "", "   ", #"{"a"}"#, #"{"a":}"#, "{a:1}", "[1,]", #"{"a":1,}"#, "[1 2]", "{'a':1}", "tru", "nul", "fals",
        "True", #"{"a":1"#, #""abc"#, "[", "]", "}", ",", #"{"a" 1}"#, #"{,"a":1}"#, "[,1]", "//c\n1", "/*c*/1",
        #"{"a":1;"b":2}"#, "undefined",
    ])
    func malformedStructure(text: String) {
        #expect(parsed(text) == nil)
    }

    @Test func nestingAtTheLimitIsAccepted() throws {
        #expect(JSONParser.defaultMaximumDepth == 64)
        #expect(parsed(nestedArrays(64)) != nil)
        #expect(parsed(nestedObjects(64)) != nil)
        // Mixed: an object at the top, then 63 arrays.
        #expect(parsed(#"{"a":"# + nestedArrays(63) + "}") != nil)
    }

    @Test func nestingBeyondTheLimitIsRefused() throws {
        #expect(parsed(nestedArrays(65)) == nil)
        #expect(parsed(nestedObjects(65)) == nil)
        #expect(parsed(#"{"a":"# + nestedArrays(64) + "}") == nil)
        #expect(throws: JSONParseError.self) { try JSONParser.parse(nestedArrays(65)) }
    }

    @Test func hostileNestingFailsFastWithoutExhaustingTheStack() {
        #expect(parsed(String(repeating: "[", count: 1_000_000)) == nil)
        #expect(parsed(nestedArrays(100_000)) == nil)
    }

    @Test func depthIsCountedPerBranch() {
        // Many siblings at depth 64 are fine: depth is nesting, not the number of containers.
        let deep = nestedArrays(63)
        #expect(parsed("[" + Array(repeating: deep, count: 50).joined(separator: ",") + "]") != nil)
    }

    @Test func customMaximumDepth() {
        #expect(parsed(Array("[[1]]".utf8), maximumDepth: 2) != nil)
        #expect(parsed(Array("[[1]]".utf8), maximumDepth: 1) == nil)
        #expect(parsed(Array("1".utf8), maximumDepth: 0) == .number(1))
        #expect(parsed(Array("[]".utf8), maximumDepth: 0) == nil)
    }

    @Test func errorsSayWhere() throws {
        let error = try #require(throws: JSONParseError.self) { try JSONParser.parse("[1,]") }
        #expect(error.description.contains("byte 3"))
    }
}
