import CMicroHTTPD
import Glibc

/// A bound, listening TCP socket, made before anything else so that a port in use fails the
/// start-up before the data directory, the master key or the database are created.
///
/// Owns the descriptor until it is handed to `HTTPServer` (`release()`); closed in `deinit` otherwise.
public struct ListeningSocket: ~Copyable {
    let descriptor: Int32
    /// The bound port (the real one when 0 was asked for).
    public let port: UInt16

    /// Binds and listens on `host` (a numeric IPv4 or IPv6 address) and `port` (0 picks a free one).
    /// - Throws: `HTTPServerError.cannotListen` with the reason (`errno`'s text, or an unparsable address).
    public init(host: String, port: UInt16) throws(HTTPServerError) {
        var probe = in6_addr()
        guard inet_pton(AF_INET, host, &probe) == 1 || inet_pton(AF_INET6, host, &probe) == 1 else {
            throw .cannotListen(host: host, port: port, reason: "not a numeric IPv4 or IPv6 address")
        }
        // As deep a queue of unaccepted connections as the kernel allows (net.core.somaxconn caps it): a burst
        // of thousands of connections otherwise overflows it, and a client whose SYN is dropped waits 1 s to retry.
        let descriptor = roost_listen(host, port, 65_535)
        guard descriptor >= 0 else {
            throw .cannotListen(host: host, port: port, reason: String(cString: strerror(errno)))
        }
        self.descriptor = descriptor
        self.port = roost_bound_port(descriptor)
    }

    /// Hands the descriptor over; the caller closes it.
    consuming func release() -> Int32 {
        let descriptor = self.descriptor
        discard self
        return descriptor
    }

    deinit { close(descriptor) }
}
