import Glibc
import Synchronization

/// A connection libmicrohttpd has switched to another protocol (a 101 answer): its socket, the bytes the
/// client sent after the request (already read by MHD), and `close()`, which closes the socket and gives
/// the connection's slot in `ConnectionGate` back.
///
/// The socket is the owner's own descriptor (a duplicate of MHD's): MHD has let go of the connection as
/// soon as it was upgraded, freeing its memory pool (see `HTTPServer`'s upgrade handler). The owner must
/// stop using the socket before calling `close()`, and must call it exactly once.
public final class UpgradedConnection: Sendable {
    public let socket: Int32
    public let leftover: [UInt8]
    private let release: @Sendable () -> Void
    private let closed = Atomic<Bool>(false)

    /// - Parameter release: gives back what the connection counted (called once, after the socket is closed).
    init(socket: Int32, leftover: [UInt8], release: @escaping @Sendable () -> Void) {
        self.socket = socket
        self.leftover = leftover
        self.release = release
    }

    /// Closes the socket and gives its slot back. Later calls do nothing.
    public func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        Glibc.close(socket)
        release()
    }
}
