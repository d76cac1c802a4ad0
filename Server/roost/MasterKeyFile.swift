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
        let created = FileManager.default.createFile(
            atPath: path, contents: Data((key + "\n").utf8), attributes: [.posixPermissions: 0o600])
        guard created else { throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path]) }
        return (key, path, true)
    }
}
