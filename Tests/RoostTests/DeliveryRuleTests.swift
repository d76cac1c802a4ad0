import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Roost
import RoostCore
import Testing

/// The delivery rules of `saveEventually`: what waits, what pauses, what ends, and that every wait
/// honours its timeout and cancellation.
@Suite struct DeliveryRuleTests {
    /// A session revoked on the server (logged out elsewhere) does not send the user's commands to the
    /// failed table: they wait, and go under the new session once the same user logs in again.
    @Test(.timeLimit(.minutes(2))) func commandsOfARevokedSessionWaitForTheUserToLogInAgain() async throws {
        let server = try ServerProcess()
        let client = try server.makeClient()
        let user = try await client.signUp(username: "rita", password: "pw-rita")
        try await revoke(try #require(user.sessionToken), on: server)
        for title in ["a", "b"] {
            let note = client.object("Note")
            note["title"] = title
            note.acl = RoostACL(owner: user)
            try await note.saveEventually()
        }
        await #expect(throws: RoostError.self) { _ = try await client.waitForPendingWrites(timeout: 30) }
        #expect(try client.failedCommands().isEmpty)
        #expect(client.pendingCount == 2)

        try await client.logIn(username: "rita", password: "pw-rita")
        #expect(try await client.waitForPendingWrites(timeout: 30))
        #expect(try client.failedCommands().isEmpty)
        let notes = try await client.query("Note").order(byAscending: "title").find()
        #expect(notes.map { $0["title"] as String? } == ["a", "b"])
    }

    /// The same with the `todo` example: a to-do added after the session was revoked is kept, and
    /// `todo login` as the same user sends it and lists every to-do.
    @Test(.timeLimit(.minutes(2))) func todoKeepsChangesMadeAfterARevokedSessionUntilLogin() async throws {
        let server = try ServerProcess()
        let phone = ExampleTests.Device(server: server)
        #expect(try phone.run("todo", "signup", "nora", input: "pw-nora\npw-nora\n").status == 0)
        #expect(try phone.run("todo", "add", "before").status == 0)
        let saved = try Data(contentsOf: URL(fileURLWithPath: phone.storage).appendingPathComponent("currentUser.json"))
        try await revoke(try #require(try JSONParser.parse(Array(saved))["sessionToken"]?.stringValue), on: server)
        let added = try phone.run("todo", "add", "after")
        #expect(added.output.contains("todo login"), "\(added.output)")

        let login = try phone.run("todo", "login", "nora", input: "pw-nora\n")
        #expect(login.status == 0, "\(login.output)")
        let list = try phone.run("todo", "list").output
        #expect(list.contains("] before\n") && list.contains("] after\n"), "\(list)")
        #expect(try phone.run("todo", "sync").output.contains("All changes are on the server."))
    }

    /// A wrong application id (403 `unauthorized`) pauses the queue with a clear error and discards
    /// nothing; a client configured right delivers the same commands.
    @Test(.timeLimit(.minutes(2))) func aWrongApplicationIdPausesTheQueueUntilItIsFixed() async throws {
        let server = try ServerProcess()
        // Signed up by another process (a client of this one would stay alive, and deliver with the right id).
        let device = ExampleTests.Device(server: server)
        #expect(try device.run("todo", "signup", "walt", input: "pw-walt\npw-walt\n").status == 0)
        let storage = URL(fileURLWithPath: device.storage)
        do {
            let wrong = try RoostClient(.init(serverURL: server.url, applicationId: "not-the-app", storageDirectory: storage))
            #expect(wrong.currentUser?.username == "walt")
            let note = wrong.object("Note")
            note["title"] = "kept"
            try await note.saveEventually()
            await #expect(throws: RoostError.misconfigured("unauthorized: check the application id")) {
                _ = try await wrong.waitForPendingWrites(timeout: 30)
            }
            #expect(try wrong.failedCommands().isEmpty)
            #expect(wrong.pendingCount == 1)
        }
        let fixed = try server.makeClient(storage: storage)
        #expect(try await fixed.waitForPendingWrites(timeout: 30))
        #expect(try fixed.failedCommands().isEmpty)
        #expect(try await fixed.query("Note").find().map { $0["title"] as String? } == ["kept"])
    }

    /// The automatic user's creation against a server with no Parse API at the URL (its `/health`
    /// answers, its API paths are 404) ends with an error naming the URL instead of retrying forever.
    @Test(.timeLimit(.minutes(2))) func noParseAPIAtTheURLEndsTheWaitWithAClearError() async throws {
        let server = try ServerProcess()
        let root = try #require(URL(string: "http://127.0.0.1:\(server.port)"))
        let client = try RoostClient(.init(serverURL: root, applicationId: ServerProcess.applicationId, storageDirectory: temporaryStorage()))
        #expect(await client.isServerReachable())
        client.enableAutomaticUser()
        let todo = client.object("Todo")
        todo.set("owner", pointerTo: try #require(client.currentUser))
        try await todo.saveEventually()
        await #expect(throws: RoostError.misconfigured("no Parse API at \(root.absoluteString)")) {
            _ = try await client.waitForPendingWrites(timeout: 30)
        }
        #expect(client.pendingCount == 1)
    }

    /// With the server down, a wait with a timeout returns at its timeout, and a cancelled wait ends.
    @Test(.timeLimit(.minutes(1))) func waitsHonourTheirTimeoutAndCancellation() async throws {
        let server = try ServerProcess(start: false)
        let client = try server.makeClient()
        let note = client.object("Note")
        note["title"] = "offline"
        try await note.saveEventually()
        let started = Date()
        #expect(try await client.waitForPendingWrites(timeout: 0.5) == false)
        #expect(Date().timeIntervalSince(started) < 20)

        let waiting = Task { try await client.waitForPendingWrites() }
        try await Task.sleep(nanoseconds: 200_000_000)
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        #expect(client.pendingCount == 1)
    }

    /// A request to a server that accepted the connection and stalls ends when its task is cancelled,
    /// not at the request timeout.
    @Test(.timeLimit(.minutes(1))) func aStalledRequestEndsWhenItsTaskIsCancelled() async throws {
        let server = try ServerProcess()
        let proxy = try FaultProxy(upstreamPort: server.port) { _ in .stall(seconds: 20) }
        defer { proxy.stop() }
        let client = try RoostClient(.init(serverURL: proxy.url, applicationId: ServerProcess.applicationId,
                                           storageDirectory: temporaryStorage(), requestTimeout: 60))
        let started = Date()
        let finding = Task { try await client.query("Stalled").find() }
        let counting = Task { try await client.query("Stalled").count() }
        let saving = Task {
            let object = client.object("Stalled")
            object["n"] = 1
            try await object.save()
        }
        try await Task.sleep(nanoseconds: 300_000_000)
        finding.cancel()
        counting.cancel()
        saving.cancel()
        await #expect(throws: CancellationError.self) { _ = try await finding.value }  // It returned [] before.
        await #expect(throws: CancellationError.self) { _ = try await counting.value }
        await #expect(throws: CancellationError.self) { try await saving.value }
        #expect(Date().timeIntervalSince(started) < 10)
    }

    /// Every call named in the README has a blocking twin; they work from a plain thread.
    @Test func blockingTwinsExistAndWork() async throws {
        let server = try ServerProcess()
        let client = try server.makeClient()
        try await onThread {
            let user = try client.logInAnonymouslyBlocking()
            #expect(user.isAnonymous)
            let objects = (1...3).map { index -> RoostObject in
                let object = client.object("Twin")
                object["n"] = index
                return object
            }
            try client.saveAllBlocking(objects)
            let query = client.query("Twin").order(byAscending: "n")
            #expect(try query.countBlocking() == 3)
            #expect(try query.firstBlocking()?["n"] == 1)
            #expect(try query.getBlocking(try #require(objects[1].objectId))["n"] == 2)
            var model = TwinModel(n: 7)
            try client.saveBlocking(&model)
            let id = try #require(model.objectId)
            #expect(try client.fetchBlocking(TwinModel.self, objectId: id).n == 7)
            #expect(try client.query(TwinModel.self).whereKey("n", equalTo: 7).findBlocking(as: TwinModel.self).count == 1)
            #expect(try client.query(TwinModel.self).firstBlocking(as: TwinModel.self)?.n == 7)
            try client.deleteBlocking(model)
            let late = client.object("Twin")
            late["n"] = 4
            try late.saveEventually()
            try client.waitForPendingWritesBlocking()
            #expect(try client.waitForPendingWritesBlocking(timeout: 5))
            #expect(try query.countBlocking() == 4)
        }
    }

    /// Runs `body` on a thread of its own, as a script's code runs (blocking calls must not run on the
    /// concurrency pool).
    private func onThread(_ body: @escaping @Sendable () throws -> Void) async throws {
        let outcome: Result<Void, Error> = await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: Result { try body() }) }.start()
        }
        try outcome.get()
    }

    /// Ends `token`'s session on the server, as logging out on another device does.
    private func revoke(_ token: String, on server: ServerProcess) async throws {
        var request = URLRequest(url: server.url.appendingPathComponent("logout"))
        request.httpMethod = "POST"
        request.setValue(ServerProcess.applicationId, forHTTPHeaderField: "X-Parse-Application-Id")
        request.setValue(token, forHTTPHeaderField: "X-Parse-Session-Token")
        let (_, response) = try await URLSession.shared.data(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
    }
}

struct TwinModel: RoostModel {
    static let className = "TwinModel"
    var objectId: String?
    var createdAt: Date?
    var updatedAt: Date?
    var n: Int

    init(n: Int) { self.n = n }
}
