import Foundation

/// Uploaded files on SQLite, one per file in `<data dir>/files`, named as Parse names them:
/// 32 random hex characters, `_`, the name the client gave.
final class FileStore: FileStorage {
    let directory: String

    init(dataDirectory: String) throws {
        directory = dataDirectory + "/files"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    func save(_ bytes: [UInt8], name: String) throws -> String {
        let stored = try SecureRandom.hex(16) + "_" + name
        try Data(bytes).write(to: URL(fileURLWithPath: path(stored)), options: .atomic)
        return stored
    }

    func read(_ name: String) -> StoredFile? {
        guard FileStore.isValidName(name) else { return nil }
        var info = stat()
        guard stat(path(name), &info) == 0, let bytes = FileManager.default.contents(atPath: path(name)) else { return nil }
        let modified = info.st_mtim
        return StoredFile(size: bytes.count, modifiedSeconds: Int(modified.tv_sec),
                          etag: "\"\(String(info.st_size, radix: 16))-\(String(modified.tv_sec, radix: 16))\(String(modified.tv_nsec, radix: 16))\"",
                          content: .bytes(bytes))
    }

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

    /// Known types by extension; the first extension of a type is the one a name without one gets.
    private static let types: [(ext: String, type: String)] = [
        ("txt", "text/plain"), ("html", "text/html"), ("css", "text/css"), ("js", "application/javascript"),
        ("json", "application/json"), ("xml", "application/xml"), ("pdf", "application/pdf"), ("png", "image/png"),
        ("jpeg", "image/jpeg"), ("jpg", "image/jpeg"), ("gif", "image/gif"), ("webp", "image/webp"), ("svg", "image/svg+xml"),
        ("mp3", "audio/mpeg"), ("mp4", "video/mp4"), ("zip", "application/zip"), ("csv", "text/csv"),
    ]

    /// Types a browser runs script in when it opens them (pages, SVG and XML documents): served as
    /// downloads, so an uploaded one never runs with the API's origin.
    private static let activeTypes: Set<String> = ["text/html", "image/svg+xml", "application/xml"]

    /// The headers to serve a file with: its type from its extension, no sniffing of another, and
    /// `attachment` for active types.
    static func servingHeaders(of name: String) -> [(String, String)] {
        let type = contentType(of: name)
        var headers = [("Content-Type", type), ("X-Content-Type-Options", "nosniff")]
        if activeTypes.contains(type) { headers.append(("Content-Disposition", "attachment")) }
        return headers
    }

    /// The Content-Type to serve a file with, from its extension.
    static func contentType(of name: String) -> String {
        guard let ext = fileExtension(name)?.lowercased() else { return "application/octet-stream" }
        return types.first { $0.ext == ext }?.type ?? "application/octet-stream"
    }

    /// Parse (`FilesController.createFile`): a name without an extension takes the one of the
    /// upload's Content-Type (`hello` sent as `text/plain` is stored as `…_hello.txt`).
    static func name(_ name: String, withExtensionFor contentType: String?) -> String {
        guard fileExtension(name) == nil, let contentType else { return name }
        let type = contentType.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        guard let ext = types.first(where: { $0.type == type })?.ext else { return name }
        return name + "." + ext
    }

    /// As Node's `path.extname`: what follows the last `.`, unless the name starts with its only dot.
    static func fileExtension(_ name: String) -> String? {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        return String(name[name.index(after: dot)...])
    }
}
