import Foundation
import Roost
import RoostCore
import Testing

/// `client.subscribe(query)` against the real server: two SDK clients, one writing, one watching.
@Suite struct LiveQueryTests {
    /// Collects a subscription's events (callback form) for the test to wait on.
    final class Recorder: @unchecked Sendable {
        private let lock = NSLock()
        private var events: [LiveQueryEvent] = []
        private(set) var failure: Error?
        var subscription: LiveSubscription!

        init(_ query: RoostQuery, watch: [String]? = nil) {
            subscription = query.subscribe(watch: watch) { [self] result in
                lock.withLock {
                    switch result {
                    case .success(let event): events.append(event)
                    case .failure(let error): failure = error
                    }
                }
            }
        }

        var all: [LiveQueryEvent] { lock.withLock { events } }
        /// The change events (no `subscribed`).
        var changes: [LiveQueryEvent] { all.filter { $0.kind != .subscribed } }

        /// Waits (at most `timeout` seconds) until `condition` holds for the events so far.
        @discardableResult
        func wait(_ timeout: TimeInterval = 10, until condition: ([LiveQueryEvent]) -> Bool) async -> Bool {
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                if condition(all) { return true }
                try? await Task.sleep(nanoseconds: 20_000_000)
            }
            return condition(all)
        }

        func waitForSubscribed(count: Int = 1) async -> Bool {
            await wait { $0.filter { $0.kind == .subscribed }.count >= count }
        }

