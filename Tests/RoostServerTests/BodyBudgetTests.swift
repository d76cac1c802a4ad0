import Foundation
import RoostCore
import RoostTestSupport
import Testing

/// The bound on request bodies held in memory at once (`--max-buffered-body`, `--max-buffered-body-per-ip`), against
/// the real server on loopback: a request without room is answered 503 before its body is read, other addresses
/// still get in, and every reservation comes back, whether its request was answered or its client left mid-body.
///
/// Bodies are sent with `Expect: 100-continue`, so the server says at once whether it took the body (100 Continue)
/// or not (503), with nothing left to timing. Serialized: each test fills the budget of a server of its own, but
/// the waits for closed connections are bounded by wall time.
@Suite(.serialized) struct BodyBudgetTests {
    /// Two 900 KB bodies fill one address's room; three fill the server's.
    static let limits = ["--max-body", "1000000", "--max-buffered-body", "3000000", "--max-buffered-body-per-ip", "2000000"]
    static let refusal = #"{"code":1,"error":"too many request bodies in progress"}"#

    /// 300 rounds of two clients that send a byte of a 900 KB body and leave: 540 MB reserved in all through a 2 MB
    /// room. A reservation not given back on a closed connection would have the address refused from the next round
    /// on. (libmicrohttpd can miss such a close, about one round in 150 here: `RequestState.closedMidBody`.)
    @Test func clientsLeavingMidBodyGiveTheirRoomBack() async throws {
        let server = try TestServer(arguments: Self.limits)
        let port = server.port
        let thirds = try await onOwnThread { () throws -> [String] in
            var thirds: [String] = []
            for _ in 1...300 {
                // The previous round's connections close asynchronously: their room may take a moment to come back.
                let held = try (0..<2).map { _ in try Self.holdBody(port: port, from: "127.0.0.1", length: 900_000) }
                let third = try Self.startBody(port: port, from: "127.0.0.1", length: 900_000)
                thirds.append(third.answer?.head ?? "taken")
                withExtendedLifetime(held) {}
            }
            return thirds
        }
        #expect(thirds.allSatisfy { $0.hasPrefix("HTTP/1.1 503") }, "\(thirds)")
        // All 540 MB given back: a 900 KB body from the address goes through.
        let blob = String(repeating: "x", count: 800_000)
        var status = 0
        for _ in 0..<100 {
            status = try await server.request("POST", "/classes/Done", json: ["blob": .string(blob)]).status
            if status != 503 { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(status == 201)
    }

    /// Bodies whose clients stop sending are ended at the request deadline (408), and their room comes back with them.
    @Test func bodiesEndedAtTheDeadlineGiveTheirRoomBack() async throws {
        let server = try TestServer(arguments: Self.limits + ["--request-timeout", "2"])
        let port = server.port
        let (ends, waited) = try await onOwnThread { () throws -> ([String], Double) in
            let held = try (0..<2).map { _ in try Self.holdBody(port: port, from: "127.0.0.1", length: 900_000) }
            let started = Date()
            let next = try Self.holdBody(port: port, from: "127.0.0.1", length: 900_000)  // Once the deadline has ended those.
            let waited = Date().timeIntervalSince(started)
            let ends = held.map { $0.waitForClose(within: 10).map { String($0.prefix(12)) } ?? "still open" }
            withExtendedLifetime(next) {}
            return (ends, waited)
        }
        #expect(ends == ["HTTP/1.1 408", "HTTP/1.1 408"])
        #expect(waited > 1, "room came back after \(waited) s, before the deadline")
    }

    /// The 503's shape, and who still gets in while one address fills its room and then the server's.
    @Test func aBodyWithoutRoomIsRefusedAtOnceAndOthersGetIn() async throws {
        let server = try TestServer(arguments: Self.limits)
        let port = server.port
        let outcome = try await onOwnThread { () throws -> [String: String] in
            var outcome: [String: String] = [:]
            let held = try (0..<2).map { _ in try Self.holdBody(port: port, from: "127.0.0.1", length: 900_000) }
            // The address's room is full: refused before its body, and the connection closed.
            let refused = try Self.startBody(port: port, from: "127.0.0.1", length: 900_000)
            outcome["head"] = refused.answer?.head
            outcome["body"] = refused.answer?.body
            outcome["closed"] = refused.connection.waitForClose(within: 10) != nil ? "yes" : "no"
            // A small body counts in the server's total only.
            let small = try RawConnection(port: port)
            outcome["small"] = try small.exchange(Self.post(#"{"n":1}"#)).head
            // A body up to 1 MB sent whole is read and dropped: the client reads its 503 and the connection stays usable.
            let drained = try RawConnection(port: port)
            let (drainedHead, drainedBody) = try drained.exchange(Self.post(#"{"a":""# + String(repeating: "x", count: 300_000) + #""}"#))
            outcome["drained"] = drainedHead.components(separatedBy: "\r\n")[0] + " " + drainedBody
            outcome["afterDrained"] = try drained.exchange("GET /parse/health HTTP/1.1\r\nHost: roost\r\n\r\n").head
            // Another address has room of its own, until the server's is full.
            let other = try Self.startBody(port: port, from: "127.0.0.2", length: 900_000)
            outcome["other"] = other.answer?.head ?? "taken"
            outcome["third"] = try Self.startBody(port: port, from: "127.0.0.3", length: 900_000).answer?.head ?? "taken"
            withExtendedLifetime((held, other)) {}
            return outcome
        }
        let head = try #require(outcome["head"])
        #expect(head.hasPrefix("HTTP/1.1 503"), "\(head)")
        for header in ["Retry-After: 1", "Connection: close", "Content-Type: application/json; charset=utf-8"] {
            #expect(head.contains(header), "\(header) in \(head)")
        }
        #expect(outcome["body"] == Self.refusal)
        #expect(outcome["closed"] == "yes")
        #expect(outcome["small"]?.hasPrefix("HTTP/1.1 201") == true, "\(outcome["small"] ?? "")")
        #expect(outcome["drained"] == "HTTP/1.1 503 Service Unavailable " + Self.refusal)
        #expect(outcome["afterDrained"]?.hasPrefix("HTTP/1.1 200") == true, "\(outcome["afterDrained"] ?? "")")
        #expect(outcome["other"] == "taken")
        #expect(outcome["third"]?.hasPrefix("HTTP/1.1 503") == true, "the server's room is full: \(outcome["third"] ?? "")")
        #expect(try await server.request("GET", "/health").status == 200)
    }

    /// A chunked body (no declared length) reserves as it grows: one that outgrows the room left is dropped and answered
    /// 503 once sent, on a connection that stays usable.
    @Test func aChunkedBodyOutgrowingTheRoomIsRefused() async throws {
        let server = try TestServer(arguments: Self.limits)
        let port = server.port
        let (answer, after) = try await onOwnThread { () throws -> (String, String) in
            let held = try (0..<2).map { _ in try Self.holdBody(port: port, from: "127.0.0.1", length: 900_000) }
            let chunked = try RawConnection(port: port)
            try chunked.send("POST /parse/classes/Chunked HTTP/1.1\r\nHost: roost\r\nX-Parse-Application-Id: \(TestServer.applicationId)\r\n"
                + "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
            let chunk = String(repeating: " ", count: 50_000)
            for _ in 0..<8 { try chunked.send(String(chunk.utf8.count, radix: 16) + "\r\n" + chunk + "\r\n") }
            let (head, body) = try chunked.exchange("0\r\n\r\n")
            let after = try chunked.exchange("GET /parse/health HTTP/1.1\r\nHost: roost\r\n\r\n").head
            withExtendedLifetime(held) {}
            return (head.components(separatedBy: "\r\n")[0] + " " + body, after)
        }
        #expect(answer == "HTTP/1.1 503 Service Unavailable " + Self.refusal)
        #expect(after.hasPrefix("HTTP/1.1 200"), "\(after)")
    }

    /// File uploads over 1 MB go to disk as they arrive (`BodySpool`) and still count in the budget: one held upload
    /// of 2.5 MB leaves no room for a second in a 4 MB budget. A chunked one arrives whole through the spool file, and
    /// the spool files leave nothing in the data directory.
    @Test func uploadsSpooledToDiskCountInTheBudgetAndArriveWhole() async throws {
        let server = try TestServer(arguments: ["--max-body", "3000000", "--max-buffered-body", "4000000", "--max-buffered-body-per-ip", "0"])
        let port = server.port
        let upload = "/parse/files/held.bin"
        let master = "X-Parse-Master-Key: \(TestServer.masterKey)\r\n"
        let second = try await onOwnThread { () throws -> String in
            let held = try Self.holdBody(port: port, from: "127.0.0.1", length: 2_500_000, path: upload, headers: master)
            let second = try Self.startBody(port: port, from: "127.0.0.1", length: 2_500_000, path: upload, headers: master)
            withExtendedLifetime(held) {}
            return second.answer.map { $0.head.components(separatedBy: "\r\n")[0] + " " + $0.body } ?? "taken"
        }
        #expect(second == "HTTP/1.1 503 Service Unavailable " + Self.refusal)

        let bytes = [UInt8](PostgresFileTests.distinctBytes(2_200_000))
        let (head, body) = try await onOwnThread { () throws -> (String, String) in
            var answer = (head: "", body: "")
            for _ in 0..<100 {  // The held upload's room comes back once its connection's close is seen.
                let chunked = try RawConnection(port: port)
                try chunked.send("POST /parse/files/chunked.bin HTTP/1.1\r\nHost: roost\r\nX-Parse-Application-Id: \(TestServer.applicationId)\r\n"
                    + master + "Content-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
                for start in stride(from: 0, to: bytes.count, by: 100_000) {
                    let piece = bytes[start..<min(start + 100_000, bytes.count)]
                    try chunked.send(String(piece.count, radix: 16) + "\r\n")
                    try chunked.send(bytes: Array(piece) + Array("\r\n".utf8))
                }
                answer = try chunked.exchange("0\r\n\r\n")
                if !answer.head.hasPrefix("HTTP/1.1 503") { break }
                usleep(200_000)
            }
            return answer
        }
        #expect(head.hasPrefix("HTTP/1.1 201"), "\(head) \(body)")
        let name = try #require((try? JSONParser.parse(body))?["name"]?.stringValue)
        let download = try await server.request("GET", "/files/\(TestServer.applicationId)/\(name)", appId: false)
        #expect(download.body == Data(bytes))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: server.dataDirectory.path).filter { $0.hasPrefix(".upload-") }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }

    /// A POST of `json` with its Content-Length, as a client sends it whole.
    static func post(_ json: String) -> String {
        "POST /parse/classes/Budget HTTP/1.1\r\nHost: roost\r\nX-Parse-Application-Id: \(TestServer.applicationId)\r\n"
            + "Content-Type: application/json\r\nContent-Length: \(json.utf8.count)\r\n\r\n" + json
    }

    /// Sends the head of a `length`-byte POST from `source` with `Expect: 100-continue`, and the body's first byte when
    /// the server takes it. `answer` is nil when it did (the body's room is reserved while the connection lives), else
    /// the server's answer. Blocking.
    static func startBody(port: Int, from source: String, length: Int, path: String = "/parse/classes/Held",
                          headers: String = "") throws -> (connection: RawConnection, answer: (head: String, body: String)?) {
        let connection = try RawConnection(port: port, from: source)
        try connection.send("POST \(path) HTTP/1.1\r\nHost: roost\r\nX-Parse-Application-Id: \(TestServer.applicationId)\r\n" + headers
            + "Content-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: \(length)\r\n\r\n")
        let answer = try connection.receive()
        guard answer.head.hasPrefix("HTTP/1.1 100") else { return (connection, answer) }
        try connection.send("{")
        return (connection, nil)
    }

    /// `startBody` until the server takes the body (within 20 s: connections closed just before give their room back
    /// asynchronously). Blocking.
    static func holdBody(port: Int, from source: String, length: Int, path: String = "/parse/classes/Held",
                         headers: String = "") throws -> RawConnection {
        let deadline = Date().addingTimeInterval(20)
        while true {
            let (connection, answer) = try startBody(port: port, from: source, length: length, path: path, headers: headers)
            guard let answer else { return connection }
            guard Date() < deadline else { throw RawConnection.Failure(description: "no room after 20 s: \(answer.head)") }
            usleep(100_000)
        }
    }
}
