import RoostCore

/// Change events (live and replayed) and the `query` op, on the LiveQuery worker thread.
extension LiveQueryServer {
    /// One change's versions, decoded once for all its subscribers.
    struct DecodedChange {
        let seq: Int64
        let before: StoredObject?
        let after: StoredObject?

        /// Nil when a stored version does not decode (a corrupt row: nothing is sent for it).
        init?(_ change: ObjectChange) {
            seq = change.seq
            do {
                before = try change.before?.decoded()
                after = try change.after?.decoded()
            } catch {
                return nil
            }
        }
    }

    /// What one subscription gets for one change: the op (`create`, `enter`, `update`, `leave` or `delete`) and the
    /// change's versions as the subscriber may see them.
    struct Event {
        let op: String
        let object: JSON?
        let original: JSON?

        /// The message `client` gets for it (`Client._pushEvent`), with the change's `seq`.
        func message(for client: LiveQueryClient, requestId: Double, seq: Int64) -> JSON {
            var extra: [String: JSON] = ["seq": .number(Double(seq))]
            extra["object"] = object
            extra["original"] = original
            return client.message(op, requestId: requestId, extra: extra)
        }
    }

    /// One change's events, to every subscription of its class (parse-server's `_onAfterSave`/`_onAfterDelete`).
    func deliver(_ change: ObjectChange) {
        guard let decoded = DecodedChange(change) else { return }
        // Each subscriber's session is looked up again for every change (the REST API's session cache answers), so a
        // log-out, a revoked session, a deleted user or a role change holds for live events at once, not only at subscribe.
        var sessions: [String: AuthenticatedUser?] = [:]
        // Subscriptions with the same query and audience are matched once, and share one event's bytes.
        let memo = LiveQueryChangeMemo()
        // Every message of this change in one frame buffer per socket thread, handed to it some 32 KB at a time (it
        // sends those while the rest are made); one client's messages stay in the order they are made, closes included.
        let handed = 32 * 1024
        var outgoing = hub.hubs.map { _ in WebSocketFrameBatch(capacity: (handed + 4096, 256)) }
        func hand(_ index: Int) {
            hub.send(outgoing[index], onHub: index)
            outgoing[index] = WebSocketFrameBatch(capacity: (handed + 4096, 256))
        }
        defer { for index in outgoing.indices { hub.send(outgoing[index], onHub: index) } }
        let tail = LiveQueryEventBytes.tail(seq: change.seq)
        var requestId: (value: Double, bytes: [UInt8]) = (.nan, [])
        for (id, client) in clients {
            let onHub = hub.hubIndex(of: id)
            if outgoing[onHub].bytes.count >= handed { hand(onHub) }
            for var subscription in client.subscriptions(of: change.className) where change.seq > subscription.deliveredThrough {
                client.subscriptions[subscription.requestId]?.deliveredThrough = change.seq
                if let token = subscription.user?.sessionToken {
                    if sessions[token] == nil {
                        do {
                            sessions[token] = .some(try authenticate(token))
                        } catch let error as ParseError where error.code == .invalidSessionToken {
                            sessions[token] = .some(nil)
                        } catch {
                            // Not an answer about the session (a read stopped at shutdown, say): the client reconnects
                            // and resumes from the change log, so nothing is lost and no session is wrongly ended.
                            hand(onHub)
                            closeForResume(id)
                            break
                        }
                    }
                    guard let current = sessions[token] ?? nil else {
                        // As Parse answers a subscription whose session is gone: 209, and no more of its events.
                        client.subscriptions.removeValue(forKey: subscription.requestId)
                        forget([subscription])
                        outgoing[onHub].append(utf8: liveQueryError(code: ParseErrorCode.invalidSessionToken.rawValue, "Invalid session token",
                                                             reconnect: false, requestId: subscription.requestId).encoded(), to: id)
                        continue
                    }
                    subscription = subscription.reading(as: current)
                }
                do {
                    guard let event = try memo.event(subscription, isMaster: client.hasMasterKey, make: {
                        try self.event(decoded, for: subscription, of: client, memo: memo).map(LiveQueryEventBytes.init)
                    }) else { continue }
                    if requestId.value != subscription.requestId {  // Written once for a run of subscribers with the same id.
                        requestId.value = subscription.requestId
                        LiveQueryEventBytes.requestId(subscription.requestId, into: &requestId.bytes)
                    }
                    let prefix = client.messagePrefix, requestIdBytes = requestId.bytes
                    outgoing[onHub].append(to: id, payloadCount: event.count(prefix: prefix, requestId: requestIdBytes, tail: tail)) {
                        event.write(prefix: prefix, requestId: requestIdBytes, tail: tail, to: &$0)
                    }
                } catch let error as ParseError where Self.isTransient(error) {
                    hand(onHub)
                    closeForResume(id)
                    break
                } catch {
                    outgoing[onHub].append(utf8: errorMessage(error, requestId: subscription.requestId).encoded(), to: id)
                }
            }
        }
    }

    /// A read that stopped (shutdown, the query time limit) says nothing about the subscription itself.
    static func isTransient(_ error: ParseError) -> Bool { error.code == .timeout || error.code == .internalServerError }

    /// Ends a client whose events could not be worked out for a reason of the server's (1011): it reconnects and
    /// resumes from its last `seq`, where an error message would have ended its subscription or its session.
    func closeForResume(_ id: UInt64) {
        guard let client = clients.removeValue(forKey: id) else { return }
        forget(client.subscriptions.values)
        hub.close(id, code: .internalError, reason: "try again")
    }

