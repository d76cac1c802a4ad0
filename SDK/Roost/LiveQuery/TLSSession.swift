import CLibSSL
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// TLS on a connected TCP socket (OpenSSL's libssl), for `wss://`. The server's certificate must chain to the system
/// CA store (OpenSSL's default paths: on Debian /etc/ssl/certs, the store libcurl, hence REST, reads too) and name the
/// URL's host (its DNS name, or its IP address); TLS 1.2 or newer; SNI. Nothing falls back to plain text.
///
/// The socket is made non-blocking: each call waits in `poll` (outside the lock) for what OpenSSL asks for
/// (`SSL_ERROR_WANT_READ`/`WANT_WRITE`), up to its deadline. One `SSL` must never be used by two threads at once, and
/// a read waiting for the next message must not hold up a `send` from another thread.
final class TLSSession: @unchecked Sendable {
    private let context: OpaquePointer
    private let ssl: OpaquePointer
    private let descriptor: Int32
    private let lock = NSLock()

    /// Handshakes on `descriptor` as a client of `host`. - Throws: `WebSocketClient.Failure.untrusted` when the
    /// certificate fails verification, `.connect` for any other failure (or no handshake within `timeout`).
    init(descriptor: Int32, host: String, timeout: TimeInterval) throws {
        let context = try Self.makeContext()
        guard let ssl = SSL_new(context) else {
            SSL_CTX_free(context)
            throw WebSocketClient.Failure.connect("TLS: \(Self.takeError())")
        }
        self.context = context
        self.ssl = ssl
        self.descriptor = descriptor
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        var address = in6_addr()
        if inet_pton(AF_INET, host, &address) == 1 || inet_pton(AF_INET6, host, &address) == 1 {
            X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host)  // No SNI for an address (RFC 6066).
        } else {
            _ = roost_SSL_set_tlsext_host_name(ssl, host)
            SSL_set_hostflags(ssl, UInt32(X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS))
            SSL_set1_host(ssl, host)
        }
        SSL_set_fd(ssl, descriptor)
        do {
            _ = try perform(until: Date().addingTimeInterval(timeout), silence: "no TLS handshake within \(timeout) s") { SSL_connect($0) }
        } catch let WebSocketClient.Failure.closed(why) {
            let verification = SSL_get_verify_result(ssl)
            if verification != X509_V_OK {
                let reason = String(cString: X509_verify_cert_error_string(verification))
                throw WebSocketClient.Failure.untrusted("TLS: the certificate of \(host) is not trusted: \(reason)")
            }
            throw WebSocketClient.Failure.connect("TLS handshake with \(host) failed: \(why)")
        }
    }

    deinit {
        SSL_free(ssl)
        SSL_CTX_free(context)
    }

    /// Reads at least one byte into `buffer`. - Throws: `Failure.closed` on close_notify, a failure, or `silence`
    /// when nothing came for `timeout` seconds.
    func read(into buffer: UnsafeMutableRawBufferPointer, timeout: TimeInterval, silence: String) throws -> Int {
        try perform(until: Date().addingTimeInterval(timeout), silence: silence) {
            SSL_read($0, buffer.baseAddress, Int32(clamping: buffer.count))
        }
    }

    /// Writes all of `bytes` (OpenSSL writes whole buffers unless told otherwise).
    func write(_ bytes: UnsafeRawBufferPointer, timeout: TimeInterval) throws {
        _ = try perform(until: Date().addingTimeInterval(timeout), silence: "cannot send: timed out") {
            SSL_write($0, bytes.baseAddress, Int32(clamping: bytes.count))
        }
    }

    /// Sends close_notify if the socket takes it now (never waits); the caller then shuts the socket down.
    func close() {
        lock.withLock { Self.withoutSIGPIPE { _ = SSL_shutdown(ssl) } }
    }

    // MARK: Internals

    private static func makeContext() throws -> OpaquePointer {
        guard let context = SSL_CTX_new(TLS_client_method()) else {
            throw WebSocketClient.Failure.connect("TLS: \(takeError())")
        }
        guard roost_SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION) == 1, SSL_CTX_set_default_verify_paths(context) == 1 else {
            SSL_CTX_free(context)
            throw WebSocketClient.Failure.connect("TLS: \(takeError())")
        }
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        return context
    }

    /// Runs `operation` (`SSL_connect`, `SSL_read`, `SSL_write`) until it succeeds, waiting in `poll` for the socket
    /// as OpenSSL asks. - Throws: `Failure.closed` with why (close_notify, a reset, a TLS error, `silence` at the deadline).
    private func perform(until deadline: Date, silence: String, _ operation: (OpaquePointer) -> Int32) throws -> Int {
        while true {
            let (result, error, detail): (Int32, Int32, String) = lock.withLock {
                ERR_clear_error()
                errno = 0
                let result = Self.withoutSIGPIPE { operation(ssl) }
                let failure = errno
                guard result <= 0 else { return (result, SSL_ERROR_NONE, "") }
                let error = SSL_get_error(ssl, result)
                switch error {
                case SSL_ERROR_SSL: return (result, error, Self.takeError())
                case SSL_ERROR_SYSCALL: return (result, error, failure == 0 ? "the connection was closed (no close_notify)" : String(cString: strerror(failure)))
                default: return (result, error, "")
                }
            }
            switch error {
            case SSL_ERROR_NONE:
                return Int(result)
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
                let remaining = deadline.timeIntervalSinceNow
                guard remaining > 0 else { throw WebSocketClient.Failure.closed(silence) }
                var poller = pollfd(fd: descriptor, events: Int16(error == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT), revents: 0)
                _ = poll(&poller, 1, Int32(min(remaining, 86_400) * 1000) + 1)  // Ready, timed out or interrupted: ask again.
            case SSL_ERROR_ZERO_RETURN:
                throw WebSocketClient.Failure.closed("the server closed the connection (close_notify)")
            case SSL_ERROR_SYSCALL:
                throw WebSocketClient.Failure.closed(detail)
            default:
                throw WebSocketClient.Failure.closed("TLS: \(detail)")
            }
        }
    }

    /// OpenSSL's first queued error as text (the queue is per thread), and an empty queue.
    private static func takeError() -> String {
        let code = ERR_get_error()
        ERR_clear_error()
        guard code != 0 else { return "unknown error" }
        var text = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &text, text.count)
        return String(cString: text)
    }

    /// OpenSSL writes to the socket with `write`, not `send(…, MSG_NOSIGNAL)`: to a peer that is gone, that raises
    /// SIGPIPE, which kills the program. Blocked on this thread for the call; one it raised is taken off the queue.
    private static func withoutSIGPIPE<T>(_ body: () -> T) -> T {
        var pipe = sigset_t(), previous = sigset_t(), pending = sigset_t()
        sigemptyset(&pipe)
        sigaddset(&pipe, SIGPIPE)
        sigpending(&pending)
        let wasPending = sigismember(&pending, SIGPIPE) == 1
        pthread_sigmask(SIG_BLOCK, &pipe, &previous)
        let result = body()
        sigpending(&pending)
        if !wasPending, sigismember(&pending, SIGPIPE) == 1 {
            var now = timespec()
            _ = sigtimedwait(&pipe, nil, &now)
        }
        pthread_sigmask(SIG_SETMASK, &previous, nil)
        return result
    }
}
