import Foundation
import RoostCore
import RoostTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What idle LiveQuery subscribers cost the server, and that they leave it free for everyone else (issue 20's
/// benchmark, `bench/livequery.py`, at test size). Timed: run alone (TIMED_SUITES), bounds generous.
@Suite(.serialized) struct LiveQueryCapacityTests {
    /// libmicrohttpd 0.9.75 kept each upgraded connection with its 256 KB memory pool, most of it touched: about
    /// 135 KB of resident memory per idle subscriber. Handed off at the upgrade, a subscriber costs a few KB.
    /// Meanwhile new HTTP clients are answered, and every subscriber still gets its events.
    @Test func idleSubscribersCostFewKilobytesAndLeaveTheServerToOthers() async throws {
        guard ConnectionFlood.raiseDescriptorLimit(to: 3_000) else { return }  // Not on a machine this small.
        // The subscribers here do not answer pings: none is sent while the test runs, however slow the machine.
        // 1,000 sockets from one address: past the default per-address LiveQuery cap (100).
        let server = try TestServer(arguments: ["--live-query-max-connections-per-ip", "0"],
                                    environment: ["ROOST_TEST_PING_INTERVAL_MS": "600000"])
        _ = try await server.create("Item", ["room": "setup"])
        let (port, pid, count) = (server.port, server.process.pid, 1_000)
        let (before, after, answers, delivered) = try await onOwnThread {
            // One-time costs first (the database's pooled connections, allocator arenas, code faulted in): what
            // 100 subscribers leave behind is not counted, so the bound is what each further one costs.
            let warmUp = try (0..<100).map { _ in try LiveQueryCapacityTests.subscriber(port: port, from: "127.0.0.3", room: "bench") }
            usleep(200_000)
            let before = LiveQueryCapacityTests.residentKilobytes(pid)
            let subscribers = try (0..<count).map { _ in try LiveQueryCapacityTests.subscriber(port: port, from: "127.0.0.2", room: "bench") }
            usleep(500_000)
            let after = LiveQueryCapacityTests.residentKilobytes(pid)
            let answers = try (0..<100).map { _ in
                try RawConnection(port: port).exchange("GET /parse/health HTTP/1.1\r\nHost: roost\r\nConnection: close\r\n\r\n").head
            }
            let body = #"{"room":"bench"}"#
            let created = try RawConnection(port: port).exchange(
                "POST /parse/classes/Item HTTP/1.1\r\nHost: roost\r\nX-Parse-Application-Id: \(TestServer.applicationId)\r\n"
                + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)").head
            guard created.hasPrefix("HTTP/1.1 201") else { throw RawConnection.Failure(description: created) }
            let delivered = try subscribers.filter { try $0.receive(until: #""op":"create""#).contains(#""room":"bench""#) }.count
            withExtendedLifetime(warmUp) {}
            return (before, after, answers, delivered)
        }
        #expect(before > 0 && after - before <= count * 16, "resident memory grew \(after - before) KB for \(count) subscribers")
        #expect(answers.allSatisfy { $0.hasPrefix("HTTP/1.1 200") }, "\(Set(answers))")
        #expect(delivered == count)
    }

    /// libmicrohttpd turns Nagle's algorithm back on for an upgraded socket: the second of two small frames
    /// (`connected`, then `subscribed`) waited for the client's delayed ACK, 40 ms each time.
    @Test func backToBackFramesAreNotHeldBack() async throws {
        let server = try TestServer()
        let port = server.port
        let seconds = try await onOwnThread {
            try (0..<10).map { _ in
                let started = Date()
                let subscriber = try LiveQueryCapacityTests.subscriber(port: port, from: nil, room: "any")
                withExtendedLifetime(subscriber) {}
                return Date().timeIntervalSince(started)
            }.sorted()
        }
        #expect(seconds[5] < 0.02, "median from upgrade to subscribed: \(seconds[5]) s (all: \(seconds))")
    }

    /// A socket upgraded on `/parse`, connected, and subscribed to Item where `room` is `room`.
    static func subscriber(port: Int, from source: String?, room: String) throws -> RawConnection {
        let connection = try RawConnection(port: port, from: source)
        let (head, _) = try connection.exchange(
            "GET /parse HTTP/1.1\r\nHost: roost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
        guard head.hasPrefix("HTTP/1.1 101") else { throw RawConnection.Failure(description: head) }
        try connection.send(bytes: maskedText(#"{"op":"connect","applicationId":"\#(TestServer.applicationId)"}"#)
            + maskedText(#"{"op":"subscribe","requestId":1,"query":{"className":"Item","where":{"room":"\#(room)"}}}"#))
        _ = try connection.receive(until: #""op":"subscribed""#)
        return connection
    }

    /// A client's text frame (masked, as RFC 6455 requires of clients); payloads under 126 bytes.
    static func maskedText(_ text: String) -> [UInt8] {
        let payload = Array(text.utf8), mask: [UInt8] = [0x12, 0x34, 0x56, 0x78]
        precondition(payload.count < 126)
        return [0x81, 0x80 | UInt8(payload.count)] + mask + payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
    }

    /// The process's resident memory in KB (`VmRSS` of /proc/<pid>/status).
    static func residentKilobytes(_ pid: Int32) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }
}
