import Foundation
import RoostCore

/// Delivers `saveEventually`/`deleteEventually` commands exactly once, in order, whenever the
/// server is reachable.
///
/// Every command carries a request id the server deduplicates on (`X-Parse-Request-Id`), kept across
/// retries and restarts: a reply lost after the commit is replayed, never re-applied. What happens
/// to a command depends on what comes back (one rule, applied to single requests, `/batch` items and
/// the automatic user's creation alike):
/// - **Retried** (capped exponential backoff with jitter): no answer, timeouts, 5xx (503 included),
///   429, and unusable replies — a body that is not JSON, a reply not shaped like the answer to this
///   request (`WriteReply`), or one echoing another request's id.
/// - **Refused for good**: a Parse error (`{code, error}`) or another 4xx. The command moves to
///   `failedCommands()` and its caller hears of it.
/// - **Waiting for a sign-in**: 209, the session was revoked (logged out elsewhere). The user's
///   commands stay queued and are sent under the new session once that user logs in again (the
///   automatic anonymous user signs itself in again with its anonymous id).
/// - **Paused, configuration is wrong**: 403 `unauthorized` (wrong application id) or a 404 without a
///   Parse code (no Parse API at the URL). Nothing is discarded; waiting callers get the error, and
///   the queue tries again when asked (a new command, a new wait, or a client configured right).
///
/// Consecutive independent commands of one user go through `/batch`, 50 at most.
final class EventuallyQueue: @unchecked Sendable {
    let store: EventuallyStore
    private weak var client: RoostClient?
    private let lock = NSLock()
    private var completions: [String: [@Sendable (Result<Void, Error>) -> Void]] = [:]
    /// Live objects waiting for their queued create, by localId.
    private var waitingObjects: [String: WeakObject] = [:]
    private var drainTask: Task<Void, Never>?
    private var wakeUp: CheckedContinuation<Void, Never>?
    private var hasSignal = false
    /// Callers of `waitUntilEmpty`, resumed when the queue empties or stalls (with why), or when cancelled.
    private var idleWaiters: [UUID: CheckedContinuation<Void, Error>] = [:]

    private struct WeakObject { weak var object: RoostObject? }
    /// The objectIds of the current run's targets, read in one query (only the drain task uses it).
    private var knownObjectIds: [String: String]?

    /// The objectId of a command's target, if it exists on the server.
    private func targetObjectId(_ command: QueuedCommand) throws -> String? {
        if let objectId = command.objectId { return objectId }
        guard let localId = command.localId else { return nil }
        if let knownObjectIds { return knownObjectIds[localId] }
        return try store.objectId(forLocalId: localId)
    }

    init(client: RoostClient, store: EventuallyStore) {
        self.client = client
        self.store = store
    }

    deinit { drainTask?.cancel() }

    /// Stops draining (the client is going away); queued commands stay on disk for the next launch.
    func shutdown() {
        let (task, waiter) = lock.withLock { () -> (Task<Void, Never>?, CheckedContinuation<Void, Never>?) in
            defer {
                drainTask = nil
                wakeUp = nil
            }
            return (drainTask, wakeUp)
        }
        task?.cancel()
        waiter?.resume()
        resumeIdleWaiters(.failure(RoostError.invalidArgument("the client was shut down")))
    }

    // MARK: Queueing

    /// Queues the object's edits (and first, creates of new objects it points to). Durable on return.
    /// The pinned copies of the objects (and with `pinName`, a new pin of `object`) change in the same
    /// transaction: the local list never shows an object whose creation is not queued.
    func enqueueSave(_ object: RoostObject, pinName: String? = nil, completion: (@Sendable (Result<Void, Error>) -> Void)?) throws {
        guard let client else { return }
        var rows: [(kind: QueuedCommand.Kind, className: String, objectId: String?, localId: String?, body: JSON,
                    userKey: String?, requestId: String)] = []
        var handedOver: [RoostObject] = []
        var seen = Set<ObjectIdentifier>()
        let userKey = client.currentUserKey
        func visit(_ object: RoostObject) {
            guard seen.insert(ObjectIdentifier(object)).inserted else { return }
            for child in object.pendingReferences() where !(child is RoostUser && (child as! RoostUser).isLazy) {
                visit(child)
            }
            guard object.isDirty || object.objectId == nil, let body = object.handOverEdits() else { return }
            let requestId = UUID().uuidString.lowercased()
            rows.append((.save, object.className, object.objectId, object.objectId == nil ? object.localId : nil, body,
                         userKey, requestId))
            handedOver.append(object)
        }
        visit(object)
        // Local queries see queued changes at once.
        let pins = handedOver.map { ($0.className, [$0.localId] + [$0.objectId].compactMap { $0 }, $0.pinJSON, $0.pinKey) }
        let newPin = pinName.map { name in (name, object.className, object.pinKey, object.pinJSON) }
        try store.enqueue(rows) { db in
            for (className, keys, json, newKey) in pins {
                try LocalStore.refresh(className: className, keys: keys, json: json, newKey: newKey, in: db)
            }
            if let newPin { try LocalStore.pin([(newPin.1, newPin.2, newPin.3)], name: newPin.0, in: db) }
        }
        lock.withLock {
            for (row, object) in zip(rows, handedOver) where row.objectId == nil {
                waitingObjects[row.localId!] = WeakObject(object: object)
            }
            if let completion, let last = rows.last { completions[last.requestId, default: []].append(completion) }
        }
        if rows.isEmpty { completion?(.success(())) }
        signal()
    }

