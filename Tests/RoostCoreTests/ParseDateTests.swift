import RoostCore
import Testing

@Suite struct ParseDateTests {
    /// Milliseconds since 1970 and the ISO text Parse (JavaScript `toJSON()`) writes for them.
    static let known: [(Int64, String)] = [
        (0, "1970-01-01T00:00:00.000Z"),
        (1, "1970-01-01T00:00:00.001Z"),
        (999, "1970-01-01T00:00:00.999Z"),
        (1_000, "1970-01-01T00:00:01.000Z"),
        (1_700_000_000_123, "2023-11-14T22:13:20.123Z"),
        (1_795_341_600_000, "2026-11-22T10:00:00.000Z"),
        (1_709_208_000_000, "2024-02-29T12:00:00.000Z"),
        (951_868_800_000, "2000-03-01T00:00:00.000Z"),
        (253_402_300_799_999, "9999-12-31T23:59:59.999Z"),
        // Before 1970.
        (-1, "1969-12-31T23:59:59.999Z"),
        (-1_000, "1969-12-31T23:59:59.000Z"),
        (-86_400_000, "1969-12-31T00:00:00.000Z"),
        (-14_182_940_000, "1969-07-20T20:17:40.000Z"),
        (-2_208_988_800_000, "1900-01-01T00:00:00.000Z"),
        (-62_135_596_800_000, "0001-01-01T00:00:00.000Z"),
    ]

    @Test(arguments: ParseDateTests.known)
    func formatsAsISOWithThreeMillisecondDigits(milliseconds: Int64, iso: String) {
        let date = ParseDate(millisecondsSince1970: milliseconds)
        #expect(date.iso == iso)
        #expect(date.description == iso)
        var output = Array("x".utf8)
        date.appendQuotedISO(to: &output)
        #expect(String(decoding: output, as: UTF8.self) == "x\"\(iso)\"")
    }

    @Test func yearsBeyondFourDigitsAreQuotedToo() {
        let date = ParseDate(millisecondsSince1970: 253_402_300_800_000)  // 10000-01-01
        var output: [UInt8] = []
        date.appendQuotedISO(to: &output)
        #expect(String(decoding: output, as: UTF8.self) == "\"\(date.iso)\"")
        #expect(date.iso.hasPrefix("10000-01-01T"))
    }

    @Test(arguments: ParseDateTests.known)
    func parsesWhatItFormats(milliseconds: Int64, iso: String) {
        #expect(ParseDate(iso: iso)?.millisecondsSince1970 == milliseconds)
    }

    @Test(arguments: [
        0, 1, -1, 59_999, -59_999, 86_399_999, 1_000_000_000_000, -1_000_000_000_000, 1_795_341_600_123,
        -123_456_789_012, 4_102_444_800_000,
    ] as [Int64])
    func roundTrip(milliseconds: Int64) throws {
        let date = ParseDate(millisecondsSince1970: milliseconds)
        let reparsed = try #require(ParseDate(iso: date.iso))
        #expect(reparsed == date)
        #expect(reparsed.iso == date.iso)
    }

    @Test(arguments: [
        ("2026-11-22T10:00:00.000Z", "2026-11-22T10:00:00.000Z"),
        ("2026-11-22T10:00:00Z", "2026-11-22T10:00:00.000Z"),
        ("2026-11-22T10:00Z", "2026-11-22T10:00:00.000Z"),
        ("2026-11-22T10:00:00.5Z", "2026-11-22T10:00:00.500Z"),
        ("2026-11-22T10:00:00.12Z", "2026-11-22T10:00:00.120Z"),
        ("2026-11-22T10:00:00.123456Z", "2026-11-22T10:00:00.123Z"),
        ("2026-11-22T12:00:00.000+02:00", "2026-11-22T10:00:00.000Z"),
        ("2026-11-22T12:00:00+0200", "2026-11-22T10:00:00.000Z"),
        ("2026-11-22T05:30:00-04:30", "2026-11-22T10:00:00.000Z"),
        ("2026-11-22T10:00:00+00:00", "2026-11-22T10:00:00.000Z"),
        ("2026-11-23T01:00:00+15:00", "2026-11-22T10:00:00.000Z"),
        ("2026-11-21T23:00:00-11:00", "2026-11-22T10:00:00.000Z"),
        ("2027-01-01T00:30:00+01:00", "2026-12-31T23:30:00.000Z"),
        ("2026-11-22 10:00:00Z", "2026-11-22T10:00:00.000Z"),
        ("2026-11-22", "2026-11-22T00:00:00.000Z"),
        ("1969-12-31T23:59:59.999Z", "1969-12-31T23:59:59.999Z"),
        ("1970-01-01T01:00:00+02:00", "1969-12-31T23:00:00.000Z"),
    ] as [(String, String)])
    func parsesVariants(input: String, normalized: String) throws {
        let date = try #require(ParseDate(iso: input))
        #expect(date.iso == normalized)
    }

    @Test(arguments: [
        "", "garbage", "26-11-22", "2026-1-22", "2026/11/22", "2026-13-01T00:00:00Z", "2026-00-10T00:00:00Z",
        "2026-11-32T00:00:00Z", "2026-11-00T00:00:00Z", "2026-11-22T24:00:00Z", "2026-11-22T10:60:00Z",
        "2026-11-22T10:00:61Z", "2026-11-22T10:00:00", "2026-11-22T10:00:00.Z", "2026-11-22T10:00:00.000Zjunk",
        "2026-11-22T10:00:00.000+2", "2026-11-22T10:00:00.000 Z", "2026-11-22T", "2026-11-22T10",
        "x2026-11-22T10:00:00Z",
    ])
    func refusesInvalidText(input: String) {
        #expect(ParseDate(iso: input) == nil)
    }

    @Test func comparesByInstant() throws {
        let earlier = try #require(ParseDate(iso: "2026-11-22T10:00:00.000Z"))
        let later = try #require(ParseDate(iso: "2026-11-22T11:00:00.000+01:00"))
        #expect(earlier == later)
        let laterStill = ParseDate(millisecondsSince1970: earlier.millisecondsSince1970 + 1)
        #expect(earlier < laterStill)
        #expect(!(laterStill < earlier))
        #expect([laterStill, earlier].sorted() == [earlier, laterStill])
        #expect(ParseDate(millisecondsSince1970: -1) < ParseDate(millisecondsSince1970: 0))
    }

    @Test func nowIsCurrentAndWellFormed() throws {
        let now = ParseDate.now()
        #expect(now.millisecondsSince1970 > 1_700_000_000_000)
        #expect(now.iso.count == 24)
        #expect(now.iso.hasSuffix("Z"))
        let reparsed = try #require(ParseDate(iso: now.iso))
        #expect(reparsed == now)
    }
}
