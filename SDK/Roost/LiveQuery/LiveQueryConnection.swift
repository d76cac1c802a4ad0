import Foundation
import RoostCore

/// One WebSocket per client, shared by all its live subscriptions (Parse's LiveQuery protocol, plus Roost's resume:
/// events carry `seq`, `subscribe` sends `since`, and `resumed: false` is answered by a `query` refresh).
///
/// A thread of its own runs while there are subscriptions: it connects with the current user's session, subscribes
/// each one, reads events and hands them out in order, and on any disconnect reconnects with capped exponential
/// backoff and jitter (0.5 s doubling to 30 s, times 0.5–1). A session change (log-in, log-out, sign-up conversion)
/// reconnects at once with the new token.
final class LiveQueryConnection: @unchecked Sendable {
    weak var client: RoostClient?
    private let url: URL
    let condition = NSCondition()
    // Guarded by `condition`.
    private var subscriptions: [Int: LiveSubscription] = [:]
    private var nextRequestId = 1
    private var socket: WebSocketClient?
    private var isReady = false
    private var isRunning = false
    private var reconnectNow = false
    private var connectedToken: String?
    /// Set when the server refused `since` (Parse Server): subscribe without it from then on.
    private var serverRefusesSince = false
    /// Changes already applied to the local store (a change matching two subscriptions arrives twice).
    var appliedChanges = RecentSet(capacity: 4096)

    static let maxBackoff: TimeInterval = 30

    init(client: RoostClient) {
        self.client = client
        var components = URLComponents(url: client.configuration.serverURL, resolvingAgainstBaseURL: false)!
        switch components.scheme?.lowercased() {
        case "https": components.scheme = "wss"
        case "http": components.scheme = "ws"
        default: break
        }
        url = components.url ?? client.configuration.serverURL
    }

    // MARK: Subscriptions

    func add(_ query: RoostQuery, watch: [String]?, pinName: String?, handler: (@Sendable (Result<LiveQueryEvent, Error>) -> Void)?) -> LiveSubscription {
        let key = Self.resumeKey(query, watch: watch, user: client?.currentUserKey)
        let stored = try? client?.localStore.liveSeq(key)
        condition.lock()
        defer { condition.unlock() }
        let subscription = LiveSubscription(query: query, watch: watch, pinName: pinName, requestId: nextRequestId, resumeKey: key, lastSeq: stored ?? nil,
                                            connection: self, handler: handler)
        nextRequestId += 1
        subscriptions[subscription.requestId] = subscription
        if isReady, let socket { try? socket.send(subscription.subscribeMessage(withSince: !serverRefusesSince).jsonText) }
        if !isRunning {
            isRunning = true
            let thread = Thread { [self] in run() }
            thread.name = "roost-livequery"
            thread.start()
        }
        return subscription
    }

    func remove(_ subscription: LiveSubscription) {
        condition.lock()
        guard !subscription.isEnded else { return condition.unlock() }
        subscription.isEnded = true
        subscriptions.removeValue(forKey: subscription.requestId)
        if isReady, let socket {
            try? socket.send(JSON.object(["op": "unsubscribe", "requestId": .number(Double(subscription.requestId))]).jsonText)
        }
        if subscriptions.isEmpty { socket?.shutdown() }
        condition.broadcast()
        condition.unlock()
        subscription.end(nil)
    }

    /// Reconnects at once when the current user's session is not the one the socket uses.
    func sessionMayHaveChanged() {
        let token = client?.sessionToken
        condition.withLock {
            guard isRunning, token != connectedToken else { return }
            reconnectNow = true
            socket?.shutdown()
            condition.broadcast()
        }
    }

    /// Ends every subscription (the client is going away).
    func stop() {
        let all = condition.withLock { Array(subscriptions.values) }
        for subscription in all { remove(subscription) }
    }

    // MARK: The connection thread

