import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One kept-alive TCP connection to a test server, for what URLSession hides: exactly which bytes
/// go out, and whether the same connection still answers afterwards.
final class RawConnection {
    private let socket: Int32

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// - Parameter source: the local address to connect from (any of 127.0.0.0/8 reaches the server on
    ///   loopback; a second one is a second client address, for the per-address connection limit).
    init(port: Int, from source: String? = nil) throws {
        socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else {
                close(socket)
                throw Failure(description: "bind \(source): errno \(errno)")
            }
        }
        var timeout = timeval(tv_sec: 60, tv_usec: 0)  // A missing answer fails the test instead of hanging it.
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard status == 0 else {
            close(socket)
            throw Failure(description: "connect: errno \(errno)")
        }
    }

    deinit { close(socket) }

    /// Sends `request` as is and returns the response's head and body (read up to its Content-Length).
    func exchange(_ request: String) throws -> (head: String, body: String) {
        try send(request)
        return try receive()
    }

    /// Sends `request` as is, without waiting for an answer.
    func send(_ request: String) throws {
        var bytes = Array(request.utf8)[...]
        while !bytes.isEmpty {
            let sent = bytes.withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw Failure(description: "send: errno \(errno)") }
            bytes = bytes.dropFirst(sent)
        }
    }

    /// Sends `bytes` as they are (a WebSocket frame, say).
    func send(bytes: [UInt8]) throws {
        var rest = bytes[...]
        while !rest.isEmpty {
            let sent = rest.withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw Failure(description: "send: errno \(errno)") }
            rest = rest.dropFirst(sent)
        }
    }

    /// Reads until what has arrived contains `marker`; returns all of it (bytes after the marker included).
    func receive(until marker: String) throws -> String {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let wanted = Array(marker.utf8)
        while received.firstRange(of: wanted) == nil {
            let count = recv(socket, &buffer, buffer.count, 0)
            guard count > 0 else { throw Failure(description: "closed or timed out (errno \(errno)) waiting for \(marker)") }
            received += buffer[..<count]
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// The bytes that arrive within `seconds` (at least one; nil when none came). - Throws: when the server closed.
    func receiveBytes(within seconds: Double) throws -> [UInt8]? {
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, Int32(seconds * 1000)) > 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let count = recv(socket, &buffer, buffer.count, 0)
        guard count > 0 else { throw Failure(description: "connection closed (errno \(errno))") }
        return Array(buffer[..<count])
    }

    /// Whether any byte of an answer has arrived (without waiting or consuming it).
    var hasAnswer: Bool {
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) > 0
    }

    /// What `waitForClose` read in an earlier call while the connection was still open.
    private var readBeforeClose: [UInt8] = []

    /// Waits up to `seconds` for the server to end the connection; returns everything it sent before closing,
    /// also what arrived during earlier calls (a reply can come in one call's time and the close in the next's),
    /// or nil when it is still open at the end.
    func waitForClose(within seconds: Double) -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 50) > 0 else { continue }
            let count = recv(socket, &buffer, buffer.count, 0)
            if count <= 0 { return String(decoding: readBeforeClose, as: UTF8.self) }
            readBeforeClose += buffer[..<count]
        }
        return nil
    }

    /// Reads one response: its head and its body (up to its Content-Length).
    func receive() throws -> (head: String, body: String) {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            if let end = received.firstRange(of: Array("\r\n\r\n".utf8)) {
                let head = String(decoding: received[..<end.lowerBound], as: UTF8.self)
                let length = head.split(separator: "\r\n")
                    .first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
                if received.count - end.upperBound >= length {
                    return (head, String(decoding: received[end.upperBound..<(end.upperBound + length)], as: UTF8.self))
                }
            }
            let count = recv(socket, &buffer, buffer.count, 0)
            guard count > 0 else { throw Failure(description: "connection closed or timed out (errno \(errno)) after \(received.count) bytes") }
            received += buffer[..<count]
        }
    }
}
