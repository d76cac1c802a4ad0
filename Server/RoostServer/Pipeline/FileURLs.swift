import Foundation
import RoostCore

/// Parse answers every File field of an object with the URL it is downloaded from
/// (`FilesController.expandFilesInObject`); the stored value keeps only the name, so the URL
/// always follows the server's current address.
struct FileURLs {
    /// `<public URL>/files/<app id>/`
    let base: String

    init(base: String) {
        self.base = base
    }

    init(context: RequestContext) {
        self.init(base: "\(context.publicURL)/files/\(context.config.applicationId)/")
    }

    /// Where the file stored under `name` is downloaded from.
    func url(for name: String) -> String {
        base + (name.addingPercentEncoding(withAllowedCharacters: Self.nameCharacters) ?? name)
    }

    /// `object` with a `url` added to each File in `fields` (the class's File-typed fields).
    func expand(_ object: JSON, fields: [String]) throws -> JSON {
        guard !fields.isEmpty else { return object }
        var decoded = object
        if case .encodedFragment(let bytes) = object { decoded = try JSONParser.parse(bytes) }
        guard case .object(var members) = decoded else { return object }
        for field in fields {
            guard case .object(var file)? = members[field], file["__type"] == "File", let name = file["name"]?.stringValue else { continue }
            file["url"] = .string(url(for: name))
            members[field] = .object(file)
        }
        return .object(members)
    }

    /// `members` with a `url` added to each File among its top-level values that has none: aggregation results,
    /// whose fields need not be the class's (Parse's `expandFilesInObject` on each result).
    func expandTopLevel(_ members: [String: JSON]) -> [String: JSON] {
        var expanded = members
        for (key, value) in members {
            guard case .object(var file) = value, file["__type"] == "File", file["url"] == nil,
                let name = file["name"]?.stringValue else { continue }
            file["url"] = .string(url(for: name))
            expanded[key] = .object(file)
        }
        return expanded
    }

    /// The File-typed fields of a class.
    static func fields(of schema: ClassSchema) -> [String] {
        schema.fields.compactMap { $0.value == .file ? $0.key : nil }
    }

    /// As JavaScript's `encodeURIComponent`.
    private static let nameCharacters = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.!~*'()")
}
