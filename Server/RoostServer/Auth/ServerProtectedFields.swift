import Foundation
import RoostCore

/// Parse Server's `protectedFields` option: per class, per entry (`*`, `authenticated`, `role:<name>`, a user id,
/// `userField:<field>`), fields hidden from callers the entry applies to. Each entry is added to the class's own
/// `protectedFields` permission (a union; Parse's `SchemaData`), and `GET /schemas` keeps showing the stored one.
///
/// Parse's default, `{"_User": {"*": ["email"]}}`, is always merged in (`injectDefaults`): another user's email
/// stays hidden unless an entry that also applies (`role:Admin: []`) shows it. The deprecated `userSensitiveFields`
/// list joins `_User`'s `*` entry.
public struct ServerProtectedFields: Sendable, Equatable {
    /// Class name → entry → hidden fields.
    public private(set) var classes: [String: [String: [String]]]

    public static let parseDefault = ServerProtectedFields(classes: ["_User": ["*": ["email"]]])

    private init(classes: [String: [String: [String]]]) { self.classes = classes }

    public struct Invalid: Error, CustomStringConvertible {
        public let description: String
    }

    /// - Parameters:
    ///   - json: the option's JSON object (nil: none given).
    ///   - userSensitiveFields: Parse's deprecated list, hidden from everyone but the user and the master key.
    public init(json: String?, userSensitiveFields: [String] = []) throws(Invalid) {
        var classes: [String: [String: [String]]] = [:]
        if let json {
            guard let value = try? JSONParser.parse(json), case .object(let byClass) = value else {
                throw Invalid(description: "not a JSON object")
            }
            for (className, entries) in byClass {
                guard case .object(let byEntry) = entries else {
                    throw Invalid(description: "\(className) is not an object of entries")
                }
                for (entry, fields) in byEntry {
                    guard let list = fields.arrayValue, list.allSatisfy({ $0.stringValue != nil }) else {
                        throw Invalid(description: "\(className).\(entry) is not an array of field names")
                    }
                    classes[className, default: [:]][entry] = list.compactMap(\.stringValue)
                }
            }
        }
        if !userSensitiveFields.isEmpty {
            classes[UserStore.className, default: [:]]["*", default: []].append(contentsOf: userSensitiveFields)
        }
        for (className, entries) in Self.parseDefault.classes {
            for (entry, fields) in entries { classes[className, default: [:]][entry, default: []].append(contentsOf: fields) }
        }
        self.classes = classes.mapValues { $0.mapValues { Self.unique($0) } }
    }

    /// The class's own `protectedFields` permission with this option's entries for it added.
    func entries(_ stored: [String: JSON]?, of className: String) -> [String: JSON]? {
        guard let configured = classes[className] else { return stored }
        var merged = stored ?? [:]
        for (entry, fields) in configured {
            let own = merged[entry]?.arrayValue?.compactMap(\.stringValue) ?? []
            merged[entry] = .array(Self.unique(own + fields).map(JSON.string))
        }
        return merged
    }

    private static func unique(_ fields: [String]) -> [String] {
        var seen = Set<String>()
        return fields.filter { seen.insert($0).inserted }
    }
}
