import Foundation
import Roost
import RoostCore
import Testing

@Suite struct EventuallyTests {
    @Test func queuedOfflineThenDeliveredExactlyOnceInOrder() async throws {
        let server = try ServerProcess(start: false)
        let client = try server.makeClient()
        let list = client.object("List")
        list["name"] = "groceries"
        let item = client.object("Item")
        item["title"] = "milk"
        item.set("list", pointerTo: list)  // A pointer to a new object, resolved just before sending.
        try await item.saveEventually()
        item.increment("count")
        try await item.saveEventually()  // Becomes an update once the create ran.
        item.increment("count", by: 2)
        item["title"] = "oat milk"
        try await item.saveEventually()
        let doomed = client.object("Item")
        doomed["title"] = "gone"
        try await doomed.saveEventually()
        try await doomed.deleteEventually()
        #expect(client.pendingCount == 6)
        #expect(item["title"] == "oat milk")  // Local view shows the queued edits at once.

        try server.start()
        try await client.waitForPendingWrites()
        #expect(client.pendingCount == 0)
        #expect(try client.failedCommands().isEmpty)
        let items = try await client.query("Item").find()
        #expect(items.count == 1)
        let stored = try #require(items.first)
        #expect(stored.objectId == item.objectId)
        #expect(stored["title"] == "oat milk")
        #expect(stored["count"] == 3)
        #expect(stored.pointer(forKey: "list")?.objectId == list.objectId)
        #expect(try await client.query("List").count() == 1)
    }

    @Test func aRestartedClientResumesTheQueueWithoutDuplicates() async throws {
        let server = try ServerProcess(start: false)
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("roost-device-\(UUID().uuidString)")
        do {
            let client = try server.makeClient(storage: storage)
            let note = client.object("Note")
            note["text"] = "written offline"
            try await note.saveEventually()
            note.increment("edits")
            try await note.saveEventually()
        }  // The app quits with both commands queued.
        try server.start()
        let relaunched = try server.makeClient(storage: storage)
        #expect(relaunched.pendingCount == 2)
        try await relaunched.waitForPendingWrites()
        let notes = try await relaunched.query("Note").find()
        #expect(notes.count == 1)
        #expect(notes.first?["edits"] == 1)
    }

    @Test func aRefusedCommandIsKeptAsFailedWhileTheRestDrains() async throws {
        let server = try ServerProcess()
        let client = try server.makeClient()
        let typed = client.object("Typed")
        typed["n"] = 1
        try await typed.save()
        let bad = client.object("Typed")
        bad["n"] = "not a number"
        let outcome = Outcome()
        try bad.saveEventually { outcome.set($0) }
        let good = client.object("Typed")
        good["n"] = 2
        try await good.saveEventually()
        try await client.waitForPendingWrites()
        let failed = try client.failedCommands()
        #expect(failed.count == 1)
        #expect(failed.first?.code == .incorrectType)
        #expect(try await client.query("Typed").count() == 2)
        #expect(outcome.error?.code == .incorrectType)
        try client.clearFailedCommands()
        #expect(try client.failedCommands().isEmpty)
    }

    @Test func commandsQueuedByAnAutomaticUserLandUnderTheConvertedAccount() async throws {
        let server = try ServerProcess(start: false)
        let client = try server.makeClient()
        client.enableAutomaticUser()
        let user = try #require(client.currentUser)
        for title in ["a", "b", "c"] {
            let todo = client.object("Todo")
            todo["title"] = title
            todo.set("owner", pointerTo: user)
            todo.acl = RoostACL(owner: user)
            try await todo.saveEventually()
        }
        try server.start()
        let converted = try await client.signUp(username: "dora", password: "pw")
        try await client.waitForPendingWrites()
        #expect(try client.failedCommands().isEmpty)
        let laptop = try server.makeClient()
        let same = try await laptop.logIn(username: "dora", password: "pw")
        #expect(same.objectId == converted.objectId)
        let todos = try await laptop.query("Todo").whereKey("owner", equalTo: same).find()
        #expect(todos.count == 3)
    }

    @Test func logOutWaitsBehindTheUsersQueuedCommands() async throws {
        let server = try ServerProcess()
        let client = try server.makeClient()
        let user = try await client.signUp(username: "eve", password: "pw")
        server.stop()
        let secret = client.object("Secret")
        secret["text"] = "mine"
        secret.acl = RoostACL(owner: user)
        try await secret.saveEventually()
        try await client.logOut()  // Offline: the logout is queued behind the save.
        #expect(client.currentUser == nil)
        try server.start()
        try await client.waitForPendingWrites()
        let other = try server.makeClient()
        try await other.logIn(username: "eve", password: "pw")
        #expect(try await other.query("Secret").count() == 1)
    }
}

/// A completion's result, shared with the test.
final class Outcome: @unchecked Sendable {
    private let lock = NSLock()
    private var result: Result<Void, Error>?

    func set(_ result: Result<Void, Error>) { lock.withLock { self.result = result } }

    var error: RoostError? {
        lock.withLock {
            if case .failure(let error) = result { return error as? RoostError }
            return nil
        }
    }
}

@Suite struct LostReplyTests {
    @Test func repliesLostAfterTheCommitAreRetriedWithoutDuplicates() async throws {
        let server = try ServerProcess(start: false)
        server.environment["ROOST_TEST_DROP_REPLIES"] = "3"  // Every third write reply never arrives.
        try server.start()
        // A dropped connection surfaces as a timeout on this client: keep it short.
        let client = try server.makeClient(requestTimeout: 1)
        let counter = client.object("Counter")
        counter["n"] = 0
        try await counter.saveEventually()
        for _ in 0..<12 {
            counter.increment("n")
            try await counter.saveEventually()
        }
        let extras = (0..<8).map { index -> RoostObject in
            let object = client.object("Extra")
            object["index"] = index
            return object
        }
        for object in extras { try await object.saveEventually() }
        try await client.waitForPendingWrites()
        #expect(try client.failedCommands().isEmpty)

        server.stop()
        server.environment = [:]
        try server.start()
        let stored = try await client.query("Counter").find()
        #expect(stored.count == 1)
        #expect(stored.first?["n"] == 12)
        #expect(try await client.query("Extra").count() == 8)
    }
}

@Suite struct OverloadedServerTests {
    @Test(arguments: ["503", "429"])
    func overloadedAnswersAreRetriedUntilTheServerAccepts(status: String) async throws {
        let server = try ServerProcess(start: false)
        server.environment = ["ROOST_TEST_FAIL_FIRST_WRITES": "6", "ROOST_TEST_FAIL_STATUS": status]
        try server.start()
        let client = try server.makeClient()
        let counter = client.object("Counter")
        counter["n"] = 0
        try await counter.saveEventually()
        for _ in 0..<5 {
            counter.increment("n")
            try await counter.saveEventually()
        }
        try await client.waitForPendingWrites()
        #expect(try client.failedCommands().isEmpty)
        let stored = try await client.query("Counter").find()
        #expect(stored.count == 1)
        #expect(stored.first?["n"] == 5)
    }

    @Test func serverRestartsWhileDraining() async throws {
        let server = try ServerProcess()
        let client = try server.makeClient()
        let items = (0..<300).map { index -> RoostObject in
            let object = client.object("Restarted")
            object["index"] = index
            return object
        }
        for item in items { try await item.saveEventually() }
        server.stop()  // Mid-drain (or before it): the queue waits and resumes.
        try server.start()
        try await client.waitForPendingWrites()
        #expect(try client.failedCommands().isEmpty)
        #expect(try await client.query("Restarted").count() == 300)
    }
}
