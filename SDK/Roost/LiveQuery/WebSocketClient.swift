import Foundation
import RoostCore
#if canImport(Glibc)
import Glibc
#endif

/// A WebSocket client (RFC 6455) on a plain TCP socket, for LiveQuery. FoundationNetworking's
/// `URLSessionWebSocketTask` fails on Debian 12 ("WebSockets not supported by libcurl": its libcurl 7.88 is built
/// without ws), so the SDK speaks the protocol itself with the codec the server uses (`WebSocketReader`,
/// `WebSocketFrame` in RoostCore). `wss://` goes through `TLSSession` (OpenSSL, certificate verified), never plain text.
///
/// Blocking: `connect` opens the socket and does the handshake; `receive()` returns the next text message (pings are
/// answered inside), or throws when the connection ends. `send` may be called from any thread.
final class WebSocketClient: @unchecked Sendable {
    enum Failure: Error, CustomStringConvertible {
        case unsupported(String)
        case connect(String)
        /// The server's TLS certificate failed verification (untrusted CA, wrong name, expired): retrying cannot help.
        case untrusted(String)
        case handshake(String)
        case closed(String)

        var description: String {
            switch self {
            case .unsupported(let why), .connect(let why), .untrusted(let why), .handshake(let why), .closed(let why): why
            }
        }

        /// Fixed only by the configuration (a trusted certificate, a supported URL), not by reconnecting.
        var isConfiguration: Bool {
            switch self {
            case .unsupported, .untrusted: true
            case .connect, .handshake, .closed: false
            }
        }
    }

    private let descriptor: Int32
    /// For `wss://`; nil for `ws://`.
    private let tls: TLSSession?
    private var reader: WebSocketReader
    private let timeout: TimeInterval
    private var readTimeout: TimeInterval
    private let sendLock = NSLock()
    private var isClosed = false

    /// Opens `url` (`ws://`/`http://`, or `wss://`/`https://` over TLS; a path) and upgrades it; fails within about
    /// `timeout` seconds (each of the TCP connect, the TLS handshake and the upgrade).
    /// - Parameter idleTimeout: a connection silent this long is taken for dead (the server pings every 10 s).
    init(url: URL, timeout: TimeInterval, idleTimeout: TimeInterval = 30, maxMessageBytes: Int = 16 << 20) throws {
        let scheme = url.scheme?.lowercased() ?? ""
        let secure = scheme == "wss" || scheme == "https"
        guard secure || scheme == "ws" || scheme == "http" else {
            throw Failure.unsupported("LiveQuery needs a ws://, wss://, http:// or https:// server URL: \(url.absoluteString)")
        }
        guard let host = url.host, !host.isEmpty else { throw Failure.connect("no host in \(url.absoluteString)") }
        let port = url.port ?? (secure ? 443 : 80)
        let socket = try Self.openSocket(host: host, port: port, timeout: timeout)
        do {
            tls = secure ? try TLSSession(descriptor: socket, host: host, timeout: timeout) : nil
        } catch {
            Glibc.close(socket)
            throw error
        }
        descriptor = socket
        reader = WebSocketReader(maxMessageBytes: maxMessageBytes, role: .client)
        self.timeout = timeout
        readTimeout = timeout
        do {
            Self.setTimeout(descriptor, SO_SNDTIMEO, timeout)
            Self.setTimeout(descriptor, SO_RCVTIMEO, timeout)
            try handshake(host: host, port: port, path: url.path.isEmpty ? "/" : url.path)
            Self.setTimeout(descriptor, SO_RCVTIMEO, idleTimeout)
            readTimeout = idleTimeout
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
            reader.append(try readSome(16 * 1024, silence: "no answer from the server (not even a ping)"))
        }
    }

    /// Ends the connection: a `receive()` blocked on another thread returns at once with `Failure.closed`.
    func shutdown() {
        sendLock.withLock {
            isClosed = true
            tls?.close()
            _ = Glibc.shutdown(descriptor, Int32(SHUT_RDWR))
        }
    }

    // MARK: Internals

    private func write(_ bytes: [UInt8]) throws {
        try sendLock.withLock {
            guard !isClosed else { throw Failure.closed("the connection is closed") }
            if let tls { return try bytes.withUnsafeBytes { try tls.write($0, timeout: timeout) } }
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
            do {
                received += try readSome(4096, silence: "no answer to the upgrade")
            } catch let Failure.closed(why) {
                throw Failure.handshake(why)
            }
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

    /// At least one byte from the peer (at most `limit`). - Throws: `Failure.closed` when it closed or failed, with
    /// `silence` when nothing came within the read timeout.
    private func readSome(_ limit: Int, silence: String) throws -> ArraySlice<UInt8> {
        var buffer = [UInt8](repeating: 0, count: limit)
        let count = try buffer.withUnsafeMutableBytes { bytes in
            if let tls { return try tls.read(into: bytes, timeout: readTimeout, silence: silence) }
            return recv(descriptor, bytes.baseAddress, bytes.count, 0)
        }
        guard count <= 0 else { return buffer[0..<count] }
        throw Failure.closed(count == 0 ? "the connection was closed"
            : (errno == EAGAIN || errno == EWOULDBLOCK) ? silence : String(cString: strerror(errno)))
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
