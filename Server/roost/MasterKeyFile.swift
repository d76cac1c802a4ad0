import Foundation
import RoostServer

/// The generated master key, kept in `<data dir>/master.key` with mode 0600.
enum MasterKeyFile {
    /// Returns the key, the file's path, and whether it was created now.
    static func loadOrCreate(in directory: String) throws -> (String, String, Bool) {
        let path = directory + "/master.key"
        if let existing = try? String(contentsOfFile: path, encoding: .utf8) {
            let key = existing.trimmingCharacters(in: .whitespacesAndNewlines)
            if !key.isEmpty { return (key, path, false) }
        }
        let key = try SecureRandom.hex(24)
        // Created with mode 0600 in one step: never readable by others, not even for a moment.
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard descriptor >= 0 else { throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path]) }
        defer { close(descriptor) }
        let line = Array((key + "\n").utf8)
        guard write(descriptor, line, line.count) == line.count else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
        }
        return (key, path, true)
    }
}