        func waitForChanges(_ count: Int, timeout: TimeInterval = 10) async -> [LiveQueryEvent] {
            await wait(timeout) { $0.filter { $0.kind != .subscribed }.count >= count }
            return changes
        }
    }

    func kinds(_ events: [LiveQueryEvent]) -> [LiveQueryEvent.Kind] { events.map(\.kind) }

    @Test func anotherClientsCreateUpdateEnterLeaveAndDeleteArriveInOrder() async throws {
        let server = try ServerProcess()
        let watcher = try server.makeClient(), writer = try server.makeClient()
        let recorder = Recorder(watcher.query("Score").whereKey("points", greaterThan: 10))
        defer { recorder.subscription.cancel() }
        #expect(await recorder.waitForSubscribed())

        let score = writer.object("Score")
        score["player"] = "ann"
        score["points"] = 20
        try await score.save()
        score["points"] = 30
        try await score.save()
        score["points"] = 5
        try await score.save()
        score["points"] = 15
        try await score.save()
        try await score.delete()
        let other = writer.object("Score")
        other["points"] = 1  // Never matches: no event.
        try await other.save()

        let events = await recorder.waitForChanges(5)
        #expect(kinds(events) == [.created, .updated, .left, .entered, .deleted])
        #expect(events.map { $0.object?["points"] as Int? } == [20, 30, 5, 15, 15])
        #expect(events.map { $0.previous?["points"] as Int? } == [nil, 20, 30, 5, nil])
        #expect(events.allSatisfy { $0.object?.objectId == score.objectId && $0.object?["player"] == "ann" })
        try await Task.sleep(nanoseconds: 300_000_000)
        #expect(recorder.changes.count == 5)
    }

    @Test func theAsyncSequenceFormEndsWhenCancelled() async throws {
        let server = try ServerProcess()
        let watcher = try server.makeClient(), writer = try server.makeClient()
        let subscription = watcher.subscribe(watcher.query("Note"))
        let reader = Task {
            var seen: [String] = []
            for try await event in subscription {
                if event.kind == .subscribed {
                    let note = writer.object("Note")
                    note["text"] = "hello"
                    try await note.save()
                }
                if event.kind == .created, let text: String = event.object?["text"] { seen.append(text) }
                if seen.count == 1 { subscription.cancel() }
            }
            return seen
        }
        #expect(try await reader.value == ["hello"])
    }

    @Test func aSubscriptionTheServerRefusesEndsWithItsError() async throws {
        let server = try ServerProcess()
        let closed: JSON = ["find": [:], "get": [:], "count": [:], "create": ["*": true], "update": [:], "delete": [:], "addField": [:]]
        _ = try await server.masterRequest("POST", "schemas/Vault", json: ["className": "Vault", "classLevelPermissions": closed])
        let client = try server.makeClient()
        var received: [LiveQueryEvent.Kind] = []
        do {
            for try await event in client.query("Vault").subscribe() { received.append(event.kind) }
            Issue.record("the sequence ended without the server's refusal")
        } catch let error as RoostError {
            #expect(error.code == .operationForbidden, "\(error)")
        }
        #expect(received.isEmpty)
        // The client's socket serves other subscriptions as before.
        let other = Recorder(client.query("Open"))
        defer { other.subscription.cancel() }
        #expect(await other.waitForSubscribed())
    }

    @Test func aWrongApplicationIdEndsTheSubscriptionAsAMisconfiguration() async throws {
        let server = try ServerProcess()
        let client = try RoostClient(.init(serverURL: server.url, applicationId: "not-this-app", storageDirectory: temporaryStorage(),
                                           requestTimeout: 5))
        do {
            for try await _ in client.query("Note").subscribe() {}
            Issue.record("the sequence ended without an error")
        } catch let error as RoostError {
            #expect(error.isMisconfiguration, "\(error)")
        }
    }

    struct Score: RoostModel {
        static let className = "Score"
        var objectId: String?
        var createdAt: Date?
        var updatedAt: Date?
        var player: String
        var points: Int
    }

    @Test func typedQueriesSubscribeAndDecodeTheirModels() async throws {
        let server = try ServerProcess()
        let watcher = try server.makeClient(), writer = try server.makeClient()
        let recorder = Recorder(watcher.query(Score.self).whereKey("points", greaterThanOrEqualTo: 100))
        defer { recorder.subscription.cancel() }
        #expect(await recorder.waitForSubscribed())
        var score = Score(player: "bo", points: 120)
        try await writer.save(&score)
        let events = await recorder.waitForChanges(1)
        let decoded = try events.first?.object(as: Score.self)
        #expect(decoded?.player == "bo" && decoded?.points == 120 && decoded?.objectId == score.objectId)
    }

    @Test func gainingAndLosingReadAccessEntersAndLeaves() async throws {
        let server = try ServerProcess()
        let ann = try server.makeClient(), bob = try server.makeClient()
        let annUser = try await ann.signUp(username: "ann", password: "ann's passphrase")
        let bobUser = try await bob.signUp(username: "bob", password: "bob's passphrase")
        let recorder = Recorder(ann.query("Letter"))
        defer { recorder.subscription.cancel() }
        #expect(await recorder.waitForSubscribed())

        let letter = bob.object("Letter")
        letter["text"] = "private"
        letter.acl = RoostACL(owner: bobUser)
        try await letter.save()  // Ann cannot read it: no event.
        var shared = RoostACL(owner: bobUser)
        shared.setReadAccess(true, for: annUser)
        letter.acl = shared
        letter["text"] = "for ann"
        try await letter.save()
        letter.acl = RoostACL(owner: bobUser)
        letter["text"] = "private again"
        try await letter.save()

        let events = await recorder.waitForChanges(2)
        #expect(kinds(events) == [.entered, .left])
        #expect(events.first?.object?["text"] == "for ann")
        #expect(events.first?.previous?["text"] as String? == nil)  // The version before was not hers to read.
        // Not the version after ("private again"), which is not hers to read: the one she could read before.
        #expect(events.last?.object?["text"] as String? == "for ann")
        try await Task.sleep(nanoseconds: 300_000_000)
        #expect(recorder.changes.count == 2)
    }

    @Test func watchAndSelectedKeysTrimTheEvents() async throws {
        let server = try ServerProcess()
        let watcher = try server.makeClient(), writer = try server.makeClient()
        let recorder = Recorder(watcher.query("Task").select(["title"]), watch: ["title"])
        defer { recorder.subscription.cancel() }
        #expect(await recorder.waitForSubscribed())

        let task = writer.object("Task")
        task["title"] = "write tests"
        task["secret"] = "not sent"
        try await task.save()
        task["secret"] = "still not sent"
        try await task.save()  // Not a watched field: no event.
        task["title"] = "write more tests"
        try await task.save()

        let events = await recorder.waitForChanges(2)
        #expect(kinds(events) == [.created, .updated])
        #expect(events.map { $0.object?["title"] as String? } == ["write tests", "write more tests"])
        #expect(events.allSatisfy { $0.object?.value(forKey: "secret") == nil })
    }

    @Test func eventsUpdateTheQueryCacheAndPinnedObjectsAndNotifyOncePerChange() async throws {
        let server = try ServerProcess()
        let watcher = try server.makeClient(), writer = try server.makeClient()
        let item = writer.object("Item")
        item["name"] = "kettle"
        item["price"] = 30
        try await item.save()
        let doomed = writer.object("Item")
        doomed["name"] = "toaster"
        doomed["price"] = 20
        try await doomed.save()

        let query = watcher.query("Item").order(byAscending: "name")
        try watcher.pinAll(try await query.cachePolicy(.networkOnly).find(), name: "shop")
        let notices = Counter()
        let observer = NotificationCenter.default.addObserver(forName: RoostClient.dataDidChangeNotification, object: watcher, queue: nil) { _ in
            _ = notices.next()
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        // Two subscriptions see each change: the local data changes (and the notice fires) once per change.
        let cheapQuery = watcher.query("Item").whereKey("price", lessThan: 100)
        _ = try await cheapQuery.cachePolicy(.networkOnly).find()
        let all = Recorder(query), cheap = Recorder(cheapQuery)
        defer { all.subscription.cancel(); cheap.subscription.cancel() }
        #expect(await all.waitForSubscribed())
        #expect(await cheap.waitForSubscribed())

        item["price"] = 35
        try await item.save()
        try await doomed.delete()
        let added = writer.object("Item")
        added["name"] = "mug"
        added["price"] = 5
        try await added.save()
        _ = await all.waitForChanges(3)
        _ = await cheap.waitForChanges(3)

        func prices(_ objects: [RoostObject]) -> [String: Int] {
            Dictionary(uniqueKeysWithValues: objects.map { ($0["name"] ?? "", $0["price"] ?? 0) })
        }
        let cached = try await query.cachePolicy(.cacheOnly).find()
        #expect(prices(cached) == ["kettle": 35, "mug": 5])
        #expect(prices(try await cheapQuery.cachePolicy(.cacheOnly).find()) == ["kettle": 35, "mug": 5])  // Each subscribed list.
        let pinned = try await watcher.query("Item").fromLocalDatastore(pinName: "shop").find()
        #expect(prices(pinned) == ["kettle": 35])  // The deleted one is unpinned; a new one is not pinned by itself.
        #expect(notices.value == 3)
    }

    @Test func aPinNameKeepsWhatTheQueryMatchesPinnedEventByEvent() async throws {
        let server = try ServerProcess()
        let watcher = try server.makeClient(), writer = try server.makeClient()
        let subscription = watcher.query("Plant").whereKey("thirsty", equalTo: true).subscribe(pinName: "garden")
        let fern = writer.object("Plant"), cactus = writer.object("Plant")
        var created: [String] = []
        // The async form: the consumer runs behind the socket, yet the pins follow the events' order.
        for try await event in subscription {
            switch event.kind {
            case .subscribed:
                fern["name"] = "fern"
                fern["thirsty"] = true
                cactus["name"] = "cactus"
                cactus["thirsty"] = true
                try await writer.saveAll([fern, cactus])
                fern["thirsty"] = false  // Leaves.
                try await fern.save()
                try await cactus.delete()
                let rose = writer.object("Plant")
                rose["name"] = "rose"
                rose["thirsty"] = true
                try await rose.save()
            case .created: created.append(event.object?["name"] ?? "")
            default: break
            }
            if created.count == 3 { break }
        }
        let pinned = try await watcher.query("Plant").fromLocalDatastore(pinName: "garden").find()
        #expect(pinned.compactMap { $0["name"] as String? } == ["rose"])
        // Leaving the loop ended the subscription: later changes are not pinned.
        let late = writer.object("Plant")
        late["name"] = "ivy"
        late["thirsty"] = true
        try await late.save()
        try await Task.sleep(nanoseconds: 500_000_000)
        #expect(try await watcher.query("Plant").fromLocalDatastore(pinName: "garden").find().count == 1)
    }

    /// A pinned object with a change still queued keeps showing it when another device's change to other fields
    /// arrives first (those fields take the event's values).
    @Test func aPinnedObjectWithAQueuedChangeKeepsItUntilDelivered() async throws {
        let server = try ServerProcess()
        let relay = try TCPRelay(upstreamPort: server.port)
        let watcher = try RoostClient(.init(serverURL: relay.url, applicationId: ServerProcess.applicationId,
                                            storageDirectory: temporaryStorage(), requestTimeout: 5))
        let writer = try server.makeClient()
        let shared = writer.object("Board")
        shared["note"] = "first"
        shared["color"] = "red"
        try await shared.save()
        let mine = try #require(try await watcher.query("Board").first())
        try mine.pin()
        let recorder = Recorder(watcher.query("Board"))
        defer { recorder.subscription.cancel() }
        #expect(await recorder.waitForSubscribed())

        relay.refusePlainHTTP(true)  // The watcher's REST calls fail; its live socket stays.
        mine["note"] = "mine"
        try await mine.saveEventually()
        shared["color"] = "blue"
        try await shared.save()
        #expect(await recorder.wait { $0.contains { $0.object?["color"] == "blue" } })
        let pinned = try await watcher.query("Board").fromLocalDatastore().first()
        #expect(pinned?["note"] == "mine" && pinned?["color"] == "blue")  // Its queued change kept; the other taken.

        relay.refusePlainHTTP(false)
        #expect(try await watcher.waitForPendingWrites(timeout: 20))
        #expect(await recorder.wait { $0.contains { $0.object?["note"] == "mine" } })
        #expect(try await watcher.query("Board").fromLocalDatastore().first()?["note"] == "mine")
    }

    @Test func logInLogOutAndSignUpFollowTheSession() async throws {
        let server = try ServerProcess()
        let phone = try server.makeClient(), laptop = try server.makeClient()
        let owner = try await laptop.signUp(username: "cat", password: "cat's passphrase")
        func secret(_ text: String) async throws {
            let note = laptop.object("Diary")
            note["text"] = text
            note.acl = RoostACL(owner: owner)
            try await note.save()
        }
        let recorder = Recorder(phone.query("Diary"))
        defer { recorder.subscription.cancel() }
        #expect(await recorder.waitForSubscribed())
        try await secret("before log-in")  // Not readable without the session.

        try await phone.logIn(username: "cat", password: "cat's passphrase")
        #expect(await recorder.waitForSubscribed(count: 2))  // Reconnected with the new session.
        try await secret("after log-in")
        #expect(await recorder.wait { $0.contains { $0.object?["text"] == "after log-in" } })
        #expect(recorder.all.filter { $0.kind == .subscribed }.last?.resumed == true)

        try await phone.logOut()
        #expect(await recorder.waitForSubscribed(count: 3))
        try await secret("after log-out")
        try await Task.sleep(nanoseconds: 500_000_000)
        // The subscription resumed with each new session from its last seq: the note written before the log-in, now
        // readable, was replayed then; nothing after the log-out is.
        #expect(recorder.changes.compactMap { $0.object?["text"] as String? } == ["before log-in", "after log-in"])
    }

    @Test func anAnonymousUserSignedUpKeepsItsLiveEvents() async throws {
        let server = try ServerProcess()
        let phone = try server.makeClient()
        let anonymous = try await phone.logInAnonymously()
        let recorder = Recorder(phone.query("Diary"))
        defer { recorder.subscription.cancel() }
        #expect(await recorder.waitForSubscribed())
        try await phone.signUp(username: "dan", password: "dan's passphrase")  // Revokes the anonymous session.
        #expect(await recorder.waitForSubscribed(count: 2))
        let note = phone.object("Diary")
        note["text"] = "signed up"
        note.acl = RoostACL(owner: anonymous)
        try await note.save()
        #expect(await recorder.wait { $0.contains { $0.object?["text"] == "signed up" } })
        #expect(phone.currentUser?.username == "dan")
    }
}
