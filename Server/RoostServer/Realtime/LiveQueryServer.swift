import Foundation
import RoostCore
import Synchronization

/// Parse's LiveQuery protocol over the `WebSocketHub` (parse-server's `ParseLiveQueryServer`): `connect`,
/// `subscribe`, `update` and `unsubscribe`, answered with `connected`, `subscribed`, `unsubscribed` or
/// `error` (codes 1–4 as Parse uses them; 209 with `reconnect: false` for a bad session token).
///
/// Every message is handled on one worker thread, in the order the hub received them: a client's
/// messages are answered in order, and reading a session never holds up the sockets' thread.
///
/// Change events: the writer hands each commit's object changes to `publish` (in commit order), and the
/// worker sends `create`, `enter`, `update`, `leave` or `delete` to each subscription that sees them, as
/// parse-server's `_onAfterSave`/`_onAfterDelete` decide (`LiveQueryMatcher` decides what a subscriber sees).
final class LiveQueryServer: @unchecked Sendable {
    struct Settings: Sendable {
        var applicationId: String
        var masterKey: String
        var masterKeyIPs: [AddressRange]
    }

    let settings: Settings
    private let authenticate: (String) throws -> AuthenticatedUser
    private let matcher: LiveQueryMatcher
    /// Subscriptions per class, read by the writer (`isLive`) to record only the changes someone will match.
    private let liveClasses = Mutex<[String: Int]>([:])
    private let worker = WorkerThreads(name: "roost-livequery")
    private var hub: WebSocketHub!
    /// The worker thread's own.
    private var clients: [UInt64: LiveQueryClient] = [:]
    /// Where each socket connected from (set on the connection's HTTP thread, read by the worker).
    private let addresses = NSLock()
    private var clientAddresses: [UInt64: String] = [:]

    /// - Parameter authenticate: a session token's user, as the REST API finds it (throws 209 otherwise).
    init(settings: Settings, socketSettings: WebSocketHub.Settings, matcher: LiveQueryMatcher,
         authenticate: @escaping (String) throws -> AuthenticatedUser) throws {
        self.settings = settings
        self.authenticate = authenticate
        self.matcher = matcher
        hub = try WebSocketHub(settings: socketSettings, receive: { [unowned self] id, text in
            worker.submit {
                self.handle(text, from: id)
                self.hub.handled(id)
            }
        }, closed: { [unowned self] id in
            addresses.withLock { _ = clientAddresses.removeValue(forKey: id) }
            worker.submit { self.clients.removeValue(forKey: id).map { self.forget($0.subscriptions.values) } }
        })
    }

    /// Open WebSocket connections.
    var connectionCount: Int { hub.connectionCount }

    /// Takes a socket just upgraded from a request that came from `clientAddress`.
    func adopt(_ connection: UpgradedConnection, clientAddress: String) {
        // Recorded before the hub can read a message from it.
        addresses.lock()
        defer { addresses.unlock() }
        if let id = hub.adopt(connection) { clientAddresses[id] = clientAddress }
    }

    /// Whether anyone subscribes to `className` (called by the writer for every object write).
    func isLive(_ className: String) -> Bool {
        liveClasses.withLock { $0[className] != nil }
    }

    /// Sends the events of one commit's changes (called on the writer's thread, in commit order).
    func publish(_ changes: [ObjectChange]) {
        worker.submit { [self] in
            for change in changes { deliver(change) }
        }
    }

    /// Closes every socket (1001) and ends the worker.
    func stop() {
        hub.stop()
        worker.stop()
    }

    // MARK: The worker thread

    private func handle(_ text: String, from id: UInt64) {
        // parse-server logs and ignores a message that is not JSON.
        guard let json = try? JSONParser.parse(text, maximumDepth: JSONParser.defaultMaximumDepth,
                                               maximumValues: 100_000) else { return }
        let request: LiveQueryRequest
        do {
            request = try LiveQueryRequest.parse(json)
        } catch {
            return send(liveQueryError(code: 1, error.message), to: id)
        }
        switch request {
        case .connect(let connect): handleConnect(connect, from: id)
        case .subscribe(let subscribe): handleSubscribe(subscribe, from: id)
        case .update(let subscribe):
            handleUnsubscribe(subscribe.requestId, from: id, notify: false)
            handleSubscribe(subscribe, from: id)
        case .unsubscribe(let requestId): handleUnsubscribe(requestId, from: id, notify: true)
        }
    }

