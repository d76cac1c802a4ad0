import RoostCore

/// Text frames for many connections in one buffer, handed to the hub as one command (a change's events to every
/// subscriber): one array and one command for the lot, not one of each per frame, and the hub writes each frame
/// to its socket from this buffer (it copies only what a socket does not take at once).
struct WebSocketFrameBatch: Sendable {
    /// The frames, one after another.
    private(set) var bytes: [UInt8] = []
    /// Each frame's connection and where it ends in `bytes` (it starts where the one before it ends).
    private(set) var frames: [(connection: UInt64, end: Int)] = []

    var isEmpty: Bool { frames.isEmpty }

    /// - Parameters: capacity: the bytes and frames it is expected to hold (room made at once, not by growing).
    init(capacity: (bytes: Int, frames: Int) = (0, 0)) {
        bytes.reserveCapacity(capacity.bytes)
        frames.reserveCapacity(capacity.frames)
    }

    /// Appends a text frame carrying `text` (UTF-8) to `connection`.
    mutating func append(utf8 text: [UInt8], to connection: UInt64) {
        append(to: connection, payloadCount: text.count) { $0.append(contentsOf: text) }
    }

    /// Appends a text frame of `payloadCount` bytes to `connection`, which `write` appends to the buffer it is given
    /// (written in place: no array per frame).
    mutating func append(to connection: UInt64, payloadCount: Int, write: (inout [UInt8]) -> Void) {
        WebSocketFrame.appendHeader(.text, payloadCount: payloadCount, to: &bytes)
        let start = bytes.count
        write(&bytes)
        precondition(bytes.count - start == payloadCount, "a frame's payload is the length its header gives")
        frames.append((connection, bytes.count))
    }
}
