import Foundation

/// Uploaded files, one per file in `<data dir>/files`, named as Parse names them:
/// 32 random hex characters, `_`, the name the client gave.
final class FileStore: Sendable {
    let directory: String

    init(dataDirectory: String) throws {
        directory = dataDirectory + "/files"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    /// Stores `bytes` under a new unique name and returns it. The file appears whole or not at all.
    func save(_ bytes: [UInt8], name: String) throws -> String {
        let stored = try SecureRandom.hex(16) + "_" + name
        try Data(bytes).write(to: URL(fileURLWithPath: path(stored)), options: .atomic)
        return stored
    }

    /// The bytes of a stored file, `nil` when there is none by that name.
    func read(_ name: String) -> Data? {
        guard FileStore.isValidName(name) else { return nil }
        return FileManager.default.contents(atPath: path(name))
    }

    /// Returns whether a file was removed.
    func delete(_ name: String) -> Bool {
        guard FileStore.isValidName(name) else { return false }
        return (try? FileManager.default.removeItem(atPath: path(name))) != nil
    }

    private func path(_ name: String) -> String { directory + "/" + name }

    /// Parse's rule (`FilesController`): `^[_a-zA-Z0-9][a-zA-Z0-9@. ~_-]*$`, at most 128 characters.
    /// It also keeps names from leaving the files directory (no `/`, no leading `.`).
    static func isValidName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, name.utf8.count <= 128 else { return false }
        func isAlphanumeric(_ scalar: Unicode.Scalar) -> Bool { scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)) }
        guard isAlphanumeric(first) || first == "_" else { return false }
        return name.unicodeScalars.allSatisfy { isAlphanumeric($0) || "@. ~_-".unicodeScalars.contains($0) }
    }

    /// The Content-Type to serve a file with, from its extension.
    static func contentType(of name: String) -> String {
        let types = [
            "txt": "text/plain", "html": "text/html", "css": "text/css", "js": "application/javascript",
            "json": "application/json", "xml": "application/xml", "pdf": "application/pdf", "png": "image/png",
            "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp", "svg": "image/svg+xml",
            "mp3": "audio/mpeg", "mp4": "video/mp4", "zip": "application/zip", "csv": "text/csv",
        ]
        let ext = name.split(separator: ".").last.map { $0.lowercased() } ?? ""
        return name.contains(".") ? types[ext] ?? "application/octet-stream" : "application/octet-stream"
    }
}
