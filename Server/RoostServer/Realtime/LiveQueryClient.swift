import RoostCore

/// One connected LiveQuery client, as parse-server's `Client.js` keeps it: who it is and what it
/// subscribed to. Owned by `LiveQueryServer`'s worker thread.
final class LiveQueryClient {
    /// A subscription: its query and the user it reads as (the subscription's own token, else the client's).
    struct Subscription {
        let requestId: Double
        let className: String
        let whereClause: [String: JSON]
        let constraint: QueryConstraint
        let keys: [String]?
        let watch: [String]?
        let user: AuthenticatedUser?
        /// The last change `seq` this subscription has been sent or replayed (or skipped as before it began):
        /// live changes up to it are not sent again.
        var deliveredThrough: Int64 = 0

        /// The same subscription reading as `user` (the session's user and roles as they are now).
        func reading(as user: AuthenticatedUser) -> Subscription {
            Subscription(requestId: requestId, className: className, whereClause: whereClause, constraint: constraint, keys: keys,
                         watch: watch, user: user, deliveredThrough: deliveredThrough)
        }
    }

    let clientId: String
    let hasMasterKey: Bool
    let installationId: String?
    let user: AuthenticatedUser?
    var subscriptions: [Double: Subscription] = [:]
    /// What each of its messages starts with (`LiveQueryEventBytes.prefix`): its events are spliced onto it.
    let messagePrefix: [UInt8]

    init(clientId: String, hasMasterKey: Bool, installationId: String?, user: AuthenticatedUser?) {
        self.clientId = clientId
        self.hasMasterKey = hasMasterKey
        self.installationId = installationId
        self.user = user
        messagePrefix = LiveQueryEventBytes.prefix(clientId: clientId, installationId: installationId)
    }

    /// Its subscriptions to `className`, in request id order (one client's events for one change always come in the
    /// same order).
    func subscriptions(of className: String) -> [Subscription] {
        if subscriptions.count == 1, let only = subscriptions.first?.value { return only.className == className ? [only] : [] }
        return subscriptions.values.filter { $0.className == className }.sorted { $0.requestId < $1.requestId }
    }

    /// A server message as `Client._pushEvent` builds it: op, clientId, installationId (when known), requestId.
    func message(_ op: String, requestId: Double? = nil, extra: [String: JSON] = [:]) -> JSON {
        var members = extra
        members["op"] = .string(op)
        members["clientId"] = .string(clientId)
        if let installationId { members["installationId"] = .string(installationId) }
        if let requestId { members["requestId"] = .number(requestId) }
        return .object(members)
    }
}

/// `Client.pushError`: `{op: "error", error, code, reconnect, requestId}` (requestId null when none).
func liveQueryError(code: Int, _ message: String, reconnect: Bool = true, requestId: Double? = nil) -> JSON {
    .object(["op": "error", "error": .string(message), "code": .number(Double(code)), "reconnect": .bool(reconnect),
             "requestId": requestId.map { .number($0) } ?? .null])
}
