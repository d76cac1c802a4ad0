import Foundation
import RoostCore
import RoostTestSupport

/// One LiveQuery WebSocket to a test server, speaking Parse's messages as JSON, for tests that read best as the
/// messages themselves. Frames go through the codec the server uses (`WebSocketFrame`, `WebSocketReader`); pings
/// are answered while waiting. Reads run on a thread of their own (`onOwnThread`), never on the cooperative pool.
final class LiveSocket: @unchecked Sendable {
    let connection: RawConnection
    private var reader = WebSocketReader(maxMessageBytes: 16 << 20, role: .client)

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Opens `path` on the server and upgrades it to a WebSocket.
    init(_ server: TestServer, path: String = "/parse") throws {
        connection = try RawConnection(port: server.port)
        try connection.send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\nUpgrade: websocket\r\n"
            + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
        var received: [UInt8] = []
        let end = Array("\r\n\r\n".utf8)
        while received.firstRange(of: end) == nil {
            guard let bytes = try connection.receiveBytes(within: 10) else { throw Failure(description: "no answer to the upgrade") }
            received += bytes
        }
        let head = received.firstRange(of: end)!
        guard String(decoding: received[..<head.lowerBound], as: UTF8.self).hasPrefix("HTTP/1.1 101") else {
            throw Failure(description: "not upgraded: \(String(decoding: received, as: UTF8.self))")
        }
        reader.append(received[head.upperBound...])
    }

    /// Sends one message, masked as a client must.
    func send(_ message: JSON) throws {
        try connection.send(bytes: WebSocketFrame.text(message.jsonText, mask: WebSocketFrame.randomMask()))
    }

    /// The next message within `seconds`, or nil when none came. - Throws: when the server closed the socket.
    func next(within seconds: Double = 10) async throws -> JSON? {
        try await onOwnThread { try self.read(within: seconds) }
    }

    /// Every message that arrives until `seconds` pass without one (events that must not come, say).
    func drain(quiet seconds: Double = 0.5) async throws -> [JSON] {
        try await onOwnThread {
            var all: [JSON] = []
            while let message = try self.read(within: seconds) { all.append(message) }
            return all
        }
    }

    /// `connect` with the test app's id (and `fields`, e.g. a session token); returns the answer.
    @discardableResult
    func connect(_ fields: [String: JSON] = [:]) async throws -> JSON? {
        try send(.object(fields.merging(["op": "connect", "applicationId": .string(TestServer.applicationId)]) { $1 }))
        return try await next()
    }

    /// `subscribe` to `query` (`className`, `where`, `keys`, `watch`); returns the answer (`subscribed` or `error`).
    @discardableResult
    func subscribe(_ requestId: Int, _ query: JSON, sessionToken: String? = nil) async throws -> JSON? {
        var message: [String: JSON] = ["op": "subscribe", "requestId": .number(Double(requestId)), "query": query]
        if let sessionToken { message["sessionToken"] = .string(sessionToken) }
        try send(.object(message))
        return try await next()
    }

    /// The close code the server sent within `seconds` (nil when it did not close).
    func closeCode(within seconds: Double = 10) async throws -> UInt16? {
        try await onOwnThread {
            let end = Date().addingTimeInterval(seconds)
            while Date() < end {
                while let event = self.reader.next() {
                    if case .close(let code, _) = event { return code }
                }
                do {
                    guard let bytes = try self.connection.receiveBytes(within: 0.2) else { continue }
                    self.reader.append(bytes)
                } catch {
                    return nil
                }
            }
            return nil
        }
    }

    private func read(within seconds: Double) throws -> JSON? {
        let end = Date().addingTimeInterval(seconds)
        while true {
            while let event = reader.next() {
                switch event {
                case .text(let text): return try JSONParser.parse(text)
                case .ping(let payload): try connection.send(bytes: WebSocketFrame.encode(.pong, payload, mask: WebSocketFrame.randomMask()))
                case .binary, .pong: continue
                case .close(let code, let reason): throw Failure(description: "closed by the server: \(code.map(String.init) ?? "-") \(reason)")
                case .fail(_, let reason): throw Failure(description: "broken frame from the server: \(reason)")
                }
            }
            let left = end.timeIntervalSinceNow
            guard left > 0, let bytes = try connection.receiveBytes(within: left) else { return nil }
            reader.append(bytes)
        }
    }
}
