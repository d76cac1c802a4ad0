import Foundation

/// Where log lines go: an in-memory buffer that a background thread writes to a file descriptor.
///
/// A `write(2)` per request line cost more than the rest of a small request's logging (measured:
/// ~15 % of create throughput). Lines are appended whole under a lock, so they never interleave,
/// and written in batches a few milliseconds later. `flush()` writes everything at once: errors
/// call it, and so does shutdown. A process killed by a signal may lose the last few milliseconds.
public final class LogSink: @unchecked Sendable {
    /// Standard error, where the server logs.
    public static let standardError = LogSink(fileDescriptor: 2)

    private let fileDescriptor: Int32
    private let condition = NSCondition()
    /// Held from taking a batch until it is written, so batches reach the file in order.
    private let writeLock = NSLock()
    private var pending: [UInt8] = []
    private var flusherStarted = false
    /// Whether the last write stopped inside a line (the disk filled up); guarded by `writeLock`.
    private var endsMidLine = false
    /// Past this many buffered bytes the appending thread writes them itself (the disk is behind).
    private static let maximumBuffered = 1 << 20
    /// How long the flusher lets lines gather before one write.
    private static let batchDelay: TimeInterval = 0.01
    /// The last lines appended, oldest first from `recentStart` (a ring), for `GET /scriptlog`; guarded by `condition`.
    private var recent: [[UInt8]] = []
    private var recentStart = 0
    /// How many lines `recentLines()` keeps: access lines are ~100 bytes, so ~100 KB.
    static let recentCapacity = 1000
    /// A longer line is kept cut to this (its newline kept): a client's request path can be 16 KB, and 1,000 of them
    /// would hold 16 MB; at most 1 MB this way.
    static let recentLineLimit = 1024

    init(fileDescriptor: Int32) { self.fileDescriptor = fileDescriptor }

    /// Buffers one whole line (with its newline); `urgent` writes it and everything before it now.
    func append(_ line: [UInt8], urgent: Bool) {
        condition.lock()
        let wasEmpty = pending.isEmpty
        pending.append(contentsOf: line)
        let kept = line.count <= LogSink.recentLineLimit ? line : Array(line.prefix(LogSink.recentLineLimit - 1)) + [UInt8(ascii: "\n")]
        if recent.count < LogSink.recentCapacity {
            recent.append(kept)
        } else {
            recent[recentStart] = kept
            recentStart = (recentStart + 1) % LogSink.recentCapacity
        }
        if urgent || pending.count > LogSink.maximumBuffered {
            condition.unlock()
            flush()
            return
        }
        if !flusherStarted {
            flusherStarted = true
            Thread.detachNewThread { [self] in runFlusher() }
        }
        if wasEmpty { condition.signal() }
        condition.unlock()
    }

    /// The last `recentCapacity` lines appended, oldest first.
    func recentLines() -> [[UInt8]] {
        condition.lock()
        defer { condition.unlock() }
        return Array(recent[recentStart...] + recent[..<recentStart])
    }

    /// Writes every buffered line now.
    public func flush() {
        writeLock.lock()
        defer { writeLock.unlock() }
        condition.lock()
        let bytes = pending
        pending = []
        condition.unlock()
        write(bytes)
    }

    private func runFlusher() {
        while true {
            condition.lock()
            while pending.isEmpty { condition.wait() }
            condition.unlock()
            Thread.sleep(forTimeInterval: LogSink.batchDelay)  // Let the lines of concurrent requests gather.
            flush()
        }
    }

    /// Called with `writeLock` held.
    private func write(_ bytes: [UInt8]) {
        // A line cut short by a full disk is ended first, so it does not swallow the next line written.
        let bytes = endsMidLine ? [UInt8(ascii: "\n")] + bytes : bytes
        var offset = 0
        bytes.withUnsafeBytes { raw in
            while offset < raw.count {
                let written = Glibc.write(fileDescriptor, raw.baseAddress! + offset, raw.count - offset)
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { return }  // Nowhere to log to (a full disk): drop rather than spin.
                offset += written
            }
        }
        if offset > 0 { endsMidLine = bytes[offset - 1] != UInt8(ascii: "\n") }
    }
}
