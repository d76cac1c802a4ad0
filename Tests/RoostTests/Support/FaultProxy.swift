import Foundation

/// A loopback HTTP proxy in front of the real server that answers some requests itself, as a hostile
/// network does: a captive portal's `200 <html>`, a reply meant for another request. Every other
/// request goes to the server unchanged. One request per connection (both sides get `Connection: close`).
final class FaultProxy: @unchecked Sendable {
    struct Request {
        let method: String
        let path: String
        /// Lower-cased names.
        let headers: [String: String]
    }

    enum Action {
        case forward
        /// A whole reply of the proxy's own: status line, headers and body.
        case respond(status: Int, headers: [(String, String)], body: String)
        /// No reply for this long, then the connection closes (a server that accepted and stalled).
        case stall(seconds: Double)
        /// Forwarded, so the server commits it; its reply is read and dropped, and the connection closes without one
        /// (a reply lost on the way back).
        case loseReply
    }

    let port: Int
    private let upstreamPort: Int
    private let listener: Int32
    private let decide: @Sendable (Request) -> Action
    private let observe: (@Sendable (Request, _ replyHeaders: [String: String], _ lost: Bool) -> Void)?

    var url: URL { URL(string: "http://127.0.0.1:\(port)/parse")! }

    /// `observe` hears of every reply the server sent (lower-cased header names), and whether it was lost.
    init(upstreamPort: Int, observe: (@Sendable (Request, _ replyHeaders: [String: String], _ lost: Bool) -> Void)? = nil,
         decide: @escaping @Sendable (Request) -> Action) throws {
        self.upstreamPort = upstreamPort
        self.decide = decide
        self.observe = observe
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = FaultProxy.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(descriptor, 64) == 0 else {
            close(descriptor)
            throw FaultProxyError.socket(errno)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        listener = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [weak self, descriptor] in
            while true {
                let connection = accept(descriptor, nil, nil)
                if connection < 0 {
                    if errno == EINTR { continue }
                    return  // The listener was shut down.
                }
                Thread { [weak self] in
                    if let self { self.serve(connection) } else { close(connection) }
                }.start()
            }
        }
        thread.start()
    }

    /// Stops accepting connections.
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    deinit { stop() }

    private func serve(_ connection: Int32) {
        defer { close(connection) }
        guard let (head, body) = FaultProxy.readMessage(connection) else { return }
        let lines = head.components(separatedBy: "\r\n")
        let requestLine = lines[0].split(separator: " ")
        guard requestLine.count >= 2 else { return }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let request = Request(method: String(requestLine[0]), path: String(requestLine[1]), headers: headers)
        switch decide(request) {
        case .respond(let status, let replyHeaders, let replyBody):
            let bytes = Array(replyBody.utf8)
            var text = "HTTP/1.1 \(status) Whatever\r\n"
            for (name, value) in replyHeaders { text += "\(name): \(value)\r\n" }
            text += "Content-Length: \(bytes.count)\r\nConnection: close\r\n\r\n"
            FaultProxy.write(connection, Array(text.utf8) + bytes)
        case .stall(let seconds):
            usleep(UInt32(seconds * 1_000_000))
        case .forward:
            guard let reply = forward(head: lines, body: body) else { return }
            observe?(request, FaultProxy.headers(of: reply), false)
            FaultProxy.write(connection, reply)
        case .loseReply:
            guard let reply = forward(head: lines, body: body) else { return }
            observe?(request, FaultProxy.headers(of: reply), true)
        }
    }

    /// A reply's headers, lower-cased names.
    private static func headers(of reply: [UInt8]) -> [String: String] {
        guard let end = reply.firstRange(of: Array("\r\n\r\n".utf8)) else { return [:] }
        var headers: [String: String] = [:]
        for line in String(decoding: reply[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n").dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return headers
    }

    /// Sends the request to the server and returns its reply, re-headed with `Connection: close`.
    private func forward(head lines: [String], body: [UInt8]) -> [UInt8]? {
        let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(upstream) }
        var address = FaultProxy.loopback(port: upstreamPort)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return nil }
        let kept = lines.filter { !$0.lowercased().hasPrefix("connection:") && !$0.isEmpty }
        FaultProxy.write(upstream, Array((kept + ["Connection: close", "", ""]).joined(separator: "\r\n").utf8) + body)
        guard let (head, replyBody) = FaultProxy.readMessage(upstream) else { return nil }
        let replyLines = head.components(separatedBy: "\r\n").filter { !$0.lowercased().hasPrefix("connection:") && !$0.isEmpty }
        return Array((replyLines + ["Connection: close", "", ""]).joined(separator: "\r\n").utf8) + replyBody
    }

    /// Reads a head (up to the blank line) and a body of `Content-Length` bytes.
    private static func readMessage(_ descriptor: Int32) -> (head: String, body: [UInt8])? {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        var headEnd: Int?
        var bodyLength = 0
        while true {
            if headEnd == nil, let range = buffer.firstRange(of: separator) {
                headEnd = range.upperBound
                let head = String(decoding: buffer[..<range.lowerBound], as: UTF8.self)
                for line in head.components(separatedBy: "\r\n") where line.lowercased().hasPrefix("content-length:") {
                    bodyLength = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) ?? 0
                }
            }
            if let headEnd, buffer.count >= headEnd + bodyLength {
                return (String(decoding: buffer[..<(headEnd - 4)], as: UTF8.self), Array(buffer[headEnd..<(headEnd + bodyLength)]))
            }
            let count = read(descriptor, &chunk, chunk.count)
            if count < 0, errno == EINTR { continue }
            if count <= 0 { return nil }
            buffer += chunk[..<count]
        }
    }

    private static func write(_ descriptor: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written < 0, errno == EINTR { continue }
            if written <= 0 { return }
            offset += written
        }
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return address
    }
}

enum FaultProxyError: Error {
    case socket(Int32)
}
