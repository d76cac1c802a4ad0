import Foundation
import RoostCore

/// The current user on disk: `currentUser.json` in the storage directory, mode 0600, replaced
/// atomically. It holds the session token and the server's fields, never the password.
struct CurrentUserStore: Sendable {
    let file: URL
    let anonymousIdFile: URL

    init(directory: URL) {
        file = directory.appendingPathComponent("currentUser.json")
        anonymousIdFile = directory.appendingPathComponent("anonymousId")
    }

    struct Record {
        var objectId: String?
        var sessionToken: String?
        var anonymousId: String?
        var isLazy: Bool
        var fields: [String: JSON]
        var createdAt: String?
        var updatedAt: String?
    }

    func load() -> Record? {
        guard let data = try? Data(contentsOf: file), let json = try? JSONParser.parse(Array(data)) else { return nil }
        return Record(
            objectId: json["objectId"]?.stringValue, sessionToken: json["sessionToken"]?.stringValue,
            anonymousId: json["anonymousId"]?.stringValue, isLazy: json["lazy"] == true,
            fields: json["fields"]?.objectValue ?? [:], createdAt: json["createdAt"]?.stringValue,
            updatedAt: json["updatedAt"]?.stringValue)
    }

    func save(_ record: Record) throws {
        var json: [String: JSON] = ["lazy": .bool(record.isLazy), "fields": .object(record.fields)]
        if let value = record.objectId { json["objectId"] = .string(value) }
        if let value = record.sessionToken { json["sessionToken"] = .string(value) }
        if let value = record.anonymousId { json["anonymousId"] = .string(value) }
        if let value = record.createdAt { json["createdAt"] = .string(value) }
        if let value = record.updatedAt { json["updatedAt"] = .string(value) }
        try writePrivately(Data(JSON.object(json).encoded()), to: file)
    }

    func delete() { try? FileManager.default.removeItem(at: file) }

    /// The anonymous id this storage directory logs in with, created once: when several processes
    /// start at once on a new directory, the first to create it wins and the others read it (two ids
    /// would make two anonymous users, each owning part of the list).
    func anonymousId() throws -> String {
        if let text = try? String(contentsOf: anonymousIdFile, encoding: .utf8), !text.isEmpty { return text }
        let id = UUID().uuidString.lowercased()
        try writePrivately(Data(id.utf8), to: anonymousIdFile, replacing: false)
        guard let text = try? String(contentsOf: anonymousIdFile, encoding: .utf8), !text.isEmpty else {
            throw RoostError.localStorage("cannot read \(anonymousIdFile.path)")
        }
        return text
    }

    /// Writes through a temporary file created 0600, then renames it over the target (or, when not
    /// `replacing`, links it into place unless the target exists).
    private func writePrivately(_ data: Data, to url: URL, replacing: Bool = true) throws {
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString)")
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard descriptor >= 0 else { throw RoostError.localStorage("cannot write \(temporary.path): \(String(cString: strerror(errno)))") }
        let written = data.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        fsync(descriptor)
        close(descriptor)
        defer { if !replacing { unlink(temporary.path) } }
        guard written == data.count,
            replacing ? rename(temporary.path, url.path) == 0 : StoreFile.placeExclusively(temporary.path, at: url.path)
        else {
            unlink(temporary.path)
            throw RoostError.localStorage("cannot write \(url.path): \(String(cString: strerror(errno)))")
        }
    }
}
