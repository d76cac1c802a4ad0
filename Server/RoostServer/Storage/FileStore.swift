import Foundation

/// Uploaded files on SQLite, one per file in `<data dir>/files`, named as Parse names them:
/// 32 random hex characters, `_`, the name the client gave.
final class FileStore: FileStorage {
    let directory: String

    init(dataDirectory: String) throws {
        directory = dataDirectory + "/files"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        // Uploads a crash cut short (`save`): never served, only taking room.
        for leftover in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] where leftover.hasPrefix(".partial-") {
            unlink(path(leftover))
        }
    }

    /// Written under a temporary name and renamed, so the file appears whole or not at all; piece by piece, straight
    /// from the upload's buffer or spool file (through `Data` it was copied first: a 48 MB upload held 98 MB).
    func save(_ bytes: UploadBytes, name: String) throws -> String {
        let stored = try SecureRandom.hex(16) + "_" + name
        let temporary = path(".partial-" + stored)  // A leading dot: never a stored name (`isValidName`).
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw DescriptorIO.lastError() }
        do {
            try bytes.forEachPiece(Self.pieceBytes) { piece in try piece.withUnsafeBytes { try DescriptorIO.write(descriptor, $0) } }
        } catch {
            close(descriptor)
            unlink(temporary)
            throw error
        }
        guard close(descriptor) == 0, rename(temporary, path(stored)) == 0 else {
            let failure = DescriptorIO.lastError()
            unlink(temporary)
            throw failure
        }
        return stored
    }

    func read(_ name: String) -> StoredFile? {
        guard FileStore.isValidName(name), let file = OpenFile(path: path(name)) else { return nil }
        let modified = file.info.st_mtim
        return StoredFile(size: Int(file.info.st_size), modifiedSeconds: Int(modified.tv_sec),
                          etag: "\"\(String(file.info.st_size, radix: 16))-\(String(modified.tv_sec, radix: 16))\(String(modified.tv_nsec, radix: 16))\"",
                          read: { offset, maximum in try file.read(offset, maximum) })
    }

    func delete(_ name: String) -> Bool {
        guard FileStore.isValidName(name) else { return false }
        return (try? FileManager.default.removeItem(atPath: path(name))) != nil
    }

    private func path(_ name: String) -> String { directory + "/" + name }

    /// What a spooled upload is copied by at a time.
    private static let pieceBytes = 256 * 1024

    /// A file opened for one download, read where the connection asks (`pread`) and closed when the download's
    /// response lets go of it. Deleted meanwhile, it is still read whole: the descriptor keeps its bytes.
    private final class OpenFile: Sendable {
        let descriptor: Int32
        let info: stat

        init?(path: String) {
            descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { return nil }
            var info = stat()
            guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
                close(descriptor)
                return nil
            }
            self.info = info
        }

        deinit { close(descriptor) }

        /// A file that ends before its size said is EIO.
        func read(_ offset: Int, _ maximum: Int) throws -> [UInt8] {
            try DescriptorIO.read(descriptor, offset: offset, count: max(0, min(maximum, Int(info.st_size) - offset)))
        }
    }

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
