import RoostCore
import Testing

/// `$relativeTime` text read as Parse Server's `Utils.relativeTimeToDate` reads it.
@Suite struct RelativeTimeTests {
    let now = ParseDate(millisecondsSince1970: 1_700_000_000_000)

    func offset(_ text: String) -> Int64? {
        guard case .success(let date) = RelativeTime.resolve(text, now: now) else { return nil }
        return (date.millisecondsSince1970 - now.millisecondsSince1970) / 1000
    }

    func failure(_ text: String) -> String? {
        guard case .failure(let failure) = RelativeTime.resolve(text, now: now) else { return nil }
        return failure.info
    }

    @Test func readsParsesForms() {
        #expect(offset("now") == 0)
        #expect(offset("in 1 day") == 86_400)
        #expect(offset("3 days ago") == -3 * 86_400)
        #expect(offset("1 year 3 weeks ago") == -(31_536_000 + 3 * 604_800))
        #expect(offset("In  2 HRS 30 mins") == 9_000)  // 2 h 30 min
        #expect(offset("in 1 d 1 hr 1 min 1 sec") == 90_061)  // 86,400 + 3,600 + 60 + 1
        #expect(offset("in 1e1 secs") == 10)  // Number("1e1") is an integer to JavaScript.
        #expect(offset("-2 days ago") == 172_800)  // Two days ahead.
    }

    @Test func failsWithParsesWords() {
        #expect(failure("1 day") == "Time should either start with 'in' or end with 'ago'")
        #expect(failure("in 1 day ago") == "Time cannot have both 'in' and 'ago'")
        #expect(failure("in 1 day 2") == "Invalid time string. Dangling unit or number.")
        #expect(failure("in 1.5 days") == "'1.5' is not an integer.")
        #expect(failure("in x days") == "'x' is not an integer.")
        #expect(failure("-12 bananas ago") == "Invalid interval: 'bananas'")
        #expect(failure("") == "Time should either start with 'in' or end with 'ago'")
    }
}
