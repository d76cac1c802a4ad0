import Foundation
import RoostCore
#if canImport(Glibc)
import Glibc
#endif

/// A WebSocket client (RFC 6455) on a plain TCP socket, for LiveQuery. FoundationNetworking's
/// `URLSessionWebSocketTask` fails on Debian 12 ("WebSockets not supported by libcurl": its libcurl 7.88 is built
/// without ws), so the SDK speaks the protocol itself with the codec the server uses (`WebSocketReader`,
/// `WebSocketFrame` in RoostCore). `ws://` only: put TLS in front of the server (`wss://` is refused, not downgraded).
///
/// Blocking: `connect` opens the socket and does the handshake; `receive()` returns the next text message (pings are
/// answered inside), or throws when the connection ends. `send` may be called from any thread.
final class WebSocketClient: @unchecked Sendable {
    enum Failure: Error, CustomStringConvertible {
        case unsupported(String)
        case connect(String)
        case handshake(String)
        case closed(String)

        var description: String {
            switch self {
            case .unsupported(let why), .connect(let why), .handshake(let why), .closed(let why): why
            }
        }
    }

    private let descriptor: Int32
    private var reader: WebSocketReader
    private let sendLock = NSLock()
    private var isClosed = false

    /// Opens `url` (`ws://` or `http://`, a path) and upgrades it; fails within about `timeout` seconds.
    /// - Parameter idleTimeout: a connection silent this long is taken for dead (the server pings every 10 s).
    init(url: URL, timeout: TimeInterval, idleTimeout: TimeInterval = 30, maxMessageBytes: Int = 16 << 20) throws {
        guard let scheme = url.scheme?.lowercased(), scheme == "ws" || scheme == "http" else {
            throw Failure.unsupported("LiveQuery needs a ws:// or http:// server URL (no TLS in the SDK's WebSocket client): \(url.absoluteString)")
        }
        guard let host = url.host, !host.isEmpty else { throw Failure.connect("no host in \(url.absoluteString)") }
        let port = url.port ?? 80
        descriptor = try Self.openSocket(host: host, port: port, timeout: timeout)
        reader = WebSocketReader(maxMessageBytes: maxMessageBytes, role: .client)
        do {
            Self.setTimeout(descriptor, SO_SNDTIMEO, timeout)
            Self.setTimeout(descriptor, SO_RCVTIMEO, timeout)
            try handshake(host: host, port: port, path: url.path.isEmpty ? "/" : url.path)
            Self.setTimeout(descriptor, SO_RCVTIMEO, idleTimeout)
        } catch {
            Glibc.close(descriptor)
            throw error
        }
    }

    deinit { Glibc.close(descriptor) }

    /// Sends one text message (masked, as a client must).
    func send(_ text: String) throws {
        try write(WebSocketFrame.text(text, mask: WebSocketFrame.randomMask()))
    }

