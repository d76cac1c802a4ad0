import Foundation

/// One writing process per data directory: `serve` and `import` hold an exclusive lock on
/// `<data dir>/roost.lock` for as long as they run. A second server on the same directory would share the
/// SQLite file but not the first one's caches, write batcher or LiveQuery sequence (its writes could be
/// missed by the first one's subscribers, its schema changes unseen), and an import under a running
/// server would change data behind it. `export` and `backup` read one snapshot and need no lock.
/// The kernel drops the lock when the process ends, however it ends (a SIGKILL leaves nothing stale).
enum DataDirectoryLock {
    /// Takes the lock for the rest of the process's life (the descriptor is deliberately never closed).
    /// - Parameter purpose: what the caller is doing, for the message ("serve", "import into").
    static func acquire(_ directory: String, for purpose: String) throws(StartupError) {
        let path = directory + "/roost.lock"
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw StartupError("cannot open \(path): \(StartupError.systemReason). \(DataDirectory.remedy)")
        }
        var locked = flock(descriptor, LOCK_EX | LOCK_NB)
        while locked != 0, errno == EINTR { locked = flock(descriptor, LOCK_EX | LOCK_NB) }
        guard locked == 0 || errno == EWOULDBLOCK else {
            let reason = StartupError.systemReason
            close(descriptor)
            throw StartupError("cannot lock \(path): \(reason) (a file system without locks?). \(DataDirectory.remedy)")
        }
        guard locked == 0 else {
            let holder = readHolder(descriptor).map { " (pid \($0))" } ?? ""
            close(descriptor)
            throw StartupError("cannot \(purpose) \(directory): another roost process\(holder) is using it "
                + "(it holds \(path)). Stop that process first, or choose another --data-dir.")
        }
        // Our pid, for the message a later process prints.
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(descriptor, 0)
        _ = pwrite(descriptor, pid, pid.count, 0)
    }

    private static func readHolder(_ descriptor: Int32) -> Int? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = pread(descriptor, &buffer, buffer.count, 0)
        guard count > 0 else { return nil }
        return Int(String(decoding: buffer[0..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
