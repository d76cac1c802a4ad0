import Foundation
import RoostCore
import RoostTestSupport
import Testing

/// Parse Server's spec/RateLimit.spec.js over REST, with `--rate-limit` for Parse's `rateLimit` option and a webhook for
/// each cloud function the spec defines. The cases about Cloud Code validators (`Parse.Cloud.define(..., {rateLimit})`,
/// `beforeSave`/`beforeFind`/`beforeDelete`/`beforeLogin` limits, calls made by Cloud Code) and the Redis store have no
/// Roost counterpart.
@Suite struct RateLimitSpecTests {
    private static let tooMany = "Too many requests"

    /// One rule as the spec writes it (`errorResponseMessage` and `includeInternalRequests` set, as in every case), with
    /// a window of 10 minutes instead of its 10 s: on a loaded machine the second request may come more than 10 s later.
    private static func rule(_ path: String, _ extra: [String: JSON] = [:]) -> JSON {
        var members: [String: JSON] = ["requestPath": .string(path), "requestTimeWindow": 600_000, "requestCount": 1,
                                       "errorResponseMessage": .string(tooMany), "includeInternalRequests": true]
        members.merge(extra) { $1 }
        return .object(members)
    }

    /// A server with `rules` and a cloud function `test` (a webhook answering `Abc`).
    private static func server(_ rules: JSON) throws -> (TestServer, WebhookReceiver) {
        let server = try TestServer(arguments: fastHashing + ["--rate-limit", String(decoding: rules.encoded(), as: UTF8.self)])
        let receiver = try WebhookReceiver(reply: #"{"success":"Abc"}"#)
        return (server, receiver)
    }

    private static func defineTest(_ server: TestServer, _ receiver: WebhookReceiver) async throws {
        let hook = try await server.request("POST", "/hooks/functions", json: ["functionName": "test", "url": .string(receiver.url)],
                                            master: true)
        #expect(hook.status == 200 || hook.status == 201, "\(hook.text)")
    }

    private static func run(_ server: TestServer, token: String? = nil, master: Bool = false) async throws -> TestResponse {
        try await server.request("POST", "/functions/test", json: [:], headers: token.map { ["X-Parse-Session-Token": $0] } ?? [:],
                                 master: master)
    }

    private static func expectAnswered(_ response: TestResponse, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.status == 200 && response.json == ["result": "Abc"], "\(response.text)", sourceLocation: sourceLocation)
    }

