import Foundation
import RoostCore
import RoostTestSupport
import Testing

/// LiveQuery's WebSocket end to end: the real binary, and a real client library (Python's `websockets`,
/// Debian's python3-websockets, which `make test` installs) or raw sockets for frames a library will not send.
@Suite struct LiveQueryWebSocketTests {
    @Test func speaksParsesLiveQueryProtocolOnTheMountAndOnTheRoot() async throws {
        let server = try TestServer()
        let seen = try await Probe.run("protocol", server).arrayValue ?? []
        try #require(seen.count == 24)
        for (offset, path) in [(0, "/parse"), (12, "/")] {
            let replies = Array(seen[offset..<(offset + 12)])
            let clientId = replies[4]["clientId"]?.stringValue ?? ""
            #expect(replies[0] == Probe.error(2, "Can not find this client, make sure you connect to server before subscribing"), "\(path)")
            #expect(replies[1] == Probe.error(4, "Key in request is not valid"))
            #expect(replies[2] == Probe.error(1, "Additional properties not allowed"))
            #expect(replies[3] == Probe.error(1, "Missing required property: applicationId"))
            #expect(replies[4] == ["op": "connected", "clientId": .string(clientId), "installationId": "inst-1"])
            #expect(clientId.count == 36)  // A UUID, as parse-server's uuidv4().
            // Roost adds `seq` (the change log's head; nothing was written yet), which Parse clients ignore.
            #expect(replies[5] == ["op": "subscribed", "clientId": .string(clientId), "installationId": "inst-1", "requestId": 1, "seq": 0])
            #expect(replies[6] == Probe.error(1, "Array is too short (0), minimum 1"))
            #expect(replies[7] == ["op": "subscribed", "clientId": .string(clientId), "installationId": "inst-1", "requestId": 1, "seq": 0])
            #expect(replies[8] == ["op": "unsubscribed", "clientId": .string(clientId), "installationId": "inst-1", "requestId": 1])
            #expect(replies[9] == Probe.error(2, "Cannot find subscription with clientId \(clientId) subscriptionId 1. "
                                                  + "Make sure you subscribe to live query server before unsubscribing."))
            // parse-server's newer `query` op, for a subscription that is gone.
            #expect(replies[10] == ["op": "error", "code": 2, "error": "Subscription not found for requestId 3", "reconnect": true, "requestId": 3])
            // The message that is not JSON was ignored; the next answer is the bad session's.
            #expect(replies[11] == ["op": "error", "code": 209, "error": "Invalid session token", "reconnect": false, "requestId": nil])
        }
    }

    @Test func fragmentedMessagesArriveWholeAndPingsAreAnswered() async throws {
        let server = try TestServer()
        let result = try await Probe.run("fragmented", server)
        #expect(result == ["op": "connected", "installationId": 3000, "pong": true])
    }

    @Test func aMessageOverTheLimitClosesWith1009() async throws {
        let server = try TestServer()
        let result = try await Probe.run("oversized", server)
        #expect(result == ["code": 1009, "after": "connected"])
    }

    @Test func framesThatBreakTheProtocolCloseWithTheirCode() async throws {
        let server = try TestServer()
        let result = try await Probe.run("unmasked", server)
        let expected: [String: Double] = ["unmasked": 1002, "bad_utf8": 1007, "long_ping": 1002, "fragmented_ping": 1002, "binary": 1003]
        for (name, code) in expected {
            #expect(result[name]?["status"] == "HTTP/1.1 101 Switching Protocols", "\(name)")
            #expect(result[name]?["code"] == .number(code), "\(name)")
            #expect(result[name]?["closed"] == true, "\(name): the server closes after its close frame")
        }
    }

    @Test func socketsCountAgainstTheConnectionCapAndGiveTheirSlotBackWhenDropped() async throws {
        let server = try TestServer(arguments: ["--max-connections-per-ip", "5"])
        let result = try await Probe.run("abrupt", server, "5")
        #expect(result["first"] == .array(Array(repeating: "HTTP/1.1 101 Switching Protocols", count: 5)))
        #expect(result["overCap"] == "HTTP/1.1 503 Service Unavailable")
        #expect(result["second"] == .array(Array(repeating: "HTTP/1.1 101 Switching Protocols", count: 5)))
        let health = try await server.request("GET", "/health")
        #expect(health.status == 200)
    }

    @Test func manyIdleSocketsCostNoThreads() async throws {
        // Pings every 2 s: a busy machine may hold the client's event loop for a few hundred milliseconds.
        let server = try TestServer(arguments: ["--live-query-max-connections-per-ip", "0"],
                                    environment: ["ROOST_TEST_PING_INTERVAL_MS": "2000"])
        let result = try await Probe.run("idle", server, String(server.process.pid), "500")
        #expect(result["connected"] == 500)
        #expect(result["alive"] == 500, "clients that answer pings stay")
        let before = result["before"]?.numberValue ?? 0, during = result["during"]?.numberValue ?? .infinity
        #expect(during <= before + 2, "threads: \(before) before, \(during) with 500 sockets open")
    }

    @Test func theHTTPDeadlinesDoNotEndAnUpgradedSocket() async throws {
        let server = try TestServer(arguments: ["--headers-timeout", "1", "--request-timeout", "2"])
        let result = try await Probe.run("quiet", server, "4")
        #expect(result == ["first": "connected", "after": "subscribed"])
    }

    @Test func aFloodOfMessagesIsAnsweredInOrderWhileOthersAreServed() async throws {
        // Past 32 messages in the worker's queue, the hub stops reading the flooding socket until some are
        // handled: the rest waits in the socket, and the other client's connect is not stuck behind 3,000.
        let server = try TestServer()
        let result = try await Probe.run("flood", server, "3000")
        #expect(result == ["inOrder": true, "answered": 3000, "other": "connected"])
    }

    @Test func aClientThatMissesAPongIsDropped() async throws {
        let server = try TestServer(environment: ["ROOST_TEST_PING_INTERVAL_MS": "300"])
        let result = try await Probe.run("silent", server)
        #expect(result["pings"] == 1, "one ping, unanswered, then the socket closes")
        #expect((result["seconds"]?.numberValue ?? 99) < 10)
    }

    @Test func stoppingTheServerClosesEverySocketWith1001AndExitsCleanly() async throws {
        let server = try TestServer()
        let result = try await Probe.run("stop", server, String(server.process.pid))
        #expect(result == ["codes": [1001, 1001, 1001]])
        #expect(server.stop() == 0)
    }

    @Test func badHandshakesAreRefused() async throws {
        let server = try TestServer()
        let connection = try RawConnection(port: server.port)
        let wrongVersion = try connection.exchange(
            "GET /parse HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 8\r\n\r\n")
        #expect(wrongVersion.head.hasPrefix("HTTP/1.1 426"))
        #expect(wrongVersion.head.lowercased().contains("sec-websocket-version: 13"))
        let badKey = try RawConnection(port: server.port).exchange(
            "GET /parse HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: short\r\nSec-WebSocket-Version: 13\r\n\r\n")
        #expect(badKey.head.hasPrefix("HTTP/1.1 400"))
        let accepted = try RawConnection(port: server.port).exchange(
            "GET /parse HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: keep-alive, Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
        #expect(accepted.head.hasPrefix("HTTP/1.1 101"))
        #expect(accepted.head.contains("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo="))  // RFC 6455 §1.3's example.
    }
}

/// Runs `Tests/LiveQuery/websocket_probe.py` against a server and returns the JSON line it prints.
enum Probe {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("LiveQuery/websocket_probe.py").path

    /// Debian's python3 has python3-websockets; a python3 earlier on the PATH (pyenv) may not.
    static var python: String {
        FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") ? "/usr/bin/python3" : "python3"
    }

    static func run(_ scenario: String, _ server: TestServer, _ extra: String...) async throws -> JSON {
        let arguments = [script, scenario, String(server.port)] + extra
        let (status, output) = try await onOwnThread { try ChildProcess.run(python, arguments) }
        guard status == 0, let line = output.split(separator: "\n").last(where: { $0.hasPrefix("{") || $0.hasPrefix("[") }) else {
            Issue.record("websocket_probe.py \(scenario) exited \(status): \(output)\n--- server log ---\n\(server.log().suffix(2000))")
            return .null
        }
        return try JSONParser.parse(String(line))
    }

    static func error(_ code: Int, _ message: String) -> JSON {
        ["op": "error", "code": .number(Double(code)), "error": .string(message), "reconnect": true, "requestId": nil]
    }
}
