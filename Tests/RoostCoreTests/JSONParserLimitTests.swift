import RoostCore
import Testing

/// The bound on the values of one document (`maximumValues`): each scalar, array and object counts one.
@Suite struct JSONParserLimitTests {
    @Test func aDocumentOfExactlyTheLimitParses() throws {
        // The array and its 9 elements: 10 values.
        #expect(try JSONParser.parse("[1,2,3,4,5,6,7,8,9]", maximumValues: 10) == [1, 2, 3, 4, 5, 6, 7, 8, 9])
        #expect(try JSONParser.parse(#"{"a":{"b":[true,null]}}"#, maximumValues: 5) == ["a": ["b": [true, nil]]])
    }

    @Test(arguments: ["[1,2,3,4,5,6,7,8,9,10]", #"{"a":{"b":[true,null,"c",1,2,3,4,5]}}"#, "[[[[[[[[[[[]]]]]]]]]]]", #"[{},{},{},{},{},{},{},{},{},{}]"#])
    func oneValueMoreIsRefused(text: String) {
        #expect(throws: JSONParseError.self) { try JSONParser.parse(text, maximumValues: 10) }
    }

    @Test func theRefusalSaysWhy() {
        let zeros = "[" + Array(repeating: "0", count: 2_000).joined(separator: ",") + "]"
        do {
            _ = try JSONParser.parse(Array(zeros.utf8), maximumValues: 1_000)
            Issue.record("2,001 values parsed with a limit of 1,000")
        } catch let error as JSONParseError {
            #expect(error.description.hasPrefix("more than 1000 values at byte "))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func withoutALimitLargeDocumentsParse() throws {
        let zeros = "[" + Array(repeating: "0", count: 100_000).joined(separator: ",") + "]"
        #expect(try JSONParser.parse(zeros).arrayValue?.count == 100_000)
    }

    /// Numbers beyond a Double's range are refused, never read as infinity (which would be written as `null`).
    @Test(arguments: ["1e400", "-1e400", "[1e309]", #"{"a":123456789012345678901234567890e300}"#])
    func numbersOutOfRangeAreRefused(text: String) {
        #expect(throws: JSONParseError.self) { try JSONParser.parse(text) }
    }
}
