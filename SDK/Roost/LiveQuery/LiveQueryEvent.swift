import Foundation
import RoostCore

/// What a live subscription reports: a change to an object its query matches (Parse's `create`, `enter`,
/// `update`, `leave`, `delete`), its (re)subscription, or a refresh after a gap too old to replay.
public struct LiveQueryEvent: Sendable {
    public enum Kind: String, Sendable {
        /// The subscription is live (again, after a reconnect). `resumed` says whether missed changes follow.
        case subscribed
        /// A new object matches.
        case created
        /// An existing object now matches (a field changed, or read access was gained).
        case entered
        /// A matching object changed and still matches.
        case updated
        /// An object no longer matches (a field changed, or read access was lost).
        case left
        /// A matching object was deleted.
        case deleted
        /// The server could not replay what was missed while disconnected (the gap was older than its replay
        /// window): `objects` is everything the query matches now. Nothing was skipped silently.
        case refreshed
    }

    public let kind: Kind
    /// The object as it is now (for `deleted`, as it was; for a `left` after losing read access, as the subscriber last
    /// could read it); nil for `subscribed` and `refreshed`.
    public let object: RoostObject?
    /// The version before the change (`entered`, `updated`, `left`); only its identity when the subscriber could
    /// not read it.
    public let previous: RoostObject?
    /// For `refreshed`: every object the query matches now.
    public let objects: [RoostObject]
    /// The change's position in the server's change log (Roost servers; nil from Parse Server).
    public let seq: Int?
    /// For `subscribed` after a reconnect: true when the missed changes are replayed next, false when a
    /// `refreshed` follows, nil on a first subscription (or a server without resume).
    public let resumed: Bool?

    init(kind: Kind, object: RoostObject? = nil, previous: RoostObject? = nil, objects: [RoostObject] = [], seq: Int? = nil,
         resumed: Bool? = nil) {
        self.kind = kind
        self.object = object
        self.previous = previous
        self.objects = objects
        self.seq = seq
        self.resumed = resumed
    }

    /// The object as a typed model (nil for `subscribed` and `refreshed`).
    public func object<T: RoostModel>(as type: T.Type) throws -> T? { try object?.decode(as: type) }

    /// Parse's op names.
    static func kind(ofOp op: String) -> Kind? {
        switch op {
        case "create": .created
        case "enter": .entered
        case "update": .updated
        case "leave": .left
        case "delete": .deleted
        default: nil
        }
    }
}