    private func run() {
        var attempt = 0
        while true {
            condition.lock()
            guard !subscriptions.isEmpty, client != nil else {
                isRunning = false
                condition.unlock()
                return
            }
            reconnectNow = false
            condition.unlock()
            // Read from the client once per connection (the thread keeps no reference to it while on the socket; the
            // subscriptions do, through their queries, until they are cancelled).
            guard let (connect, token, timeout) = connectMessage() else { continue }
            do {
                let socket = try WebSocketClient(url: url, timeout: timeout)
                condition.withLock {
                    self.socket = socket
                    connectedToken = token
                }
                try socket.send(connect.jsonText)
                while true {
                    let text = try socket.receive()
                    if handle(text, on: socket, token: token) { attempt = 0 }
                }
            } catch let failure as WebSocketClient.Failure where failure.isConfiguration {
                // A certificate that fails verification or a URL the client cannot speak: retrying cannot help.
                removeAll(error: RoostError.misconfigured("LiveQuery: \(failure)"))
            } catch {
                // Any other failure: drop the socket and try again (the subscriptions stay).
            }
            condition.lock()
            socket?.shutdown()
            socket = nil
            isReady = false
            for subscription in subscriptions.values { subscription.replayHead = nil }  // Unfinished: resume from the last event.
            if !reconnectNow, !subscriptions.isEmpty {
                let delay = min(Self.maxBackoff, 0.5 * pow(2, Double(min(attempt, 16)))) * Double.random(in: 0.5...1)
                attempt += 1
                let deadline = Date().addingTimeInterval(delay)
                while !reconnectNow, !subscriptions.isEmpty, condition.wait(until: deadline) {}
            }
            condition.unlock()
        }
    }

    /// The `connect` message with the current session, that session, and the client's request timeout.
    private func connectMessage() -> (JSON, String?, TimeInterval)? {
        guard let client else { return nil }
        let token = client.sessionToken
        var connect: [String: JSON] = ["op": "connect", "applicationId": .string(client.configuration.applicationId)]
        if let token { connect["sessionToken"] = .string(token) }
        if let clientKey = client.configuration.clientKey { connect["clientKey"] = .string(clientKey) }
        return (.object(connect), token, client.configuration.requestTimeout)
    }

    /// Handles one server message; returns true on `connected` (the backoff starts over).
    private func handle(_ text: String, on socket: WebSocketClient, token: String?) -> Bool {
        guard let message = try? JSONParser.parse(text), let op = message["op"]?.stringValue else { return false }
        let requestId = message["requestId"]?.numberValue.flatMap { Int(exactly: $0) }
        let seq = message["seq"]?.numberValue.flatMap { Int(exactly: $0) }
        let subscription = requestId.flatMap { id in condition.withLock { subscriptions[id] } }
        settleReplays(before: op, requestId: requestId, seq: seq)
        switch op {
        case "connected":
            condition.withLock {
                isReady = true
                for subscription in subscriptions.values.sorted(by: { $0.requestId < $1.requestId }) {
                    try? socket.send(subscription.subscribeMessage(withSince: !serverRefusesSince).jsonText)
                }
            }
            return true
        case "subscribed":
            guard let subscription else { return false }
            let resumed = message["resumed"]?.boolValue
            var record: Int?
            condition.withLock {
                if resumed == true, let seq {
                    subscription.replayHead = seq
                } else if resumed == false {
                    // The log does not reach back (or it is another database's, after an import or a restore): the
                    // refresh starts a new history at this `seq`, and nothing after it may be taken for a duplicate.
                    subscription.lastSeq = seq
                    subscription.isRefreshing = true
                    try? socket.send(JSON.object(["op": "query", "requestId": .number(Double(subscription.requestId))]).jsonText)
                } else if resumed == nil, let seq {
                    // A fresh subscription: live from `seq` on (a resumed one advances with its replayed events).
                    subscription.lastSeq = max(subscription.lastSeq ?? seq, seq)
                    record = subscription.lastSeq
                }
            }
            if let record { try? client?.localStore.setLiveSeq(record, for: subscription.resumeKey) }
            subscription.deliver(LiveQueryEvent(kind: .subscribed, seq: seq, resumed: resumed))
        case "create", "enter", "update", "leave", "delete":
            guard let subscription, let kind = LiveQueryEvent.kind(ofOp: op), let client else { return false }
            let duplicate = condition.withLock { seq.map { seq in subscription.lastSeq.map { seq <= $0 } ?? false } ?? false }
            guard !duplicate, let objectJSON = message["object"] else { return false }
            let object = client.object(subscription.query.className)
            object.applyServerObject(objectJSON)
            let previous = message["original"].map { json -> RoostObject in
                let previous = client.object(subscription.query.className)
                previous.applyServerObject(json)
                return previous
            }
            applyLocally(kind, objectJSON, seq: seq, subscription: subscription)
            subscription.deliver(LiveQueryEvent(kind: kind, object: object, previous: previous, seq: seq))
            if let seq { record(seq, for: subscription) }
        case "result":
            guard let subscription, let client else { return false }
            let results = message["results"]?.arrayValue ?? []
            let objects = results.map { json -> RoostObject in
                let object = client.object(subscription.query.className)
                object.applyServerObject(json)
                return object
            }
            applyRefresh(results, subscription: subscription)
            subscription.deliver(LiveQueryEvent(kind: .refreshed, objects: objects, seq: seq))
            let resumeAt = condition.withLock {
                subscription.isRefreshing = false
                let seqs = [subscription.lastSeq, subscription.seqDuringRefresh, seq].compactMap { $0 }
                subscription.seqDuringRefresh = nil
                subscription.lastSeq = seqs.max()
                return subscription.lastSeq
            }
            if let resumeAt { try? client.localStore.setLiveSeq(resumeAt, for: subscription.resumeKey) }
        case "error":
            handleError(message, subscription: subscription, on: socket, token: token)
        default:
            break  // `unsubscribed`, and ops of newer servers.
        }
        return false
    }