    private func handleConnect(_ connect: LiveQueryRequest.Connect, from id: UInt64) {
        // Parse checks the keys it was given (`keyPairs`); Roost always has the application id.
        guard SecureRandom.constantTimeEquals(connect.applicationId, settings.applicationId) else {
            return send(liveQueryError(code: 4, "Key in request is not valid"), to: id)
        }
        let address = addresses.withLock { clientAddresses[id] } ?? ""
        // The master key counts only from the addresses the REST API takes it from (`--master-key-ips`).
        let hasMasterKey = connect.masterKey.map {
            !settings.masterKey.isEmpty && SecureRandom.constantTimeEquals($0, settings.masterKey)
                && settings.masterKeyIPs.contains { $0.contains(address) }
        } ?? false
        var user: AuthenticatedUser?
        if let token = connect.sessionToken {
            do {
                user = try authenticate(token)
            } catch {
                return send(errorMessage(error, requestId: nil), to: id)
            }
        }
        let client = LiveQueryClient(clientId: UUID().uuidString.lowercased(), hasMasterKey: hasMasterKey,
                                     installationId: connect.installationId, user: user)
        clients[id] = client
        send(client.message("connected"), to: id)
    }

    private func handleSubscribe(_ subscribe: LiveQueryRequest.Subscribe, from id: UInt64) {
        guard let client = clients[id] else {
            return send(liveQueryError(code: 2, "Can not find this client, make sure you connect to server before subscribing"),
                        to: id)
        }
        do {
            var user = client.user
            if let token = subscribe.sessionToken { user = try authenticate(token) }
            var whereClause = subscribe.whereClause
            if subscribe.className == "_Session" {
                // Parse: a client sees only its own sessions.
                if let user {
                    whereClause["user"] = .object(["__type": "Pointer", "className": "_User", "objectId": .string(user.id)])
                } else if !client.hasMasterKey {
                    throw ParseError(.invalidSessionToken, "Invalid session token")
                }
            }
            let constraint = try QueryConstraint.parse(where: .object(whereClause))
            let subscription = LiveQueryClient.Subscription(
                requestId: subscribe.requestId, className: subscribe.className, whereClause: whereClause,
                constraint: constraint, keys: subscribe.keys, watch: subscribe.watch, user: user)
            try matcher.checkSubscription(subscription, isMaster: client.hasMasterKey)
            if let replaced = client.subscriptions.updateValue(subscription, forKey: subscribe.requestId) { forget([replaced]) }
            liveClasses.withLock { $0[subscription.className, default: 0] += 1 }
            send(client.message("subscribed", requestId: subscribe.requestId), to: id)
        } catch {
            send(errorMessage(error, requestId: subscribe.requestId), to: id)
        }
    }

    private func handleUnsubscribe(_ requestId: Double, from id: UInt64, notify: Bool) {
        guard let client = clients[id] else {
            return send(liveQueryError(code: 2, "Can not find this client, make sure you connect to server before unsubscribing"),
                        to: id)
        }
        guard let removed = client.subscriptions.removeValue(forKey: requestId) else {
            let message = "Cannot find subscription with clientId \(client.clientId) subscriptionId \(Self.number(requestId))."
                + " Make sure you subscribe to live query server before unsubscribing."
            return send(liveQueryError(code: 2, message), to: id)
        }
        forget([removed])
        if notify { send(client.message("unsubscribed", requestId: requestId), to: id) }
    }

    private func forget(_ subscriptions: some Sequence<LiveQueryClient.Subscription>) {
        liveClasses.withLock { counts in
            for subscription in subscriptions {
                let left = counts[subscription.className, default: 1] - 1
                counts[subscription.className] = left > 0 ? left : nil
            }
        }
    }