    private static func expectLimited(_ response: TestResponse, _ message: String = tooMany,
                                      sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.status == 429, "\(response.status) \(response.text)", sourceLocation: sourceLocation)
        #expect(response.json == ["code": 100, "error": .string(message)], "\(response.text)", sourceLocation: sourceLocation)
    }

    private static func signUp(_ server: TestServer, _ username: String) async throws -> String {
        let response = try await server.request("POST", "/users", json: ["username": .string(username), "password": "password"])
        return try #require(response.json["sessionToken"]?.stringValue, "\(response.text)")
    }

    // spec: RateLimit.spec.js: can limit cloud functions
    // spec: RateLimit.spec.js: can limit cloud functions with user session token
    @Test func limitsCloudFunctions() async throws {
        let (server, receiver) = try Self.server([Self.rule("/functions/*")])
        try await Self.defineTest(server, receiver)
        Self.expectAnswered(try await Self.run(server))
        Self.expectLimited(try await Self.run(server))
        #expect(receiver.requests.count == 1)

        let (second, secondReceiver) = try Self.server([Self.rule("/functions/*")])
        try await Self.defineTest(second, secondReceiver)
        let token = try await Self.signUp(second, "username")
        Self.expectAnswered(try await Self.run(second, token: token))
        Self.expectLimited(try await Self.run(second, token: token))
    }

    // spec: RateLimit.spec.js: can add global limit
    @Test func aGlobalRuleLimitsEveryPath() async throws {
        let (server, receiver) = try Self.server(Self.rule("*"))
        let hook = try await server.request("POST", "/hooks/functions", json: ["functionName": "test", "url": .string(receiver.url)],
                                            master: true)
        #expect(hook.status == 200, "\(hook.text)")  // The master key is not counted.
        Self.expectAnswered(try await Self.run(server))
        Self.expectLimited(try await Self.run(server))
        Self.expectLimited(try await server.request("POST", "/classes/Test", json: [:]))
    }

    // spec: RateLimit.spec.js: can skip with masterKey
    // spec: RateLimit.spec.js: should run with masterKey
    @Test func theMasterKeyCountsOnlyWhenIncluded() async throws {
        let (server, receiver) = try Self.server([Self.rule("/functions/*")])
        try await Self.defineTest(server, receiver)
        Self.expectAnswered(try await Self.run(server, master: true))
        Self.expectAnswered(try await Self.run(server, master: true))

        let (counted, countedReceiver) = try Self.server([Self.rule("/functions/*", ["includeMasterKey": true])])
        try await Self.defineTest(counted, countedReceiver)
        Self.expectAnswered(try await Self.run(counted, master: true))
        Self.expectLimited(try await Self.run(counted))
    }

    // spec: RateLimit.spec.js: can limit saving objects
    // spec: RateLimit.spec.js: can set method to post
    // spec: RateLimit.spec.js: can set method to get
    // spec: RateLimit.spec.js: can set method to delete
    @Test func limitsWritesAndReadsByMethod() async throws {
        let (saving, _) = try Self.server([Self.rule("/classes/*")])
        let created = try await saving.request("POST", "/classes/Test", json: [:])
        #expect(created.status == 201)
        let id = try #require(created.json["objectId"]?.stringValue)
        Self.expectLimited(try await saving.request("PUT", "/classes/Test/\(id)", json: ["a": 1]))

        let (posts, _) = try Self.server([Self.rule("/classes/*", ["requestMethods": "POST"])])
        let first = try await posts.request("POST", "/classes/Test", json: [:])
        let firstId = try #require(first.json["objectId"]?.stringValue)
        #expect(try await posts.request("PUT", "/classes/Test/\(firstId)", json: ["a": 1]).status == 200)
        Self.expectLimited(try await posts.request("POST", "/classes/Test", json: [:]))

        // The JS SDK's find is a POST with `_method: GET`: counted as the GET it is; so is a plain GET with a query string.
        let (gets, _) = try Self.server([Self.rule("/classes/Test", ["requestMethods": "GET"])])
        let saved = try await gets.request("POST", "/classes/Test", json: [:])
        let savedId = try #require(saved.json["objectId"]?.stringValue)
        #expect(try await gets.request("PUT", "/classes/Test/\(savedId)", json: ["a": 1]).status == 200)
        #expect(try await gets.request("POST", "/classes/Test", json: ["_method": "GET", "limit": 1]).status == 200)
        Self.expectLimited(try await gets.request("POST", "/classes/Test", json: ["_method": "GET", "limit": 1]))
        Self.expectLimited(try await gets.request("GET", "/classes/Test", query: ["limit": "1"]))

        let (deletes, _) = try Self.server([Self.rule("/classes/Test/*", ["requestMethods": "DELETE"])])
        let doomed = try await deletes.request("POST", "/classes/Test", json: [:])
        let doomedId = try #require(doomed.json["objectId"]?.stringValue)
        #expect(try await deletes.request("DELETE", "/classes/Test/\(doomedId)").status == 200)
        Self.expectLimited(try await deletes.request("DELETE", "/classes/Test/\(doomedId)"))
    }

    // spec: RateLimit.spec.js: can use global zone
    // spec: RateLimit.spec.js: can use session zone
    // spec: RateLimit.spec.js: can use user zone
    @Test func zonesCountByAddressSessionUserOrEveryone() async throws {
        func raw(_ server: TestServer, from source: String) throws -> (head: String, body: String) {
            let connection = try RawConnection(port: server.port, from: source)
            return try connection.exchange("GET /parse/classes/Test HTTP/1.1\r\nHost: localhost\r\n"
                + "X-Parse-Application-Id: \(TestServer.applicationId)\r\n\r\n")
        }
        // By address (the default), 127.0.0.2 and 127.0.0.3 are two clients; with the global zone, one.
        let (byAddress, _) = try Self.server(Self.rule("*"))
        #expect(try raw(byAddress, from: "127.0.0.2").head.hasPrefix("HTTP/1.1 200"))
        #expect(try raw(byAddress, from: "127.0.0.3").head.hasPrefix("HTTP/1.1 200"))
        let again = try raw(byAddress, from: "127.0.0.2")
        #expect(again.head.hasPrefix("HTTP/1.1 429") && again.body == #"{"code":100,"error":"Too many requests"}"#, "\(again)")
        let (global, _) = try Self.server(Self.rule("*", ["zone": "global"]))
        #expect(try raw(global, from: "127.0.0.2").head.hasPrefix("HTTP/1.1 200"))
        let other = try raw(global, from: "127.0.0.3")
        #expect(other.head.hasPrefix("HTTP/1.1 429") && other.body == #"{"code":100,"error":"Too many requests"}"#, "\(other)")

        // By session: a new log-in is a new count. By user: it is not.
        for (zone, newSessionCounts) in [("session", false), ("user", true)] {
            let (server, receiver) = try Self.server(Self.rule("/functions/*", ["zone": .string(zone)]))
            try await Self.defineTest(server, receiver)
            let token = try await Self.signUp(server, "username")
            Self.expectAnswered(try await Self.run(server, token: token))
            Self.expectLimited(try await Self.run(server, token: token))
            let login = try await server.request("POST", "/login", json: ["username": "username", "password": "password"])
            let newToken = try #require(login.json["sessionToken"]?.stringValue, "\(login.text)")
            let afterLogin = try await Self.run(server, token: newToken)
            if newSessionCounts { Self.expectLimited(afterLogin) } else { Self.expectAnswered(afterLogin) }
        }
    }

    /// Parse's `includeInternalRequests`: without it, requests from 127.0.0.1 are not counted (nor is anything else
    /// outside the rule's path); the default message is Parse's.
    @Test func internalRequestsAndOtherPathsAreNotCounted() async throws {
        let rules: JSON = [["requestPath": "/classes/:className", "requestTimeWindow": 600_000, "requestCount": 1]]
        let (server, _) = try Self.server(rules)
        for _ in 0..<3 { #expect(try await server.request("GET", "/classes/Test").status == 200) }
        let connection = try RawConnection(port: server.port, from: "127.0.0.2")
        let request = "GET /parse/classes/Test HTTP/1.1\r\nHost: localhost\r\nX-Parse-Application-Id: \(TestServer.applicationId)\r\n\r\n"
        #expect(try connection.exchange(request).head.hasPrefix("HTTP/1.1 200"))
        let limited = try connection.exchange(request)
        #expect(limited.head.hasPrefix("HTTP/1.1 429") && limited.body == #"{"code":100,"error":"Too many requests."}"#, "\(limited)")
        let elsewhere = "GET /parse/classes/Test/abc HTTP/1.1\r\nHost: localhost\r\nX-Parse-Application-Id: \(TestServer.applicationId)\r\n\r\n"
        #expect(try connection.exchange(elsewhere).head.hasPrefix("HTTP/1.1 404"))  // `:className` is one segment.
    }

    // spec: RateLimit.spec.js: can validate rateLimit
    @Test func invalidRulesAreRefusedAtStartWithParsesMessages() throws {
        let cases: [(String, String)] = [
            (#""a""#, "rateLimit must be an array or object"),
            (#"["a"]"#, "rateLimit must be an array of objects"),
            (#"[{"requestPath": []}]"#, "rateLimit.requestPath must be a string"),
            (#"[{"requestTimeWindow": [], "requestPath": "a"}]"#, "rateLimit.requestTimeWindow must be a number"),
            (#"[{"requestPath": "a", "requestTimeWindow": 1000, "requestCount": 3, "zone": "abc"}]"#,
             "rateLimit.zone must be one of global, session, user, or ip"),
            (#"[{"includeInternalRequests": [], "requestTimeWindow": 1000, "requestCount": 3, "requestPath": "a"}]"#,
             "rateLimit.includeInternalRequests must be a boolean"),
            (#"[{"requestCount": [], "requestTimeWindow": 1000, "requestPath": "a"}]"#, "rateLimit.requestCount must be a number"),
            (#"[{"errorResponseMessage": [], "requestTimeWindow": 1000, "requestCount": 3, "requestPath": "a"}]"#,
             "rateLimit.errorResponseMessage must be a string"),
            (#"[{"requestCount": 3, "requestPath": "abc"}]"#, "rateLimit.requestTimeWindow must be defined"),
            (#"[{"requestTimeWindow": 3, "requestPath": "abc"}]"#, "rateLimit.requestCount must be defined"),
            (#"[{"requestTimeWindow": 3, "requestCount": "abc"}]"#, "rateLimit.requestPath must be defined"),
            (#"[{"requestTimeWindow": 3, "requestCount": 1, "path": "abc", "requestPath": "a"}]"#, #"Invalid rate limit option "path""#),
        ]
        for (value, message) in cases {
            let attempt = try StartAttempt(["--rate-limit", value])
            #expect(!attempt.started, "\(value)")
            #expect(attempt.log.contains("invalid value for --rate-limit: \(message)"), "\(value): \(attempt.log)")
        }
    }
}
