import Foundation

/// Whole reads and writes on a file descriptor, retried on EINTR and short counts (`FileStore`, `SpooledBody`).
/// Failures are `POSIXError`s, so that ENOSPC answers "database or disk is full".
enum DescriptorIO {
    /// `count` bytes from `offset`; EIO when the file ends first.
    static func read(_ descriptor: Int32, offset: Int, count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let got = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress! + done, count - done, off_t(offset + done)) }
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { throw got < 0 ? lastError() : POSIXError(.EIO) }
            done += got
        }
        return bytes
    }

    /// Writes all of `bytes` at the descriptor's position.
    static func write(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) throws {
        var done = 0
        while done < bytes.count {
            let written = Glibc.write(descriptor, bytes.baseAddress! + done, bytes.count - done)
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { throw lastError() }
            done += written
        }
    }

    /// The error of the call that just failed.
    static func lastError() -> POSIXError { POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
}