    /// One change's events, to every subscription of its class (parse-server's `_onAfterSave`/`_onAfterDelete`).
    private func deliver(_ change: ObjectChange) {
        // Each subscriber's session is looked up again for every change (the REST API's session cache answers), so a
        // log-out, a revoked session, a deleted user or a role change holds for live events at once, not only at subscribe.
        var sessions: [String: AuthenticatedUser?] = [:]
        let memo = LiveQueryChangeMemo()  // Subscriptions with the same query and audience are matched once.
        for (id, client) in clients {
            // In request id order: one client's events for one change always come in the same order.
            let subscriptions = client.subscriptions.values.filter { $0.className == change.className }.sorted { $0.requestId < $1.requestId }
            for var subscription in subscriptions {
                if let token = subscription.user?.sessionToken {
                    if sessions[token] == nil { sessions[token] = .some(try? authenticate(token)) }
                    guard let current = sessions[token] ?? nil else {
                        // As Parse answers a subscription whose session is gone: 209, and no more of its events.
                        client.subscriptions.removeValue(forKey: subscription.requestId)
                        forget([subscription])
                        send(liveQueryError(code: ParseErrorCode.invalidSessionToken.rawValue, "Invalid session token", reconnect: false,
                                            requestId: subscription.requestId), to: id)
                        continue
                    }
                    subscription = subscription.reading(as: current)
                }
                let matched: [Bool]
                do {
                    matched = try matcher.matches(subscription, isMaster: client.hasMasterKey, versions: [change.before, change.after], memo: memo)
                } catch {
                    send(errorMessage(error, requestId: subscription.requestId), to: id)
                    continue
                }
                guard let op = Self.event(before: change.before, after: change.after, matchedBefore: matched[0],
                                          matchedAfter: matched[1], watch: subscription.watch)
                else { continue }
                var extra: [String: JSON] = [:]
                if let shown = op == "delete" ? change.before : change.after {
                    // Parse sends a `leave` with the new version even when the subscriber just lost read access
                    // to it; then only what identifies the object is sent, not contents it may no longer read.
                    let mayRead = op != "leave" || (try? matcher.mayRead(shown, subscription, isMaster: client.hasMasterKey, memo: memo)) == true
                    extra["object"] = matcher.visibleJSON(shown, subscription, isMaster: client.hasMasterKey, identityOnly: !mayRead, memo: memo)
                }
                if op != "create", op != "delete", let before = change.before {
                    // An `enter` may come from gaining read access: the version before was not the subscriber's to read,
                    // so only its identity is sent (Parse sends it whole).
                    let mayReadBefore = op != "enter" || (try? matcher.mayRead(before, subscription, isMaster: client.hasMasterKey, memo: memo)) == true
                    extra["original"] = matcher.visibleJSON(before, subscription, isMaster: client.hasMasterKey, identityOnly: !mayReadBefore,
                                                           memo: memo)
                }
                send(client.message(op, requestId: subscription.requestId, extra: extra), to: id)
            }
        }
    }

    /// The event a subscription gets, as parse-server decides it: seen before and after → update, before
    /// only → leave, after only → enter (create for a new object); a delete seen before → delete. With
    /// `watch`, creates and updates that change none of the watched fields are not sent.
    static func event(before: StoredObject?, after: StoredObject?, matchedBefore: Bool, matchedAfter: Bool,
                      watch: [String]?) -> String? {
        let op: String
        switch (matchedBefore, matchedAfter) {
        case (true, true): op = "update"
        case (true, false): op = after == nil ? "delete" : "leave"
        case (false, true): op = before == nil ? "create" : "enter"
        case (false, false): return nil
        }
        if let watch, op == "update" || op == "create" {
            guard watch.contains(where: { after?.fields[$0] != before?.fields[$0] }) else { return nil }
        }
        return op
    }

    /// An error thrown while handling a request: Parse's code with `reconnect: false`, as parse-server sends
    /// the errors of its auth and trigger steps.
    private func errorMessage(_ error: Error, requestId: Double?) -> JSON {
        if let error = error as? ParseError {
            return liveQueryError(code: error.code.rawValue, error.message, reconnect: false, requestId: requestId)
        }
        return liveQueryError(code: 1, "Internal server error", reconnect: false, requestId: requestId)
    }

    private func send(_ message: JSON, to id: UInt64) {
        hub.send(utf8: message.encoded(), to: id)
    }

    /// A request id as JavaScript prints a number (`1`, not `1.0`).
    static func number(_ value: Double) -> String {
        value.rounded() == value && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}