    /// The next text message. - Throws: `Failure.closed` when the peer closed, the socket failed or went silent.
    func receive() throws -> String {
        while true {
            while let event = reader.next() {
                switch event {
                case .text(let text): return text
                case .binary: continue  // LiveQuery sends text only.
                case .ping(let payload): try write(WebSocketFrame.encode(.pong, payload, mask: WebSocketFrame.randomMask()))
                case .pong: continue
                case .close(let code, let reason):
                    try? write(WebSocketFrame.close(.normal, mask: WebSocketFrame.randomMask()))
                    shutdown()
                    throw Failure.closed("closed by the server (\(code.map(String.init) ?? "no code")\(reason.isEmpty ? "" : ": " + reason))")
                case .fail(let code, let reason):
                    try? write(WebSocketFrame.close(code, reason: reason, mask: WebSocketFrame.randomMask()))
                    shutdown()
                    throw Failure.closed("the server broke the protocol: \(reason)")
                }
            }
            var buffer = [UInt8](repeating: 0, count: 16 * 1024)
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                reader.append(buffer[0..<count])
            } else {
                let why = count == 0 ? "the connection was closed" : (errno == EAGAIN || errno == EWOULDBLOCK)
                    ? "no answer from the server (not even a ping)" : String(cString: strerror(errno))
                throw Failure.closed(why)
            }
        }
    }

    /// Ends the connection: a `receive()` blocked on another thread returns at once with `Failure.closed`.
    func shutdown() {
        sendLock.withLock {
            isClosed = true
            _ = Glibc.shutdown(descriptor, Int32(SHUT_RDWR))
        }
    }

    // MARK: Internals

    private func write(_ bytes: [UInt8]) throws {
        try sendLock.withLock {
            guard !isClosed else { throw Failure.closed("the connection is closed") }
            var offset = 0
            while offset < bytes.count {
                let sent = bytes[offset...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if sent < 0, errno == EINTR { continue }
                guard sent > 0 else { throw Failure.closed("cannot send: \(String(cString: strerror(errno)))") }
                offset += sent
            }
        }
    }

    private func handshake(host: String, port: Int, path: String) throws {
        var keyBytes = [UInt8](repeating: 0, count: 16)
        for index in keyBytes.indices { keyBytes[index] = UInt8.random(in: 0...255) }
        let key = Base64.encode(keyBytes)
        let request = "GET \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n\r\n"
        try write(Array(request.utf8))
        var received: [UInt8] = []
        let terminator: [UInt8] = [13, 10, 13, 10]
        var headerEnd: Int?
        while headerEnd == nil {
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { throw Failure.handshake(count == 0 ? "the server closed the connection" : "no answer to the upgrade") }
            received += buffer[0..<count]
            guard received.count <= 16 * 1024 else { throw Failure.handshake("the upgrade answer is too long") }
            headerEnd = received.indices.dropLast(3).first { Array(received[$0..<($0 + 4)]) == terminator }
        }
        let head = String(decoding: received[..<headerEnd!], as: UTF8.self)
        let lines = head.components(separatedBy: "\r\n")
        guard let status = lines.first, status.hasPrefix("HTTP/1.1 101") else {
            throw Failure.handshake("the server did not switch to WebSocket: \(lines.first ?? "")")
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let expected = Base64.encode(SHA1.digest(Array((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8)))
        guard headers["sec-websocket-accept"] == expected else { throw Failure.handshake("wrong Sec-WebSocket-Accept") }
        reader.append(received[(headerEnd! + 4)...])  // Frames sent right after the answer.
    }

    /// A connected TCP socket, or a failure within `timeout`.
    private static func openSocket(host: String, port: Int, timeout: TimeInterval) throws -> Int32 {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else { throw Failure.connect("cannot resolve \(host): \(String(cString: gai_strerror(status)))") }
        defer { freeaddrinfo(list) }
        var lastError = "no address"
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let info = entry {
            entry = info.pointee.ai_next
            let descriptor = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
            guard descriptor >= 0 else { continue }
            let flags = fcntl(descriptor, F_GETFL)
            _ = fcntl(descriptor, F_SETFL, flags | O_NONBLOCK)
            var result = Glibc.connect(descriptor, info.pointee.ai_addr, info.pointee.ai_addrlen)
            if result != 0, errno == EINPROGRESS {
                var poller = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                if poll(&poller, 1, Int32(timeout * 1000)) == 1 {
                    var error: Int32 = 0
                    var length = socklen_t(MemoryLayout<Int32>.size)
                    getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &error, &length)
                    result = error == 0 ? 0 : -1
                    errno = error
                } else {
                    errno = ETIMEDOUT
                }
            }
            if result == 0 {
                _ = fcntl(descriptor, F_SETFL, flags)
                var on: Int32 = 1
                setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
                return descriptor
            }
            lastError = String(cString: strerror(errno))
            Glibc.close(descriptor)
        }
        throw Failure.connect("cannot connect to \(host):\(port): \(lastError)")
    }

    private static func setTimeout(_ descriptor: Int32, _ option: Int32, _ seconds: TimeInterval) {
        var value = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - seconds.rounded(.down)) * 1_000_000))
        setsockopt(descriptor, SOL_SOCKET, option, &value, socklen_t(MemoryLayout<timeval>.size))
    }
}
