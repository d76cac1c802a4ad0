import RoostCore
import Testing

private func text(_ value: JSON) -> String { String(decoding: value.encoded(), as: UTF8.self) }

@Suite struct JSONWriterTests {
    static let samples: [JSON] = [
        nil, true, false, 0, -1, 1.5, -0.001, 1e21, 123_456_789_012, 9_007_199_254_740_991, 1e300, .number(.leastNonzeroMagnitude),
        "", "plain", "quote \" backslash \\ slash /", "controls \u{00}\u{01}\u{08}\u{0C}\u{1F}\n\r\t",
        "unicode é € 😀 \u{10FFFF}", "del \u{7F}",
        [], [:], [1, "two", [3, [4, [5]]], ["six": 6], nil, true],
        ["b": 1, "a": ["z": [1, 2], "y": nil], "é": "accent", "": "empty key", "with \"quote\"": "k"],
        ["__type": "Date", "iso": "2026-11-22T10:00:00.000Z"],
    ]

    @Test(arguments: JSONWriterTests.samples)
    func roundTrip(value: JSON) throws {
        #expect(try JSONParser.parse(value.encoded()) == value)
        #expect(value.jsonText == text(value))
    }

    @Test(arguments: [
        (0, "0"), (-0.0, "0"), (1, "1"), (-5, "-5"), (1337, "1337"), (1e15, "1000000000000000"),
        (9_007_199_254_740_991, "9007199254740991"), (-9_007_199_254_740_991, "-9007199254740991"),
        (1.5, "1.5"), (-0.25, "-0.25"), (0.1, "0.1"), (123.456, "123.456"),
    ] as [(Double, String)])
    func numbers(value: Double, expected: String) {
        #expect(text(.number(value)) == expected)
    }

    @Test func integralNumbersNeverCarryAFraction() {
        for value in [2.0, 100, 1e9, 4_294_967_296, -123_456] {
            #expect(!text(.number(value)).contains("."), "\(value)")
            #expect(!text(.number(value)).contains("e"), "\(value)")
        }
    }

    @Test(arguments: [9_007_199_254_740_992, 1e16, 1e20, -1e300, 1.7976931348623157e308, 1e-7, .leastNonzeroMagnitude] as [Double])
    func largeNumbersStillParseBack(value: Double) throws {
        #expect(try JSONParser.parse(JSON.number(value).encoded()) == .number(value))
    }

    @Test(arguments: [Double.nan, .infinity, -.infinity])
    func nonFiniteNumbersBecomeNull(value: Double) {
        #expect(text(.number(value)) == "null")
    }

    @Test(arguments: [
        ("\"", #""\"""#), ("\\", #""\\""#), ("\n", #""\n""#), ("\r", #""\r""#), ("\t", #""\t""#),
        ("\u{00}", #""\u0000""#), ("\u{01}", #""\u0001""#), ("\u{08}", #""\u0008""#), ("\u{0C}", #""\u000c""#),
        ("\u{1F}", #""\u001f""#), ("/", #""/""#), ("\u{7F}", "\"\u{7F}\""), ("é😀", "\"é😀\""),
        ("a\"b\\c", #""a\"b\\c""#), ("</script>", #""</script>""#),
    ] as [(String, String)])
    func stringEscaping(value: String, expected: String) {
        #expect(text(.string(value)) == expected)
    }

    @Test func keysAreSortedAtEveryLevel() {
        let value: JSON = ["b": 1, "a": 2, "c": ["z": 1, "y": [["k2": 1, "k1": 2]]], "B": 0]
        #expect(text(value) == #"{"B":0,"a":2,"b":1,"c":{"y":[{"k1":2,"k2":1}],"z":1}}"#)
    }

    @Test func equalValuesEncodeToEqualBytes() {
        var first: [String: JSON] = [:]
        var second: [String: JSON] = [:]
        let keys = (0..<50).map { "key\($0)" }
        for key in keys { first[key] = .string(key) }
        for key in keys.reversed() { second[key] = .string(key) }
        #expect(JSON.object(first).encoded() == JSON.object(second).encoded())
    }

    @Test func outputIsCompact() {
        let value: JSON = ["list": [1, [2, [:]], "x", nil, true, false], "empty": [:]]
        #expect(text(value) == #"{"empty":{},"list":[1,[2,{}],"x",null,true,false]}"#)
    }

    @Test func arraysKeepTheirOrder() {
        #expect(text([3, 1, 2, "b", "a"]) == #"[3,1,2,"b","a"]"#)
    }

    @Test func writeAppendsToExistingOutput() {
        var output = Array("prefix:".utf8)
        JSON.array([1, "a"]).write(to: &output)
        #expect(String(decoding: output, as: UTF8.self) == #"prefix:[1,"a"]"#)
    }

    @Test func literalsBuildTheExpectedCases() {
        #expect(("s" as JSON) == .string("s"))
        #expect((1 as JSON) == .number(1))
        #expect((1.5 as JSON) == .number(1.5))
        #expect((true as JSON) == .bool(true))
        #expect((nil as JSON) == .null)
        #expect(([1] as JSON) == .array([.number(1)]))
        #expect((["a": 1] as JSON) == .object(["a": .number(1)]))
        let value: JSON = ["s": "x", "n": 2, "b": false, "a": [1], "o": ["k": nil]]
        #expect(value["s"]?.stringValue == "x")
        #expect(value["n"]?.numberValue == 2)
        #expect(value["b"]?.boolValue == false)
        #expect(value["a"]?.arrayValue == [1])
        #expect(value["o"]?.objectValue == ["k": .null])
        #expect(value["o"]?["k"]?.isNull == true)
        #expect(value["missing"] == nil)
        #expect(JSON.string("x")["k"] == nil)
    }
}
