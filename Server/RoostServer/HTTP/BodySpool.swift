import Foundation

/// Which request bodies are written to disk as they arrive instead of memory, and where: file uploads (up to
/// `--max-body`, 20 MB each by default) did not need to be held whole to be stored, and a hundred of them at once
/// were 2 GB of memory. A spooled body still counts in `BodyBudget` (bodies in progress, in memory or on disk), so
/// that the disk they take is bounded as the memory was.
public struct BodySpool: Sendable {
    /// Where the spool files are made (unlinked as soon as they are open: a crash leaves nothing behind).
    public let directory: String
    /// A body is spooled once it holds more than this; smaller ones stay in memory.
    public let thresholdBytes: Int
    /// Whether a request's body may be spooled, from its method and path (still percent-encoded).
    public let accepts: @Sendable (_ method: String, _ path: String) -> Bool

    /// Also removes the spool files a crash left between their creation and their unlink (`SpooledBody.init`).
    public init(directory: String, thresholdBytes: Int = 1 << 20, accepts: @escaping @Sendable (String, String) -> Bool) {
        self.directory = directory
        self.thresholdBytes = thresholdBytes
        self.accepts = accepts
        for leftover in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] where leftover.hasPrefix(SpooledBody.prefix) {
            unlink(directory + "/" + leftover)
        }
    }
}

/// A request body in an unlinked temporary file. Written only by its connection's thread while the body arrives,
/// then only read by the request's handler (hence `@unchecked Sendable`); the file goes with the last reference.
public final class SpooledBody: @unchecked Sendable {
    /// Bytes written so far: the whole body once the request is handed over.
    public private(set) var count = 0
    private let descriptor: Int32
    /// The names spool files have until they are unlinked.
    static let prefix = ".upload-"

    init(directory: String) throws {
        // Named only until the unlink just after (mode 0600): the open descriptor keeps it.
        var template = Array((directory + "/" + Self.prefix + "XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else { throw DescriptorIO.lastError() }
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    func append(_ bytes: UnsafeRawBufferPointer) throws {
        try DescriptorIO.write(descriptor, bytes)
        count += bytes.count
    }

    /// Up to `maximum` bytes from `offset`.
    public func read(_ offset: Int, _ maximum: Int) throws -> [UInt8] {
        try DescriptorIO.read(descriptor, offset: offset, count: max(0, min(maximum, count - offset)))
    }
}