    /// The events a new subscription missed after `since` (through `head`), judged with its current access and
    /// the versions the log holds, in commit order; nil when the log no longer reaches back to `since` for its
    /// class, the replay would be too large for the socket, or `address` has used its replay budget (the client
    /// refreshes with `query`).
    func missedEvents(_ subscription: LiveQueryClient.Subscription, client: LiveQueryClient, since: Int64, through head: Int64,
                      address: CountedAddress) -> [JSON]? {
        guard settings.logsChanges, replayBudgets.allows(address, at: OpenConnection.now()) else { return nil }
        let found = try? storage.read { db in
            try ChangeLog.changes(of: subscription.className, after: since, through: head, limit: settings.maxReplayChanges, in: db)
        }
        guard let changes = found ?? nil else { return nil }
        replayBudgets.charge(changes.count, to: address, at: OpenConnection.now())
        var events: [JSON] = []
        var bytes = 0
        for change in changes {
            guard let decoded = DecodedChange(change) else { continue }
            let found: Event?
            do {
                found = try event(decoded, for: subscription, of: client)
            } catch {
                return nil  // Its permissions no longer hold: the client's `query` will say why.
            }
            guard let event = found else { continue }
            let encoded = event.message(for: client, requestId: subscription.requestId, seq: change.seq).encoded()  // Encoded once: measured here, sent as these bytes.
            bytes += encoded.count
            guard bytes <= settings.maxReplayBytes else { return nil }
            events.append(.encodedFragment(encoded))
        }
        return events
    }

    /// The event a subscription gets for one change (nil for none), its objects as the subscriber may see them.
    /// - Throws: `ParseError` when the subscription's permissions no longer hold (a CLP changed).
    /// - Parameter memo: the change's answers shared by subscriptions with the same query and audience (live delivery).
    func event(_ change: DecodedChange, for subscription: LiveQueryClient.Subscription, of client: LiveQueryClient,
               memo: LiveQueryChangeMemo? = nil) throws -> Event? {
        let matched = try matcher.matches(subscription, isMaster: client.hasMasterKey, versions: [change.before, change.after], memo: memo)
        guard let op = Self.event(before: change.before, after: change.after, matchedBefore: matched[0],
                                  matchedAfter: matched[1], watch: subscription.watch)
        else { return nil }
        var object: JSON?, original: JSON?
        if let shown = op == "delete" ? change.before : change.after {
            // Parse sends a `leave` with the new version even when the subscriber just lost read access to it; Roost
            // sends the version before, which the subscriber matched and so could read: nothing it may no longer read,
            // and a whole object for SDKs that decode one (Parse-Swift's `.left`).
            let mayRead = op != "leave" || (try? matcher.mayRead(shown, subscription, isMaster: client.hasMasterKey, memo: memo)) == true
            object = matcher.visibleJSON(mayRead ? shown : change.before ?? shown, subscription, isMaster: client.hasMasterKey,
                                         identityOnly: !mayRead && change.before == nil, memo: memo)
        }
        if op != "create", op != "delete", let before = change.before {
            // An `enter` may come from gaining read access: the version before was not the subscriber's to read,
            // so only its identity is sent (Parse sends it whole).
            let mayReadBefore = op != "enter" || (try? matcher.mayRead(before, subscription, isMaster: client.hasMasterKey, memo: memo)) == true
            original = matcher.visibleJSON(before, subscription, isMaster: client.hasMasterKey, identityOnly: !mayReadBefore, memo: memo)
        }
        return Event(op: op, object: object, original: original)
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

    /// parse-server's `_handleQuery`: the subscription's current matches (with its session, `keys` and protected
    /// fields applied) as `result`, plus Roost's `seq`: every change up to it is reflected in the results.
    func handleQuery(_ requestId: Double, from id: UInt64) {
        guard let client = clients[id] else {
            return send(liveQueryError(code: 2, "Can not find this client, make sure you connect to server before querying"), to: id)
        }
        guard var subscription = client.subscriptions[requestId] else {
            return send(liveQueryError(code: 2, "Subscription not found for requestId \(Self.number(requestId))", requestId: requestId), to: id)
        }
        do {
            if let token = subscription.user?.sessionToken { subscription = subscription.reading(as: try authenticate(token)) }
            var head = live.withLock { $0.head }  // Read first: every change up to it is in the snapshot the query reads.
            // PostgreSQL: this node's feed lags or rests (see `handleSubscribe`): the database's head, read first too.
            if storage.isShared, let committed = try? storage.read({ try ChangeLog.head(in: $0) }) { head = max(head, committed) }
            let objects = try matcher.results(subscription, isMaster: client.hasMasterKey, limit: settings.maxResults)
            // At most `maxResults` objects and `maxReplayBytes` of them, so one answer never overflows the socket's outbox.
            var results: [JSON] = [], bytes = 0
            for object in objects {
                let shown = matcher.visibleJSON(object, subscription, isMaster: client.hasMasterKey)
                let encoded = shown.encoded()  // Encoded once: measured here, sent as these bytes.
                bytes += encoded.count
                guard bytes <= settings.maxReplayBytes else { break }
                results.append(.encodedFragment(encoded))
            }
            send(client.message("result", requestId: requestId, extra: ["results": .array(results), "seq": .number(Double(head))]), to: id)
        } catch {
            send(errorMessage(error, requestId: requestId), to: id)
        }
    }
}
