import Foundation
import RoostCore

/// A live query: an `AsyncSequence` of `LiveQueryEvent`s (or a callback's), until `cancel()`, the end of the
/// loop that reads it, or a failure retrying cannot fix (no read access to the class, a query the server refuses, a
/// wrong application id, a TLS certificate that fails verification). Disconnects are not failures: the client reconnects with backoff and resumes. A subscription
/// keeps its client (and the client's socket) alive until it ends.
///
/// ```swift
/// let subscription = client.query("Todo").whereKey("done", equalTo: false).subscribe()
/// for try await event in subscription { print(event.kind, event.object?["title"] as String? ?? "") }
/// ```
public final class LiveSubscription: AsyncSequence, @unchecked Sendable {
    public typealias Element = LiveQueryEvent

    public let query: RoostQuery
    /// Fields whose change sends an `updated` (Parse's `watch`); nil: any field.
    public let watch: [String]?
    /// When set, every object the query matches is kept pinned under this name (pinned as it enters, unpinned as it
    /// leaves), in event order, before the event is handed out.
    public let pinName: String?
    let requestId: Int
    /// Where the last processed `seq` is kept (so a restarted program resumes where it stopped).
    let resumeKey: String
    private let stream: AsyncThrowingStream<LiveQueryEvent, Error>
    private let continuation: AsyncThrowingStream<LiveQueryEvent, Error>.Continuation
    private let handler: (@Sendable (Result<LiveQueryEvent, Error>) -> Void)?
    private weak var connection: LiveQueryConnection?

    // Guarded by the connection's lock.
    /// The highest `seq` processed (from events, `subscribed` and `result`).
    var lastSeq: Int?
    /// A `query` is in flight after `resumed: false`: seqs seen meanwhile are kept, not recorded, until its result.
    var isRefreshing = false
    var seqDuringRefresh: Int?
    /// After `resumed: true`: the `subscribed` seq. Once the replay is over (any later message), it is the resume point,
    /// even when the replay had nothing for this subscription (a quiet one must not fall behind the log's window).
    var replayHead: Int?
    var isEnded = false

    init(query: RoostQuery, watch: [String]?, pinName: String?, requestId: Int, resumeKey: String, lastSeq: Int?, connection: LiveQueryConnection,
         handler: (@Sendable (Result<LiveQueryEvent, Error>) -> Void)?) {
        self.query = query
        self.watch = watch
        self.pinName = pinName
        self.requestId = requestId
        self.resumeKey = resumeKey
        self.lastSeq = lastSeq
        self.connection = connection
        self.handler = handler
        (stream, continuation) = AsyncThrowingStream.makeStream(bufferingPolicy: .unbounded)
        continuation.onTermination = { [weak self] _ in self?.cancel() }
    }

    public func makeAsyncIterator() -> Iterator { Iterator(base: stream.makeAsyncIterator(), ending: Ending(self)) }

    /// The events, in order; when the loop reading them ends (a `break`, a thrown error), the subscription ends too.
    public struct Iterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<LiveQueryEvent, Error>.Iterator
        let ending: Ending

        public mutating func next() async throws -> LiveQueryEvent? { try await base.next() }
    }

    /// Cancels the subscription when the last copy of its iterator goes away.
    public final class Ending: Sendable {
        private weak let subscription: LiveSubscription?

        init(_ subscription: LiveSubscription) { self.subscription = subscription }

        deinit { subscription?.cancel() }
    }

    /// Stops the events (the server is told to unsubscribe). Idempotent.
    public func cancel() {
        connection?.remove(self)
    }

    /// Hands an event to the reader (called on the connection's thread, in order).
    func deliver(_ event: LiveQueryEvent) {
        if let handler { handler(.success(event)) } else { continuation.yield(event) }
    }

    /// Ends the sequence: normally (`cancel`) or with the server's refusal.
    func end(_ error: Error?) {
        if let error, let handler { handler(.failure(error)) }
        if let error { continuation.finish(throwing: error) } else { continuation.finish() }
    }

    /// The `subscribe` message, resuming after `lastSeq` when the server takes `since`.
    func subscribeMessage(withSince: Bool) -> JSON {
        var query: [String: JSON] = ["className": .string(self.query.className), "where": self.query.whereJSON]
        if let keys = self.query.selectedKeys { query["keys"] = .array(keys.map(JSON.string)) }
        if let watch { query["watch"] = .array(watch.map(JSON.string)) }
        var message: [String: JSON] = ["op": "subscribe", "requestId": .number(Double(requestId)), "query": .object(query)]
        if withSince, let lastSeq { message["since"] = .number(Double(lastSeq)) }
        return .object(message)
    }
}

extension RoostQuery {
    /// Live changes to the objects this query matches (see `LiveSubscription`). `watch`: only changes to these
    /// fields send `updated`. `pinName`: keep the matching objects pinned under that name (for offline reads).
    /// `select(_:)` trims the objects the events carry. Order, limit and skip do not apply.
    public func subscribe(watch: [String]? = nil, pinName: String? = nil) -> LiveSubscription {
        client.liveQuery.add(self, watch: watch, pinName: pinName, handler: nil)
    }

    /// The callback form, for programs without async code: `handler` runs on the client's LiveQuery thread, one
    /// event at a time, in order; a `.failure` ends the subscription.
    @discardableResult
    public func subscribe(watch: [String]? = nil, pinName: String? = nil,
                          _ handler: @escaping @Sendable (Result<LiveQueryEvent, Error>) -> Void) -> LiveSubscription {
        client.liveQuery.add(self, watch: watch, pinName: pinName, handler: handler)
    }
}

extension RoostClient {
    /// Live changes to what `query` matches (same as `query.subscribe(watch:pinName:)`).
    public func subscribe(_ query: RoostQuery, watch: [String]? = nil, pinName: String? = nil) -> LiveSubscription {
        query.subscribe(watch: watch, pinName: pinName)
    }

    /// The callback form of `subscribe(_:watch:pinName:)`.
    @discardableResult
    public func subscribe(_ query: RoostQuery, watch: [String]? = nil, pinName: String? = nil,
                          _ handler: @escaping @Sendable (Result<LiveQueryEvent, Error>) -> Void) -> LiveSubscription {
        query.subscribe(watch: watch, pinName: pinName, handler)
    }

    /// Posted (object: the client) once per live change that updated this client's local data (the query cache
    /// and pinned objects); `userInfo` has `className` and `objectId` (absent for a refresh).
    public static let dataDidChangeNotification = Notification.Name("RoostClientDataDidChange")
}
