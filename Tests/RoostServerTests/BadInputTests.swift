import Foundation
import RoostCore
import Testing

/// Bad request bodies and keys: each gets a clear error, the server keeps serving, nothing stored changes.
@Suite struct BadInputTests {
    static let malformedJSON = [
        #"{"a":1"#, "{a:1}", #"{"a":1,}"#, "not json", #"{"a":1}}"#, #"{"a":01}"#, #"{"a":NaN}"#, "{'a':1}",
        #"{"a":"unterminated}"#, #"{"a":"\x"}"#, #"{"a":"\uD800"}"#, "{", "}",
    ]

    @Test(arguments: malformedJSON)
    func malformedJSONIs107(body: String) async throws {
        let sentinel = try await Sentinel()
        for response in try await sentinel.sendBoth(Array(body.utf8)) {
            #expect(response.status == 400)
            #expect(response.code == 107)
            #expect(response.json["error"]?.stringValue?.isEmpty == false)
        }
        try await sentinel.expectIntact()
    }

    // `[]` is an empty object, as Parse reads it (`PHPClientTests.anEmptyArrayIsAnEmptyObject`).
    @Test(arguments: ["[1,2]", #""text""#, "42", "true", "null", #"[{"title":"x"}]"#])
    func bodyThatIsNotAnObjectIs107(body: String) async throws {
        let sentinel = try await Sentinel()
        for response in try await sentinel.sendBoth(Array(body.utf8)) {
            #expect(response.status == 400)
            #expect(response.code == 107)
        }
        try await sentinel.expectIntact()
    }

    @Test(arguments: [
        Array(#"{"title":""#.utf8) + [0xFF] + Array(#""}"#.utf8),
        Array(#"{"title":""#.utf8) + [0xC0, 0xAF] + Array(#""}"#.utf8),
        Array(#"{"title":""#.utf8) + [0xED, 0xA0, 0x80] + Array(#""}"#.utf8),
        Array(#"{""#.utf8) + [0xFE] + Array(#"":1}"#.utf8),
        Array(#"{"title":"ok","n":2,"x":""#.utf8) + [0xE2, 0x82] + Array(#""}"#.utf8),
    ] as [[UInt8]])
    func invalidUTF8Is107(body: [UInt8]) async throws {
        let sentinel = try await Sentinel()
        for response in try await sentinel.sendBoth(body) {
            #expect(response.status == 400)
            #expect(response.code == 107)
        }
        try await sentinel.expectIntact()
    }

    @Test(arguments: [0x00, 0x01, 0x0A, 0x1F] as [UInt8])
    func rawControlCharacterInAStringIs107(byte: UInt8) async throws {
        let sentinel = try await Sentinel()
        for response in try await sentinel.sendBoth(Array(#"{"title":"a"#.utf8) + [byte] + Array(#"b"}"#.utf8)) {
            #expect(response.status == 400)
            #expect(response.code == 107)
        }
        try await sentinel.expectIntact()
    }

    @Test func bodyOverMaxBodyIs413() async throws {
        let sentinel = try await Sentinel(arguments: ["--max-body", "1000"])
        let big = Array(#"{"title":""#.utf8) + Array(repeating: UInt8(ascii: "x"), count: 1200) + Array(#""}"#.utf8)
        for response in try await sentinel.sendBoth(big) {
            #expect(response.status == 413)
        }
        let huge = [UInt8](repeating: UInt8(ascii: " "), count: 200_000)
        #expect(try await sentinel.server.request("POST", "/classes/Keep", body: Data(huge)).status == 413)
        try await sentinel.expectIntact()
        // Just under the limit is fine.
        let small = Array(#"{"title":""#.utf8) + Array(repeating: UInt8(ascii: "y"), count: 900) + Array(#""}"#.utf8)
        #expect(try await sentinel.server.request("POST", "/classes/Other", body: Data(small)).status == 201)
    }

    /// A body a little over the limit is read and dropped: the 413 reaches a client that sends its whole
    /// body before reading, and the connection serves the next request (answering at once and closing
    /// reset such a connection, so the client got an error instead of the 413).
    @Test func aBodyOverTheLimitGetsIts413AndTheConnectionStaysUsable() throws {
        let server = try TestServer(arguments: ["--max-body", "1000"])
        let connection = try RawConnection(port: server.port)
        let body = String(repeating: " ", count: 200_000)
        let refused = try connection.exchange("POST /parse/classes/Keep HTTP/1.1\r\nHost: roost\r\n"
            + "X-Parse-Application-Id: \(TestServer.applicationId)\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body)
        #expect(refused.head.hasPrefix("HTTP/1.1 413"))
        #expect(try JSONParser.parse(Array(refused.body.utf8)) == ["error": "request entity too large"])
        let next = try connection.exchange("GET /parse/health HTTP/1.1\r\nHost: roost\r\n\r\n")
        #expect(next.head.hasPrefix("HTTP/1.1 200"))
        // Far over the limit, or held back by `Expect: 100-continue`: answered at once, nothing is read.
        for extra in ["Content-Length: 5000000\r\n", "Content-Length: 2000\r\nExpect: 100-continue\r\n"] {
            let early = try RawConnection(port: server.port).exchange("POST /parse/classes/Keep HTTP/1.1\r\nHost: roost\r\n"
                + "X-Parse-Application-Id: \(TestServer.applicationId)\r\n\(extra)\r\n")
            #expect(early.head.hasPrefix("HTTP/1.1 413"), "\(extra)")
        }
    }

    /// A request target over 16 KB (Node's header limit, past which Parse Server answers 431) or with 1,000
    /// query parameters or more is answered 431 at once and does nothing. libmicrohttpd itself never answered
    /// one whose parameters overflowed its per-connection memory (490 short ones did): the client waited 30 s
    /// for its connection to be closed.
    @Test func oversizedRequestTargetsAre431AtOnce() async throws {
        let sentinel = try await Sentinel()
        let server = sentinel.server
        let manyParameters = String(repeating: "a=1&", count: 1_200)
        let longValue = "q=" + String(repeating: "x", count: 17_000)
        let mediumParameters = (0..<200).map { "a\($0)=" + String(repeating: "x", count: 100) }.joined(separator: "&")
        for query in [manyParameters, longValue, mediumParameters] {
            for method in ["GET", "POST", "PUT"] {
                let connection = try RawConnection(port: server.port)
                let body = #"{"title":"refused"}"#
                let reply = try connection.exchange("\(method) /parse/classes/Keep?\(query) HTTP/1.1\r\nHost: roost\r\n"
                    + "X-Parse-Application-Id: \(TestServer.applicationId)\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
                #expect(reply.head.hasPrefix("HTTP/1.1 431"), "\(method) \(query.prefix(20))…: \(reply.head)")
                #expect(try JSONParser.parse(Array(reply.body.utf8)) == ["error": "request URI too large"])
            }
        }
        try await sentinel.expectIntact()
        // Under both limits: handled as usual (Parse refuses unknown query parameters with 102).
        let fewer = try await server.request("GET", "/classes/Keep?" + String(repeating: "a=1&", count: 900))
        expectError(fewer, 102, "Invalid parameter for query: a")
        let long = try await server.request("GET", "/classes/Keep", query: ["where": #"{"title":""# + String(repeating: "y", count: 15_000) + #""}"#])
        #expect(long.status == 200)
    }

    /// Headers live in the connection's 64 KB of memory (libmicrohttpd's, where the query parameters no longer go):
    /// Node's 16 KB of them fit (a 16 KB Cookie was closed unanswered with 32 KB), with a 900-parameter target
    /// besides; more than 32 KB is refused or closed at once, never left hanging, and the server goes on serving.
    @Test func headersUpToNodesLimitFitAndLargerOnesEndAtOnce() async throws {
        let sentinel = try await Sentinel()
        let port = sentinel.server.port
        let appId = "X-Parse-Application-Id: \(TestServer.applicationId)\r\n"
        let parameters = (0..<900).map { "p\($0)=1" }.joined(separator: "&")
        let fitting = [
            "GET /parse/classes/Keep HTTP/1.1\r\nHost: roost\r\n\(appId)Cookie: \(String(repeating: "c", count: 16_000))\r\n\r\n",
            "GET /parse/classes/Keep?where=%7B%22title%22%3A%22\(String(repeating: "a", count: 15_000))%22%7D HTTP/1.1\r\n"
                + "Host: roost\r\n\(appId)Cookie: \(String(repeating: "c", count: 16_000))\r\n\r\n",
            "GET /parse/classes/Keep HTTP/1.1\r\nHost: roost\r\n\(appId)" + (0..<400).map { "X-H\($0): v\r\n" }.joined() + "\r\n",
        ]
        for request in fitting {
            #expect(try RawConnection(port: port).exchange(request).head.hasPrefix("HTTP/1.1 200"))
        }
        let withParameters = try RawConnection(port: port).exchange(
            "GET /parse/classes/Keep?\(parameters) HTTP/1.1\r\nHost: roost\r\n\(appId)Cookie: \(String(repeating: "c", count: 8_000))\r\n\r\n")
        #expect(withParameters.head.hasPrefix("HTTP/1.1 400"), "Parse's 102 for an unknown parameter: \(withParameters.head)")
        let tooLarge = [
            "GET /parse/classes/Keep HTTP/1.1\r\nHost: roost\r\n\(appId)Cookie: \(String(repeating: "c", count: 40_000))\r\n\r\n",
            "GET /parse/classes/Keep HTTP/1.1\r\nHost: roost\r\n\(appId)Cookie: \(String(repeating: "c", count: 32_400))\r\n\r\n",
            "GET /parse/classes/Keep?x=\(String(repeating: "a", count: 16_000)) HTTP/1.1\r\nHost: roost\r\n\(appId)"
                + "Cookie: \(String(repeating: "c", count: 70_000))\r\n\r\n",
        ]
        for request in tooLarge {
            let connection = try RawConnection(port: port)
            try connection.send(request)
            let answer = connection.waitForClose(within: 5)
            #expect(answer != nil, "left open")
            #expect(answer.map { $0.isEmpty || $0.hasPrefix("HTTP/1.1 431") } ?? false, "\(answer?.prefix(40) ?? "")")
        }
        try await sentinel.expectIntact()
    }

    @Test func nestingDeeperThan64Is107() async throws {
        let sentinel = try await Sentinel()
        // The body object is level 1, so 64 arrays inside it make 65 levels.
        let tooDeep = #"{"deep":"# + String(repeating: "[", count: 64) + String(repeating: "]", count: 64) + "}"
        for response in try await sentinel.sendBoth(Array(tooDeep.utf8)) {
            #expect(response.status == 400)
            #expect(response.code == 107)
        }
        let hostile = #"{"deep":"# + String(repeating: "[", count: 100_000)
        #expect(try await sentinel.server.request("POST", "/classes/Keep", body: Data(hostile.utf8)).code == 107)
        try await sentinel.expectIntact()
        let atLimit = #"{"deep":"# + String(repeating: "[", count: 63) + String(repeating: "]", count: 63) + "}"
        let accepted = try await sentinel.server.request("POST", "/classes/Deep", body: Data(atLimit.utf8))
        #expect(accepted.status == 201)
    }

    @Test(arguments: [
        ["when": ["__type": "Date"]],
        ["when": ["__type": "Date", "iso": "yesterday"]],
        ["when": ["__type": "Date", "iso": 5]],
        ["ref": ["__type": "Pointer", "className": "Player"]],
        ["ref": ["__type": "Pointer", "objectId": "abc"]],
        ["ref": ["__type": "Pointer", "className": "Player", "objectId": 42.5]],
        ["blob": ["__type": "Bytes"]],
        ["blob": ["__type": "Bytes", "base64": 1]],
        ["place": ["__type": "GeoPoint", "latitude": 1]],
        ["place": ["__type": "GeoPoint", "latitude": "1", "longitude": 2]],
        ["thing": ["__type": "Unicorn"]],
        ["list": [["__type": "Date", "iso": "nope"]]],
    ] as [JSON])
    func wrongTypeShapesAre111(body: JSON) async throws {
        let sentinel = try await Sentinel()
        for response in try await sentinel.sendBoth(body.encoded()) {
            #expect(response.status == 400)
            #expect(response.code == 111)
        }
        try await sentinel.expectIntact()
    }

    @Test(arguments: ["Multiply", "Set", "increment", "Unset", ""])
    func unknownOperationIs108(op: String) async throws {
        let sentinel = try await Sentinel()
        let body: JSON = ["n": ["__op": .string(op), "amount": 1]]
        for response in try await sentinel.sendBoth(body.encoded()) {
            #expect(response.status == 400)
            #expect(response.json == ["code": 108, "error": .string("The \(op) operator is not supported yet.")])
        }
        try await sentinel.expectIntact()
    }

    @Test func malformedOperationsAre107() async throws {
        let sentinel = try await Sentinel()
        for body: JSON in [["n": ["__op": "Increment", "amount": "1"]], ["n": ["__op": "Increment"]],
                           ["tags": ["__op": "Add", "objects": "a"]], ["tags": ["__op": "Remove"]]] {
            let response = try await sentinel.server.request("PUT", sentinel.path, json: body)
            #expect(response.status == 400, "\(body.jsonText)")
            #expect(response.code == 107, "\(body.jsonText)")
        }
        try await sentinel.expectIntact()
    }

    @Test func valueOfAnotherTypeThanRecordedIs111() async throws {
        let sentinel = try await Sentinel()
        let mismatches: [JSON] = [
            ["when": 5], ["when": "2026-11-22T10:00:00.000Z"], ["n": "one"], ["n": true], ["title": 1],
            ["tags": "a"], ["meta": [1]], ["owner": pointer("Team", "t000000001")], ["owner": "p000000001"],
            ["title": ["__op": "Increment", "amount": 1]], ["n": ["__op": "Add", "objects": [1]]],
            ["title": "changed", "n": "mixed with a valid change"],
        ]
        for body in mismatches {
            for response in try await sentinel.sendBoth(body.encoded()) {
                #expect(response.status == 400, "\(body.jsonText)")
                #expect(response.code == 111, "\(body.jsonText)")
            }
        }
        let message = try await sentinel.server.request("PUT", sentinel.path, json: ["when": 5])
        #expect(message.json["error"] == "schema mismatch for Keep.when; expected Date but got Number")
        try await sentinel.expectIntact()
    }

    @Test(arguments: [
        "public", 1, [], ["*": true], ["*": ["read": "yes"]], ["*": ["read", "write"]],
    ] as [JSON])
    func invalidACLIs123(acl: JSON) async throws {
        let sentinel = try await Sentinel()
        let body: JSON = ["title": "changed", "ACL": acl]
        for response in try await sentinel.sendBoth(body.encoded()) {
            #expect(response.status == 400)
            #expect(response.json == ["code": 123, "error": "Invalid ACL."])
        }
        try await sentinel.expectIntact()
    }

    @Test func unknownObjectsAre101() async throws {
        let sentinel = try await Sentinel()
        let server = sentinel.server
        for path in ["/classes/Keep/missing000", "/classes/Nowhere/missing000", "/classes/Keep/\(sentinel.objectId)x"] {
            let responses = [
                try await server.request("GET", path),
                try await server.request("PUT", path, json: ["title": "changed"]),
                try await server.request("DELETE", path),
            ]
            for response in responses {
                #expect(response.status == 404, "\(path)")
                #expect(response.json == ["code": 101, "error": "Object not found."], "\(path)")
            }
        }
        try await sentinel.expectIntact()
    }

    @Test func missingOrWrongApplicationIdIs403() async throws {
        let sentinel = try await Sentinel()
        let server = sentinel.server
        let attempts: [(String, String, JSON?)] = [
            ("GET", "/classes/Keep", nil), ("GET", sentinel.path, nil), ("POST", "/classes/Keep", ["title": "x"]),
            ("PUT", sentinel.path, ["title": "changed"]), ("DELETE", sentinel.path, nil),
            ("POST", "/batch", ["requests": [["method": "DELETE", "path": .string("/parse\(sentinel.path)")]]]),
            ("GET", "/schemas", nil),
        ]
        for (method, path, body) in attempts {
            let missing = try await server.request(method, path, json: body, appId: false)
            #expect(missing.status == 403, "\(method) \(path)")
            #expect(missing.json == ["error": "unauthorized"], "\(method) \(path)")
            for wrong in ["wrong-app", "", "TEST-APP", "test-app-x"] {
                let response = try await server.request(method, path, json: body, headers: ["X-Parse-Application-Id": wrong],
                                                        appId: false)
                #expect(response.status == 403, "\(method) \(path) with app id '\(wrong)'")
                #expect(response.json == ["error": "unauthorized"], "\(method) \(path) with app id '\(wrong)'")
            }
            // The master key does not replace the application id.
            let masterOnly = try await server.request(method, path, json: body, appId: false, master: true)
            #expect(masterOnly.status == 403, "\(method) \(path) with only the master key")
        }
        try await sentinel.expectIntact()
    }
}
