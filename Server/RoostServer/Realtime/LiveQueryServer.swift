import Foundation
import RoostCore
import Synchronization

/// Parse's LiveQuery protocol over the `WebSocketHubs` (parse-server's `ParseLiveQueryServer`): `connect`,
/// `subscribe`, `update`, `unsubscribe` and `query`, answered with `connected`, `subscribed`, `unsubscribed`,
/// `result` or `error` (codes 1–4 as Parse uses them; 209 with `reconnect: false` for a bad session token).
/// Roost's resume (README, "LiveQuery protocol"): every event carries its change's `seq`; a `subscribe` with `since`
/// first gets the events it missed from the change log (`LiveQueryServer+Events.swift`).
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
        /// The live classes (nil: all); subscribing to another is refused with 119.
        var classes: LiveQueryClassNames? = nil
        /// Whether changes are kept in the change log (resume); without it every resume answers `resumed: false`.
        var logsChanges = true
        var maxSubscriptionsPerClient = 100
        /// Open sockets per client address (0: no limit).
        var maxConnectionsPerAddress = 100
        /// The most changes one resume replays, and the most bytes of events it queues; past either the
        /// client is told `resumed: false` (it refreshes with `query`), so a resume never overflows its socket.
        var maxReplayChanges = 10_000
        var maxReplayBytes = 2 * 1024 * 1024
        /// The most objects a `result` carries.
        var maxResults = 1_000
    }

    let settings: Settings
    let authenticate: (String) throws -> AuthenticatedUser
    let matcher: LiveQueryMatcher
    let storage: Storage
    /// Subscriptions per class, and the `seq` of the last change committed (the head). Kept under one lock:
    /// the writer, after a commit, moves the head and hands the worker only the changes of subscribed classes
    /// (no wake-up for the others); a new subscription counts itself and reads the head in one step. So every
    /// change is either at most that head (committed: a resume reads it from the log) or handed to the worker
    /// after the subscription counts (delivered live). Without the change log, the writer records only the
    /// changes of subscribed classes (`records`).
    struct LiveState {
        var subscriptions: [String: Int] = [:]
        var head: Int64 = 0
    }
    let live = Mutex(LiveState())
    private let worker = WorkerThreads(name: "roost-livequery")
    private(set) var hub: WebSocketHubs!
    /// The worker thread's own.
    var clients: [UInt64: LiveQueryClient] = [:]
    /// The worker thread's own: each small `where` subscribed to, kept once, so subscriptions to one query share one
    /// dictionary and a change's memo finds them equal by identity, not member by member. At most 1,000 of at most
    /// 1 KB are kept (then it starts over: a subscription not shared keeps its own copy, which is only slower to compare).
    private var sharedWhereClauses: [[String: JSON]: [String: JSON]] = [:]
    /// The worker thread's own: replay work per client address (20,000 changes, then 10,000 a second).
    var replayBudgets = ReplayBudgets<CountedAddress>(capacity: 20_000, perSecond: 10_000)
    /// Where each socket connected from, and how many are open per address (set on the connection's HTTP
    /// thread, read by the worker).
    private let addresses = NSLock()
    private var clientAddresses: [UInt64: (text: String, counted: CountedAddress)] = [:]
    private var openPerAddress: [CountedAddress: Int] = [:]

    /// A client address as the per-address limits count it: `ConnectionGate`'s, taken from the socket address (IPv6 by
    /// its /64, which one client usually holds whole, so rotating addresses inside it do not multiply its sockets or
    /// replay budget; IPv4 and IPv4-mapped IPv6 in full). nil when the HTTP layer did not know it: counted together.
    typealias CountedAddress = ConnectionGate.Address?

    /// - Parameter authenticate: a session token's user, as the REST API finds it (throws 209 otherwise).
    init(settings: Settings, socketSettings: WebSocketHub.Settings, matcher: LiveQueryMatcher, storage: Storage,
         authenticate: @escaping (String) throws -> AuthenticatedUser) throws {
        self.settings = settings
        self.authenticate = authenticate
        self.matcher = matcher
        self.storage = storage
        hub = try WebSocketHubs(settings: socketSettings, receive: { [unowned self] id, text in
            worker.submit {
                self.handle(text, from: id)
                self.hub.handled(id)
            }
        }, closed: { [unowned self] id in
            addresses.withLock {
                if let address = clientAddresses.removeValue(forKey: id) { uncount(address.counted) }
            }
            worker.submit { self.clients.removeValue(forKey: id).map { self.forget($0.subscriptions.values) } }
        })
    }

    /// Sets the change log's head (a change published already keeps it where it is).
    func begin(at head: Int64) {
        live.withLock { $0.head = max($0.head, head) }
    }

    /// Where socket `id` connected from.
    func address(of id: UInt64) -> String {
        addresses.withLock { clientAddresses[id]?.text } ?? ""
    }

    /// A place for one more socket from `clientAddress` (`counted` as the limits count it), counted from now (a client
    /// that opens the next socket as soon as it reads the 101 cannot slip past the limit); nil when it has
    /// `maxConnectionsPerAddress` open. The place is given back when its socket closes, or when the slot is dropped
    /// without being adopted.
    func reserveConnection(from clientAddress: String, counted: CountedAddress) -> ConnectionSlot? {
        addresses.withLock {
            let open = openPerAddress[counted, default: 0]
            guard settings.maxConnectionsPerAddress == 0 || open < settings.maxConnectionsPerAddress else { return nil }
            openPerAddress[counted] = open + 1
            return ConnectionSlot(address: clientAddress, counted: counted) { [weak self] in self?.giveBack(counted) }
        }
    }

    /// A reserved place for one socket (`reserveConnection`), given back on deinit unless a socket took it.
    final class ConnectionSlot: @unchecked Sendable {
        let address: String
        let counted: CountedAddress
        private let giveBack: () -> Void
        /// Set under the addresses lock when the socket is adopted: its close gives the place back then.
        fileprivate var isTaken = false

        fileprivate init(address: String, counted: CountedAddress, giveBack: @escaping () -> Void) {
            self.address = address
            self.counted = counted
            self.giveBack = giveBack
        }

        deinit { if !isTaken { giveBack() } }
    }

    private func giveBack(_ address: CountedAddress) {
        addresses.withLock { uncount(address) }
    }

    /// Gives back a place `reserveConnection` counted for `address` (as counted), under the addresses lock: the one
    /// place both an unused slot and a closed socket give theirs back.
    private func uncount(_ address: CountedAddress) {
        let left = openPerAddress[address, default: 1] - 1
        openPerAddress[address] = left > 0 ? left : nil
    }

    /// Open WebSocket connections.
    var connectionCount: Int { hub.connectionCount }

    /// Takes a socket just upgraded from a request, into the place `slot` reserved for it.
    func adopt(_ connection: UpgradedConnection, into slot: ConnectionSlot) {
        // Recorded before the hub can read a message from it.
        addresses.lock()
        defer { addresses.unlock() }
        if let id = hub.adopt(connection) {
            clientAddresses[id] = (slot.address, slot.counted)
            slot.isTaken = true
        }
    }

    /// Whether the writer records `className`'s writes (called for every object write): with the change log,
    /// every live class's; without, only those of classes someone subscribes to.
    func records(_ className: String) -> Bool {
        guard isLive(className) else { return false }
        return settings.logsChanges || live.withLock { $0.subscriptions[className] != nil }
    }

    /// Whether `className` is a live class (`--live-query-classes`). On PostgreSQL every live class's writes are
    /// recorded: subscribers may be on any node.
    func isLive(_ className: String) -> Bool { settings.classes?.contains(className) ?? true }

    /// Sends the events of one commit's changes (called on the writer's thread, in commit order, `seq` order within).
    func publish(_ changes: [ObjectChange]) {
        let subscribed = live.withLock { state -> [ObjectChange] in
            state.head = max(state.head, changes.last?.seq ?? 0)
            return changes.filter { state.subscriptions[$0.className] != nil }
        }
        guard !subscribed.isEmpty else { return }
        worker.submit { [self] in
            for change in subscribed { deliver(change) }
        }
    }

    /// Changes up to `seq` will never be published (PostgreSQL: the shared log was trimmed before this node read them).
    /// Every client is closed with 1011 to resume: its resume then answers `resumed: false` where it missed something.
    func lost(through seq: Int64) {
        live.withLock { $0.head = max($0.head, seq) }
        worker.submit { [self] in
            for id in Array(clients.keys) { closeForResume(id) }
        }
    }

    /// Closes every socket (1001); nothing is sent after this.
    func closeSockets() { hub.stop() }

    /// Closes every socket and ends the worker (what it still holds finds no socket to send to).
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
        case .query(let requestId): handleQuery(requestId, from: id)
        }
    }

    private func handleConnect(_ connect: LiveQueryRequest.Connect, from id: UInt64) {
        // Parse checks the keys it was given (`keyPairs`); Roost always has the application id.
        guard SecureRandom.constantTimeEquals(connect.applicationId, settings.applicationId) else {
            return send(liveQueryError(code: 4, "Key in request is not valid"), to: id)
        }
        let address = self.address(of: id)
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
        // A second `connect` on one socket starts over: the first one's subscriptions stop counting.
        if let replaced = clients.updateValue(client, forKey: id) { forget(replaced.subscriptions.values) }
        send(client.message("connected"), to: id)
    }

    private func handleSubscribe(_ subscribe: LiveQueryRequest.Subscribe, from id: UInt64) {
        guard let client = clients[id] else {
            return send(liveQueryError(code: 2, "Can not find this client, make sure you connect to server before subscribing"),
                        to: id)
        }
        do {
            var user = client.user
            // Looked up again: a session revoked since `connect` (a password reset, a log-out elsewhere) reads nothing more.
            if let token = subscribe.sessionToken ?? user?.sessionToken { user = try authenticate(token) }
            var whereClause = subscribe.whereClause
            if subscribe.className == "_Session" {
                // Parse: a client sees only its own sessions.
                if let user {
                    whereClause["user"] = .object(["__type": "Pointer", "className": "_User", "objectId": .string(user.id)])
                } else if !client.hasMasterKey {
                    throw ParseError(.invalidSessionToken, "Invalid session token")
                }
            }
            guard settings.classes?.contains(subscribe.className) ?? true else {
                throw ParseError(.operationForbidden, "LiveQuery is not enabled for class \(subscribe.className) (--live-query-classes)")
            }
            guard client.subscriptions[subscribe.requestId] != nil || client.subscriptions.count < settings.maxSubscriptionsPerClient else {
                throw ParseError(ParseErrorCode(rawValue: 155),  // Parse's REQUEST_LIMIT_EXCEEDED
                                 "Too many subscriptions on this connection (at most \(settings.maxSubscriptionsPerClient), --live-query-max-subscriptions)")
            }
            let constraint = try QueryConstraint.parse(where: .object(whereClause))
            if let shared = sharedWhereClauses[whereClause] {
                whereClause = shared
            } else if JSON.object(whereClause).encoded().count <= 1024 {
                if sharedWhereClauses.count >= 1_000 { sharedWhereClauses = [:] }
                sharedWhereClauses[whereClause] = whereClause
            }
            var subscription = LiveQueryClient.Subscription(
                requestId: subscribe.requestId, className: subscribe.className, whereClause: whereClause,
                constraint: constraint, keys: subscribe.keys, watch: subscribe.watch, user: user)
            try matcher.checkSubscription(subscription, isMaster: client.hasMasterKey)
            // Live from here: every change after `head` comes to this thread after this job (see `LiveState`).
            var (head, isFirst) = live.withLock { state in
                defer { state.subscriptions[subscription.className, default: 0] += 1 }
                return (state.head, state.subscriptions.isEmpty)
            }
            if storage.isShared {
                // PostgreSQL: this node's feed lags the commits (of every node) by a moment, or is idle; a subscription
                // starts at what the database has committed, as on SQLite, where a write's reply waits for its changes to
                // be published. Changes in between reach this thread after this job and are skipped (`deliveredThrough`).
                if let committed = try? storage.read({ try ChangeLog.head(in: $0) }) { head = max(head, committed) }
                if isFirst { storage.followCommits(after: head) }
            }
            subscription.deliveredThrough = head
            var extra: [String: JSON] = ["seq": .number(Double(head))]
            var replay: [JSON] = []
            if let since = subscribe.since {
                let missed = missedEvents(subscription, client: client, since: since, through: head,
                                          address: addresses.withLock { clientAddresses[id]?.counted ?? nil })
                extra["resumed"] = .bool(missed != nil)
                replay = missed ?? []
            }
            if let replaced = client.subscriptions.updateValue(subscription, forKey: subscribe.requestId) { forget([replaced]) }
            send(client.message("subscribed", requestId: subscribe.requestId, extra: extra), to: id)
            for event in replay { send(event, to: id) }
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

    func forget(_ subscriptions: some Sequence<LiveQueryClient.Subscription>) {
        var hadAny = false
        let noneLeft = live.withLock { state in
            for subscription in subscriptions {
                hadAny = true
                let left = state.subscriptions[subscription.className, default: 1] - 1
                state.subscriptions[subscription.className] = left > 0 ? left : nil
            }
            return state.subscriptions.isEmpty
        }
        if hadAny && noneLeft { storage.unfollowCommits() }  // PostgreSQL: the feed rests (see `handleSubscribe`).
    }

    /// An error thrown while handling a request: Parse's code with `reconnect: false`, as parse-server sends
    /// the errors of its auth and trigger steps.
    func errorMessage(_ error: Error, requestId: Double?) -> JSON {
        if let error = error as? ParseError {
            return liveQueryError(code: error.code.rawValue, error.message, reconnect: false, requestId: requestId)
        }
        return liveQueryError(code: 1, "Internal server error", reconnect: false, requestId: requestId)
    }

    func send(_ message: JSON, to id: UInt64) {
        hub.send(utf8: message.encoded(), to: id)
    }

    /// A request id as JavaScript prints a number (`1`, not `1.0`).
    static func number(_ value: Double) -> String {
        value.rounded() == value && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}
