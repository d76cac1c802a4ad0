import CMicroHTTPD
import Synchronization

/// A connection libmicrohttpd has switched to another protocol (a 101 answer): its socket, the bytes the
/// client sent after the request (already read by MHD), and the way to hand it back for closing.
///
/// MHD keeps the connection (suspended, no timeout) until `close()`, which it carries out on its own
/// thread: only then is the socket closed and the connection's slot in `ConnectionGate` given back. The
/// owner must stop using the socket before calling `close()`, and must call it exactly once.
public final class UpgradedConnection: Sendable {
    public let socket: Int32
    public let leftover: [UInt8]
    private let handle: Handle
    private let closed = Atomic<Bool>(false)

    private struct Handle: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    init(socket: Int32, leftover: [UInt8], handle: OpaquePointer) {
        self.socket = socket
        self.leftover = leftover
        self.handle = Handle(pointer: handle)
    }

    /// Hands the socket back to MHD, which closes it. Later calls do nothing.
    public func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        _ = roost_mhd_upgrade_close(handle.pointer)
    }
}
