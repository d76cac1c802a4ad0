import Foundation

/// `roost backup --out FILE`: a consistent copy of the SQLite database taken while the server runs
/// (`VACUUM INTO` reads one snapshot and writes a compact database file; writers are not held up),
/// plus the uploaded files, into `FILE-files/`.
public enum OnlineBackup {
    public struct Summary: Sendable {
        public let databaseBytes: Int
        public let files: Int
        public let filesDirectory: String?
    }

    public static func run(dataDirectory: String, to path: String) throws -> Summary {
        guard !FileManager.default.fileExists(atPath: path) else {
            throw TransferError("\(path) already exists; a backup never overwrites: choose a new --out")
        }
        let db = try TransferDatabase.open(dataDirectory: dataDirectory, readOnly: true)
        // Created first, empty and private (it holds password and session hashes); VACUUM INTO fills an empty file.
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw TransferError("cannot create \(path): \(String(cString: strerror(errno)))") }
        close(descriptor)
        do {
            try db.execute("VACUUM INTO ?", [.text(path)], cacheable: false)
            // A restored copy goes back in time: its LiveQuery history starts anew, so clients refresh instead of
            // resuming across changes the copy never had.
            let copy = try SQLiteConnection(path: path, readOnly: false, pragmas: "")
            try copy.inTransaction { try ChangeLog.startNewHistory(after: 0, in: copy) }
        } catch {
            unlink(path)
            throw TransferError("cannot write the backup to \(path): \(error)")
        }
        // A stored file never changes under its name: those the snapshot names exist now (unless deleted since).
        let source = dataDirectory + "/files"
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: source)) ?? []).filter(FileStore.isValidName).sorted()
        var filesDirectory: String?
        if !names.isEmpty {
            let target = path + "-files"
            try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: false,
                                                    attributes: [.posixPermissions: 0o700])
            for name in names {
                // A hard link costs no space on the same file system; a copy otherwise.
                if link(source + "/" + name, target + "/" + name) != 0 {
                    try FileManager.default.copyItem(atPath: source + "/" + name, toPath: target + "/" + name)
                }
            }
            filesDirectory = target
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        return Summary(databaseBytes: size, files: names.count, filesDirectory: filesDirectory)
    }
}
