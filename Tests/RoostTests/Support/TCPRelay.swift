import Foundation
import RoostTestSupport

/// A loopback TCP relay in front of the server: every byte passes unchanged until `cut()`, which drops
/// every connection at once (a network cut: the client sees its socket die) and refuses new ones until `restore()`.
final class TCPRelay: @unchecked Sendable {
    let port: Int
    private let upstreamPort: Int
    private let listener: Int32
    private let lock = NSLock()
    private var open: [Int32] = []
    /// The descriptors of connections that are not WebSocket upgrades (plain HTTP, kept alive between requests).
    private var plain: Set<Int32> = []
    private var isCut = false
    private var refusesPlainHTTP = false
    private var stopped = false

    init(upstreamPort: Int) throws {
        self.upstreamPort = upstreamPort
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var on: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(descriptor, 64) == 0 else { throw ServerProcessError.noPort }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(descriptor, $0, &length) }
        }
        listener = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    deinit { stop() }

    var url: URL { URL(string: "http://127.0.0.1:\(port)/parse")! }

    func cut() {
        lock.withLock {
            isCut = true
            for descriptor in open { shutdown(descriptor, Int32(SHUT_RDWR)) }
            open = []
            plain = []
        }
    }

    func restore() { lock.withLock { isCut = false } }

    /// While set, new connections whose request is not a WebSocket upgrade are closed at once: REST calls fail while
    /// the LiveQuery socket (already open, or opened now) works.
    func refusePlainHTTP(_ refuse: Bool) {
        lock.withLock {
            refusesPlainHTTP = refuse
            guard refuse else { return }
            for descriptor in plain { shutdown(descriptor, Int32(SHUT_RDWR)) }  // Kept-alive REST connections too.
            open.removeAll { plain.contains($0) }
            plain = []
        }
    }

    func stop() {
        cut()
        lock.withLock {
            guard !stopped else { return }
            stopped = true
            shutdown(listener, Int32(SHUT_RDWR))
            close(listener)
        }
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else {
                if lock.withLock({ stopped }) { return }
                continue
            }
            let isUpgrade = Self.isUpgrade(client)
            if lock.withLock({ refusesPlainHTTP }), !isUpgrade {
                close(client)
                continue
            }
            let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.loopback(port: upstreamPort)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            } == 0
            let admitted = connected && lock.withLock {
                guard !isCut else { return false }
                open += [client, upstream]
                if !isUpgrade { plain.formUnion([client, upstream]) }
                return true
            }
            guard admitted else {
                close(client)
                close(upstream)
                continue
            }
            Thread.detachNewThread { Self.pipe(from: client, to: upstream) }
            Thread.detachNewThread { Self.pipe(from: upstream, to: client) }
        }
    }

    /// Copies until either side ends, then ends both (the other pipe closes the descriptors it reads).
    private static func pipe(from source: Int32, to target: Int32) {
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(source, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            let sent = buffer.withUnsafeBytes { send(target, $0.baseAddress, count, Int32(MSG_NOSIGNAL)) }
            guard sent == count else { break }
        }
        shutdown(source, Int32(SHUT_RDWR))
        shutdown(target, Int32(SHUT_RDWR))
    }

    /// Whether the request waiting on `descriptor` asks for a WebSocket (peeked: the bytes stay for the server).
    private static func isUpgrade(_ descriptor: Int32) -> Bool {
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_PEEK)) }
        timeout = timeval(tv_sec: 0, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard count > 0 else { return false }
        return String(decoding: buffer[..<count], as: UTF8.self).lowercased().contains("upgrade: websocket")
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return address
    }
}
