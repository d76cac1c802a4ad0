@testable import RoostServer
import Testing

/// Splitting a request target into its path and its form-decoded query parameters.
@Suite struct RequestTargetTests {
    @Test func pathAndQuery() {
        let (path, query) = HTTPRequest.splitTarget(#"/parse/classes/Game?where=%7B%22name%22%3A%22a+b%C3%A9%22%7D&limit=20&&keys=&count"#)
        #expect(path == "/parse/classes/Game")
        #expect(query == ["where": #"{"name":"a bé"}"#, "limit": "20", "keys": "", "count": ""])
        #expect(HTTPRequest.splitTarget("/parse/health") == ("/parse/health", [:]))
        #expect(HTTPRequest.splitTarget("/p?=x&a=b=c").query == ["": "x", "a": "b=c"])
    }

    /// Names in brackets as sent (their `[]` and repeats kept), for `BracketParameters`; plain names left out.
    @Test func bracketedParametersAsSent() {
        let pairs = HTTPRequest.bracketedParameters(of: "/p?where[a][$in][]=1&x=2&where[a][$in][]=b%20c&keys[]=k&a[0]=z")
        #expect(pairs.map(\.0) == ["where[a][$in][]", "where[a][$in][]", "a[0]"])
        #expect(pairs.map(\.1) == ["1", "b c", "z"])
        #expect(HTTPRequest.bracketedParameters(of: "/p").isEmpty)
    }

    @Test func parameterNamesInTheirWrittenOrder() {
        #expect(HTTPRequest.queryKeys(of: "/p?%24sort=1&$limit=2&keys[]=a&%24sort=3&keys[]=b&x") == ["$sort", "$limit", "keys", "x"])
        #expect(HTTPRequest.queryKeys(of: "/p").isEmpty)
        #expect(HTTPRequest.queryKeys(of: "/p?").isEmpty)
        // A target as long as a client may send, every name twice: each kept once, in order (a set, not a scan).
        let names = (0..<5000).map { "k\($0)" }
        let target = "/p?" + (names + names).map { "\($0)=1" }.joined(separator: "&")
        #expect(HTTPRequest.queryKeys(of: target) == names)
        #expect(HTTPRequest.splitTarget(target).query.count == 5000)
    }

    @Test func malformedEscapesStayAsTheyAre() {
        #expect(HTTPRequest.splitTarget("/p?a=%zz&b=100%&c=%4&d=%41").query == ["a": "%zz", "b": "100%", "c": "%4", "d": "A"])
    }

    @Test func pathSegmentsKeepPlusSigns() {
        #expect(HTTPRequest.percentDecode("a+b%2Fc", plusIsSpace: false) == "a+b/c")
        #expect(HTTPRequest.percentDecode("a+b", plusIsSpace: true) == "a b")
    }
}