    /// The server sends a resumed subscription's replay right after its `subscribed`, before anything else: any other
    /// message means the replay is over, and its head becomes the subscription's resume point.
    private func settleReplays(before op: String, requestId: Int?, seq: Int?) {
        let settled: [(key: String, seq: Int)] = condition.withLock {
            var settled: [(String, Int)] = []
            for subscription in subscriptions.values {
                guard let head = subscription.replayHead else { continue }
                let isItsReplay = requestId == subscription.requestId && LiveQueryEvent.kind(ofOp: op) != nil && (seq ?? head) <= head
                if isItsReplay { continue }
                subscription.replayHead = nil
                guard !subscription.isRefreshing else { continue }
                subscription.lastSeq = max(subscription.lastSeq ?? head, head)
                settled.append((subscription.resumeKey, head))
            }
            return settled
        }
        for (key, seq) in settled { try? client?.localStore.setLiveSeq(seq, for: key) }
    }

    /// A processed event's `seq` becomes the subscription's resume point (on disk), unless a refresh is in flight.
    private func record(_ seq: Int, for subscription: LiveSubscription) {
        let persist: Bool = condition.withLock {
            if subscription.isRefreshing {
                subscription.seqDuringRefresh = max(subscription.seqDuringRefresh ?? seq, seq)
                return false
            }
            subscription.lastSeq = max(subscription.lastSeq ?? seq, seq)
            return true
        }
        if persist { try? client?.localStore.setLiveSeq(seq, for: subscription.resumeKey) }
    }

    private func handleError(_ message: JSON, subscription: LiveSubscription?, on socket: WebSocketClient, token: String?) {
        let code = Int(message["code"]?.numberValue ?? 1)
        let text = message["error"]?.stringValue ?? "LiveQuery error"
        if code == ParseErrorCode.invalidSessionToken.rawValue {
            // The session is gone (logged out or revoked elsewhere): as for REST, forget it; then reconnect without it.
            if let client, client.sessionToken == token, token != nil {
                client.handleSessionError(RoostError.server(code: ParseErrorCode(rawValue: code), message: text))
            }
            socket.shutdown()
            return
        }
        if let subscription {
            // The server refuses this subscription (class permissions, a bad query): retrying cannot help.
            remove(subscription, error: RoostError.server(code: ParseErrorCode(rawValue: code), message: text))
            return
        }
        if code == 1, text == "Additional properties not allowed", condition.withLock({ !serverRefusesSince }) {
            // A server without Roost's resume extension refused `since`: subscribe again without it.
            condition.withLock { serverRefusesSince = true }
            socket.shutdown()
            return
        }
        if code == 4 {
            removeAll(error: RoostError.misconfigured("LiveQuery: \(text): check the application id"))
            return
        }
        if message["reconnect"] == true { socket.shutdown() }
    }

    /// Ends every subscription with `error` (one retrying cannot help: a bad certificate or application id).
    private func removeAll(error: Error) {
        for subscription in condition.withLock({ Array(subscriptions.values) }) { remove(subscription, error: error) }
    }

    private func remove(_ subscription: LiveSubscription, error: Error) {
        condition.lock()
        guard !subscription.isEnded else { return condition.unlock() }
        subscription.isEnded = true
        subscriptions.removeValue(forKey: subscription.requestId)
        if subscriptions.isEmpty { socket?.shutdown() }
        condition.unlock()
        subscription.end(error)
    }

    /// What identifies a subscription across program runs: its query, watch list and user.
    static func resumeKey(_ query: RoostQuery, watch: [String]?, user: String?) -> String {
        var parts: [String: JSON] = ["className": .string(query.className), "where": query.whereJSON]
        if let keys = query.selectedKeys { parts["keys"] = .array(keys.map(JSON.string)) }
        if let watch { parts["watch"] = .array(watch.map(JSON.string)) }
        parts["user"] = user.map(JSON.string) ?? .null
        return JSON.object(parts).jsonText
    }
}
