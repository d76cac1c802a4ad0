import RoostCore

/// What the subscribers of one change share, worked out once per change instead of once per subscriber:
/// whether a `where` matches the change's versions for one audience, and an object as one audience sees it.
///
/// parse-server groups its subscriptions by className and a hash of the `where`, matches each group once,
/// then checks each subscriber's ACL. Here the ACL and class permissions are part of the same SQL, so the
/// group is the `where` and the audience the SQL depends on: the user and its roles (or the master key).
/// A thousand anonymous subscribers to one query cost one SQL run per change, not a thousand.
///
/// Lives for one change, on the LiveQuery worker thread.
final class LiveQueryChangeMemo {
    /// Who the SQL runs as: all it reads of the subscriber (`RequestContext.aclSubjects`, pointer permissions,
    /// protected fields: the user's id and roles, or the master key).
    struct Audience: Hashable {
        let isMaster: Bool
        let userId: String?
        let roles: [String]

        init(isMaster: Bool, user: AuthenticatedUser?) {
            self.isMaster = isMaster
            userId = user?.id
            roles = user?.roles ?? []
        }
    }

    /// Object versions as a key: hashed by identity and time, compared whole (two versions saved in the same
    /// millisecond differ in their fields).
    struct Versions: Hashable {
        let versions: [StoredObject?]

        func hash(into hasher: inout Hasher) {
            for version in versions {
                hasher.combine(version?.objectId)
                hasher.combine(version?.updatedAt)
            }
        }

        static func == (left: Versions, right: Versions) -> Bool { left.versions == right.versions }
    }

    private struct MatchKey: Hashable {
        let audience: Audience
        let className: String
        let whereClause: [String: JSON]
        let watch: [String]?
        let versions: Versions
    }

    private struct ShownKey: Hashable {
        let audience: Audience
        let className: String
        let keys: [String]?
        let identityOnly: Bool
        let object: Versions
    }

    /// All that decides a subscription's event for one change, and the objects in it (`LiveQueryServer.event`).
    private struct EventKey: Hashable {
        let audience: Audience
        let className: String
        let whereClause: [String: JSON]
        let watch: [String]?
        let keys: [String]?
    }

    private var matched: [MatchKey: Result<[Bool], Error>] = [:]
    private var shown: [ShownKey: JSON] = [:]
    private var lastMatch: (MatchKey, Result<[Bool], Error>)?
    private var lastShown: (ShownKey, JSON)?
    private var events: [EventKey: Result<LiveQueryEventBytes?, Error>] = [:]
    private var lastEvent: (EventKey, Result<LiveQueryEventBytes?, Error>)?

    /// `make`'s event (nil: none) for this subscription's query, `keys` and audience, made once (its error too):
    /// a thousand subscribers to one query get the bytes of one event, each spliced with its own ids.
    func event(_ subscription: LiveQueryClient.Subscription, isMaster: Bool,
               make: () throws -> LiveQueryEventBytes?) throws -> LiveQueryEventBytes? {
        let key = EventKey(audience: Audience(isMaster: isMaster, user: subscription.user), className: subscription.className,
                           whereClause: subscription.whereClause, watch: subscription.watch, keys: subscription.keys)
        if let (lastKey, lastResult) = lastEvent, lastKey == key { return try lastResult.get() }
        let result = events[key] ?? Result { try make() }
        events[key] = result
        lastEvent = (key, result)
        return try result.get()
    }

    /// `evaluate`'s answer for this subscription's query and audience, evaluated once (its error too).
    func matches(_ subscription: LiveQueryClient.Subscription, isMaster: Bool, versions: [StoredObject?],
                 evaluate: () throws -> [Bool]) throws -> [Bool] {
        let key = MatchKey(audience: Audience(isMaster: isMaster, user: subscription.user), className: subscription.className,
                           whereClause: subscription.whereClause, watch: subscription.watch, versions: Versions(versions: versions))
        // Subscribers to one query usually come one after another: the previous answer is checked first, with an
        // equality test and no hashing.
        if let (lastKey, lastResult) = lastMatch, lastKey == key { return try lastResult.get() }
        let result = matched[key] ?? Result { try evaluate() }
        matched[key] = result
        lastMatch = (key, result)
        return try result.get()
    }

    /// `make`'s object for this subscription's audience and keys, made and encoded once (each subscriber's event
    /// then copies the encoded bytes instead of writing the object out again).
    func shown(_ object: StoredObject, _ subscription: LiveQueryClient.Subscription, isMaster: Bool, identityOnly: Bool,
               make: () -> JSON) -> JSON {
        let key = ShownKey(audience: Audience(isMaster: isMaster, user: subscription.user), className: subscription.className,
                           keys: subscription.keys, identityOnly: identityOnly, object: Versions(versions: [object]))
        if let (lastKey, lastMade) = lastShown, lastKey == key { return lastMade }
        let made = shown[key] ?? JSON.encodedFragment(make().encoded())
        shown[key] = made
        lastShown = (key, made)
        return made
    }
}
