import RoostCore

/// Who may read and write an object: the public (`*`), users, and roles (`role:<name>`).
///
/// Naming a user who has no objectId yet (the automatic anonymous user) is allowed: the entry is
/// rewritten to the real objectId when that user is created on the server, just before the save.
public struct RoostACL: Equatable, Sendable {
    private var entries: [String: (read: Bool, write: Bool)] = [:]
    /// Users named here before they had an objectId, by localId.
    private(set) var unsavedUsers: [RoostUser] = []

    public init() {}

    init(json: JSON) {
        for (subject, flags) in json.objectValue ?? [:] {
            entries[subject] = (flags["read"] == true, flags["write"] == true)
        }
    }

    /// An ACL that lets only `user` read and write.
    public init(owner user: RoostUser) {
        setReadAccess(true, for: user)
        setWriteAccess(true, for: user)
    }

    public var publicReadAccess: Bool {
        get { entries["*"]?.read ?? false }
        set { update("*") { $0.read = newValue } }
    }

    public var publicWriteAccess: Bool {
        get { entries["*"]?.write ?? false }
        set { update("*") { $0.write = newValue } }
    }

    public mutating func setReadAccess(_ allowed: Bool, for user: RoostUser) { update(subject(user)) { $0.read = allowed } }
    public mutating func setWriteAccess(_ allowed: Bool, for user: RoostUser) { update(subject(user)) { $0.write = allowed } }
    public mutating func setReadAccess(_ allowed: Bool, forUserId id: String) { update(id) { $0.read = allowed } }
    public mutating func setWriteAccess(_ allowed: Bool, forUserId id: String) { update(id) { $0.write = allowed } }
    public mutating func setReadAccess(_ allowed: Bool, forRole name: String) { update("role:" + name) { $0.read = allowed } }
    public mutating func setWriteAccess(_ allowed: Bool, forRole name: String) { update("role:" + name) { $0.write = allowed } }

    public func readAccess(forUserId id: String) -> Bool { entries[id]?.read ?? false }
    public func writeAccess(forUserId id: String) -> Bool { entries[id]?.write ?? false }
    public func readAccess(forRole name: String) -> Bool { entries["role:" + name]?.read ?? false }

    /// The wire form, `{"*": {"read": true}, "<userId>": {"read": true, "write": true}}`.
    public var json: JSON {
        var result: [String: JSON] = [:]
        for (subject, flags) in entries where flags.read || flags.write {
            var members: [String: JSON] = [:]
            if flags.read { members["read"] = true }
            if flags.write { members["write"] = true }
            result[subject] = .object(members)
        }
        return .object(result)
    }

    public static func == (lhs: RoostACL, rhs: RoostACL) -> Bool { lhs.json == rhs.json }

    private mutating func subject(_ user: RoostUser) -> String {
        if let id = user.objectId { return id }
        if !unsavedUsers.contains(where: { $0 === user }) { unsavedUsers.append(user) }
        return user.localId
    }

    private mutating func update(_ subject: String, _ change: (inout (read: Bool, write: Bool)) -> Void) {
        var flags = entries[subject] ?? (false, false)
        change(&flags)
        entries[subject] = flags
    }
}