    func enqueueDelete(_ object: RoostObject, completion: (@Sendable (Result<Void, Error>) -> Void)?) throws {
        guard let client else { return }
        let requestId = UUID().uuidString.lowercased()
        try store.enqueue([(.delete, object.className, object.objectId, object.objectId == nil ? object.localId : nil, [:],
                            client.currentUserKey, requestId)])
        if let completion { lock.withLock { completions[requestId, default: []].append(completion) } }
        signal()
    }

    /// Starts draining (again) now.
    func signal() {
        lock.withLock {
            if drainTask == nil {
                drainTask = Task.detached { [weak self] in await self?.drain() }
            }
            if let wakeUp {
                self.wakeUp = nil
                wakeUp.resume()
            } else {
                hasSignal = true
            }
        }
    }

    /// Returns once every queued command was delivered or refused for good.
    /// - Throws: `RoostError.misconfigured` when the server refuses the client's configuration, a 209
    ///   `RoostError.server` when the commands left wait for their user to sign in again,
    ///   `CancellationError` when the calling task is cancelled.
    func waitUntilEmpty() async throws {
        if try store.countPending() == 0 { return }
        let id = UUID()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
                lock.withLock { idleWaiters[id] = continuation }
                if Task.isCancelled { resumeIdleWaiter(id, .failure(CancellationError())) }
                signal()  // Also a new attempt for a queue paused on a refusal.
            }
        } onCancel: {
            resumeIdleWaiter(id, .failure(CancellationError()))
        }
    }

    // MARK: Draining

    private func drain() async {
        var failures = 0
        while !Task.isCancelled, client != nil {
            do {
                try await signAutomaticUserInAgain()
                try resumeUsersWhoSignedInAgain()
                let commands = try store.next(limit: 50)
                if commands.isEmpty {
                    let waiting = try store.countPending()
                    // What is left (if anything) waits for its users to sign in again.
                    resumeIdleWaiters(waiting == 0 ? .success(()) : .failure(RoostError.server(
                        code: .invalidSessionToken,
                        message: "Invalid session token: log in again to send \(waiting) queued change(s)")))
                    await waitForSignal()
                    continue
                }
                try await createAutomaticUserIfNeeded(for: commands)
                try await deliver(try group(commands))
                failures = 0
            } catch let error as RoostError where error.isMisconfiguration {
                // No retry can fix this: keep every command, tell the waiting callers, and try again when asked.
                resumeIdleWaiters(.failure(error))
                await waitForSignal()
            } catch {
                // A full or read-only disk: the waiting callers hear why at once (not after their timeout, as
                // "still waiting"); the loop retries, and the server drops repeats by request id.
                if let error = error as? RoostError, case .localStorage = error { resumeIdleWaiters(.failure(error)) }
                failures += 1
                // Capped exponential backoff with jitter: no busy loop, no storm when the server returns.
                let delay = min(30.0, 0.2 * pow(2.0, Double(min(failures, 10)))) * Double.random(in: 0.5...1.0)
                try? await Task.sleep(nanoseconds: UInt64(delay * 1_000_000_000))
            }
        }
    }

    private func waitForSignal() async {
        await withCheckedContinuation { continuation in
            let resumeNow = lock.withLock { () -> Bool in
                if hasSignal {
                    hasSignal = false
                    return true
                }
                wakeUp = continuation
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    private func resumeIdleWaiters(_ result: Result<Void, Error>) {
        let waiters = lock.withLock { () -> [CheckedContinuation<Void, Error>] in
            defer { idleWaiters.removeAll() }
            return Array(idleWaiters.values)
        }
        waiters.forEach { $0.resume(with: result) }
    }

    private func resumeIdleWaiter(_ id: UUID, _ result: Result<Void, Error>) {
        lock.withLock { idleWaiters.removeValue(forKey: id) }?.resume(with: result)
    }

    /// Users whose session was revoked and who have one again (logged in anew) get their commands sent.
    private func resumeUsersWhoSignedInAgain() throws {
        for (userKey, revokedToken) in try store.awaitingSignIn() {
            if let token = try sessionToken(for: userKey), token != revokedToken { try store.signedInAgain(userKey: userKey) }
        }
    }

    /// The automatic user needs no one to sign it in again: its anonymous id is its credential. When its
    /// session was revoked (or replaced by another process sharing this directory), it logs in anew.
    private func signAutomaticUserInAgain() async throws {
        guard let client, let user = client.currentUser, let objectId = user.objectId, let anonymousId = automaticUserId(user, client),
            let revoked = try store.awaitingSignIn().first(where: { entry in
                (entry.userKey == user.localId || (try? resolvedKey(entry.userKey)) == objectId) && entry.revokedToken == user.sessionToken
            })
        else { return }
        let answer = try await client.transport.send("POST", "users", body: ["authData": ["anonymous": ["id": .string(anonymousId)]]])
        guard answer["objectId"]?.stringValue == objectId, let token = answer["sessionToken"]?.stringValue, token != revoked.revokedToken
        else { return }
        user.lock.withLock { user.sessionTokenStorage = token }
        client.persistIfCurrent(user)
    }

    /// The anonymous id of `user` when it is this storage directory's automatic user, created on the server.
    private func automaticUserId(_ user: RoostUser, _ client: RoostClient) -> String? {
        guard !user.isLazy, let id = user.lock.withLock({ user.state.serverData["authData"]?["anonymous"]?["id"] })?.stringValue,
            id == (try? client.userStore.anonymousId())
        else { return nil }
        return id
    }

    /// Commands of an automatic user that exists only locally are preceded by its creation.
    private func createAutomaticUserIfNeeded(for commands: [QueuedCommand]) async throws {
        guard let client, let user = client.currentUser else { return }
        guard user.isLazy else {
            try recordAutomaticUserCreatedElsewhere(user, client: client)
            return
        }
        guard commands.contains(where: { $0.userKey == user.localId }) else { return }
        try await user.save()
        if let objectId = user.objectId { try store.record(localId: user.localId, objectId: objectId) }
    }

    /// Another process sharing this storage directory may have created the automatic user (this one
    /// read it from disk, created) and not yet recorded its local id: record it here, or the commands
    /// naming that local id would be refused as pointing to an unsaved object.
    private func recordAutomaticUserCreatedElsewhere(_ user: RoostUser, client: RoostClient) throws {
        guard let objectId = user.objectId, let anonymousId = automaticUserId(user, client) else { return }
        let localId = RoostUser.automaticLocalId(anonymousId)
        if try store.objectId(forLocalId: localId) == nil { try store.record(localId: localId, objectId: objectId) }
    }

    /// A resolved command, ready to send.
    private struct Delivery {
        let command: QueuedCommand
        let method: String
        let path: String
        let body: JSON?
        let sessionToken: String?
    }

    /// The longest run of leading commands that can go in one request: one user's, one command per
    /// object, none pointing to an object created in the same run. Resolution errors fail the command.
    private func group(_ commands: [QueuedCommand]) throws -> [Delivery] {
        knownObjectIds = try store.objectIds(forLocalIds: commands.compactMap(\.localId))
        defer { knownObjectIds = nil }
        var deliveries: [Delivery] = []
        var targets = Set<String>()
        for command in commands {
            let target = command.objectId ?? command.localId ?? command.requestId
            if command.kind == .logout || targets.contains(target) {
                if deliveries.isEmpty, command.kind == .logout { return [try resolve(command)] }
                break
            }
            let delivery: Delivery
            do {
                delivery = try resolve(command)
            } catch let error as RoostError {
                if !deliveries.isEmpty { break }  // Maybe it depends on one of these: send them first.
                try store.fail(command, code: .invalidPointer, message: error.description)
                finish(command, .failure(error))
                throw error
            }
            if let first = deliveries.first, first.sessionToken != delivery.sessionToken { break }
            deliveries.append(delivery)
            targets.insert(target)
        }
        return deliveries
    }

    private func resolve(_ command: QueuedCommand) throws -> Delivery {
        let token = try sessionToken(for: command.userKey)
        let path = command.className == "_User" ? "users" : "classes/\(command.className)"
        switch command.kind {
        case .logout:
            return Delivery(command: command, method: "POST", path: "logout", body: nil, sessionToken: token)
        case .delete:
            guard let objectId = try targetObjectId(command) else {
                throw RoostError.invalidArgument("Deleted an object whose creation never reached the server.")
            }
            return Delivery(command: command, method: "DELETE", path: "\(path)/\(objectId)", body: nil, sessionToken: token)
        case .save:
            let body = try resolveLocalIds(command.body, isACL: false)
            if let objectId = try targetObjectId(command) {
                return Delivery(command: command, method: "PUT", path: "\(path)/\(objectId)", body: body, sessionToken: token)
            }
            return Delivery(command: command, method: "POST", path: path, body: body, sessionToken: token)
        }
    }

    /// Whether the current user, if the command is theirs, has a request in flight that replaces its session.
    private func isChangingSession(_ userKey: String?) throws -> Bool {
        guard let userKey, let user = currentUser(queued: userKey, resolved: try resolvedKey(userKey)) else { return false }
        return user.lock.withLock { user.sessionChangesInFlight > 0 }
    }

    /// The current token of the user who queued a command: the live one (it changes on sign-up
    /// conversion and password change), or the one kept when that user logged out.
    private func sessionToken(for userKey: String?) throws -> String? {
        guard let userKey else { return nil }
        let resolved = try resolvedKey(userKey)
        if let user = currentUser(queued: userKey, resolved: resolved) { return user.sessionToken }
        return try store.sessionToken(userKey: userKey) ?? store.sessionToken(userKey: resolved)
    }

    /// The current user when it is the one a command was queued by (`userKey`: its objectId, or its
    /// local id from before it was saved; `resolved`: that local id's objectId, once known).
    private func currentUser(queued userKey: String, resolved: String) -> RoostUser? {
        guard let user = client?.currentUser, user.localId == userKey || user.objectId == resolved else { return nil }
        return user
    }

    /// A local id as the objectId it was saved under, once known.
    private func resolvedKey(_ userKey: String) throws -> String {
        userKey.hasPrefix("local_") ? (try store.objectId(forLocalId: userKey) ?? userKey) : userKey
    }

    private func resolveLocalIds(_ json: JSON, isACL: Bool) throws -> JSON {
        switch json {
        case .object(let members):
            if members["__type"] == "Pointer", let localId = members["localId"]?.stringValue {
                guard let id = try store.objectId(forLocalId: localId), let className = members["className"]?.stringValue else {
                    throw RoostError.invalidArgument("Tried to save an object with a pointer to a new, unsaved object.")
                }
                return WireValue.pointer(className, id)
            }
            var result: [String: JSON] = [:]
            for (key, value) in members {
                var resolvedKey = key
                if isACL, key.hasPrefix("local_") {
                    guard let id = try store.objectId(forLocalId: key) else {
                        throw RoostError.invalidArgument("Tried to save an ACL naming a user that does not exist yet.")
                    }
                    resolvedKey = id
                }
                result[resolvedKey] = try resolveLocalIds(value, isACL: key == "ACL" && !isACL)
            }
            return .object(result)
        case .array(let elements): return .array(try elements.map { try resolveLocalIds($0, isACL: false) })
        default: return json
        }
    }

    /// Sends a run of commands: alone with `X-Parse-Request-Id`, or through `/batch` with an id per item.
    /// - Throws: transport errors (the run is retried later, ids unchanged).
    private func deliver(_ deliveries: [Delivery]) async throws {
        guard let client, let first = deliveries.first else { return }
        if deliveries.count == 1 {
            do {
                let reply = try await client.transport.exchange(first.method, first.path, body: first.body,
                                                                sessionToken: first.sessionToken, requestId: first.command.requestId)
                guard isWellFormed(reply.json, for: first, status: reply.status) else { throw WriteReply.unusable }
                try succeed(first, reply.json)
            } catch let error as RoostError where error.isRefusal {
                try refuse(first, error)
            }
            return
        }
        let mount = client.transport.serverURL.path
        let requests: [JSON] = deliveries.map { delivery in
            var item: [String: JSON] = ["method": .string(delivery.method), "path": .string(mount + "/" + delivery.path),
                                        "requestId": .string(delivery.command.requestId)]
            if let body = delivery.body { item["body"] = body }
            return .object(item)
        }
        let answer: JSON
        do {
            answer = try await client.transport.send("POST", "batch", body: ["requests": .array(requests)], sessionToken: first.sessionToken)
        } catch let error as RoostError where error.isRefusal {
            // The batch as a whole was refused: deliver one by one, so each command gets its own verdict.
            for delivery in deliveries { try await deliver([delivery]) }
            return
        }
        // Anything but one verdict per command, each shaped as its request's answer, is no answer:
        // the whole run is sent again (the request ids make that safe).
        guard WriteReply.isWellFormedBatch(answer, count: deliveries.count),
            zip(answer.arrayValue ?? [], deliveries).allSatisfy({ item, delivery in
                item["success"].map { isWellFormed($0, for: delivery, status: nil) } ?? true
            })
        else { throw WriteReply.unusable }
        let results = answer.arrayValue ?? []
        var succeeded: [(Delivery, JSON)] = []
        for (index, delivery) in deliveries.enumerated() {
            let item = results[index]
            if let success = item["success"] {
                succeeded.append((delivery, success))
            } else {
                try succeed(succeeded)  // Keep the order: what came before this item is done.
                succeeded = []
                let code = ParseErrorCode(rawValue: Int(item["error"]?["code"]?.numberValue ?? 1))
                let message = item["error"]?["error"]?.stringValue ?? ""
                try refuse(delivery, RoostError.server(code: code, message: message.isEmpty ? "refused (no message)" : message))
            }
        }
        try succeed(succeeded)
    }

    private func isWellFormed(_ answer: JSON, for delivery: Delivery, status: Int?) -> Bool {
        WriteReply.isWellFormed(answer, method: delivery.command.kind == .logout ? "DELETE" : delivery.method,
                                className: delivery.command.className, status: status)
    }

    private func succeed(_ delivery: Delivery, _ answer: JSON) throws {
        try succeed([(delivery, answer)])
    }

    /// Records delivered commands in one durable transaction, then updates live objects and callers.
    private func succeed(_ delivered: [(Delivery, JSON)]) throws {
        guard !delivered.isEmpty else { return }
        let created = delivered.compactMap { delivery, answer -> (objectId: String, localId: String, className: String)? in
            guard delivery.method == "POST", delivery.command.kind == .save, let localId = delivery.command.localId,
                let objectId = answer["objectId"]?.stringValue else { return nil }
            return (objectId, localId, delivery.command.className)
        }
        // The pinned copies learn their objectIds in the same transaction (a lock error retries both).
        try store.completeAll(delivered.map { delivery, answer in
            (delivery.command, delivery.method == "POST" ? answer["objectId"]?.stringValue : nil)
        }) { db in
            for (objectId, localId, className) in created {
                try LocalStore.assignObjectId(objectId, toLocalId: localId, className: className, in: db)
            }
        }
        for (delivery, answer) in delivered {
            if let localId = delivery.command.localId,
                let object = lock.withLock({ waitingObjects.removeValue(forKey: localId)?.object })
            {
                object.applyEventualAnswer(answer)
            }
            finish(delivery.command, .success(()))
        }
    }

    /// A Parse error is final for this command: it moves to the failed table, and its caller hears of it.
    private func refuse(_ delivery: Delivery, _ error: RoostError) throws {
        if error.code == .duplicateRequest, delivery.method != "POST" {
            // The server already applied this command's request id, sent in another form: another process on
            // this storage sent the create first, and this one, knowing the objectId now, sent it as a PUT.
            // Request ids are one per command, so the write is done (once); there is no reply to apply.
            try succeed(delivery, [:])
            return
        }
        if delivery.command.kind == .logout, error.code == .invalidSessionToken {
            try store.complete(delivery.command, createdObjectId: nil)  // Already logged out.
            return
        }
        if error.code == .invalidSessionToken,
            try sessionToken(for: delivery.command.userKey) != delivery.sessionToken || isChangingSession(delivery.command.userKey) {
            // The user's token changed, or is being changed, while this was in flight (sign-up conversion,
            // new password): send again with the new one.
            throw RoostError.transport("session token replaced; retrying with the new one")
        }
        if error.code == .invalidSessionToken, let userKey = delivery.command.userKey, let revoked = delivery.sessionToken {
            // Revoked (logged out elsewhere): the user's commands wait for them to log in again.
            try store.awaitSignIn(userKey: userKey, revokedToken: revoked)
            return
        }
        try store.fail(delivery.command, code: error.code ?? .otherCause, message: error.description)
        finish(delivery.command, .failure(error))
    }

    private func finish(_ command: QueuedCommand, _ result: Result<Void, Error>) {
        let callbacks = lock.withLock { completions.removeValue(forKey: command.requestId) ?? [] }
        callbacks.forEach { $0(result) }
    }
}
