import Foundation
import RoostServer

/// The generated master key, kept in `<data dir>/master.key` with mode 0600.
enum MasterKeyFile {
    /// Returns the key, the file's path, and whether it was created now.
    static func loadOrCreate(in directory: String) throws(StartupError) -> (String, String, Bool) {
        let path = directory + "/master.key"
        if FileManager.default.fileExists(atPath: path) {
            guard let existing = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw StartupError("cannot read the master key file \(path). Make it readable by this user, or pass --master-key.")
            }
            let key = existing.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !key.isEmpty else {
                throw StartupError("the master key file \(path) is empty. Remove it to generate a new key, or pass --master-key.")
            }
            return (key, path, false)
        }
        guard let key = try? SecureRandom.hex(24) else { throw StartupError("cannot generate a master key: no random bytes") }
        // Created with mode 0600 in one step: never readable by others, not even for a moment.
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard descriptor >= 0 else {
            throw StartupError("cannot create the master key file \(path): \(StartupError.systemReason). \(DataDirectory.remedy)")
        }
        defer { close(descriptor) }
        let line = Array((key + "\n").utf8)
        guard write(descriptor, line, line.count) == line.count else {
            throw StartupError("cannot write the master key file \(path): \(StartupError.systemReason).")
        }
        return (key, path, true)
    }
}
