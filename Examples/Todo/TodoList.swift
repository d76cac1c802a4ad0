import Foundation
import Roost

/// This device's to-do list: the client, the to-dos pinned for offline use, and the refresh from the server.
/// Made only by commands that need it, so `todo --help` touches no storage.
struct TodoList {
    static let pinName = "todos"
    let client: RoostClient

    init() throws {
        let environment = ProcessInfo.processInfo.environment
        client = try RoostClient(.init(
            serverURL: URL(string: environment["ROOST_SERVER_URL"] ?? "http://127.0.0.1:1337/parse")!,
            applicationId: environment["ROOST_APP_ID"] ?? "roost",
            storageDirectory: environment["ROOST_STORAGE_DIR"].map { URL(fileURLWithPath: $0) },
            requestTimeout: 5))
        client.enableAutomaticUser()
    }

    /// The to-dos as this device knows them, in the order they were added.
    func local() async throws -> [RoostObject] {
        try await client.query("Todo").fromLocalDatastore(pinName: TodoList.pinName).order(byAscending: "position").limit(10_000).find()
    }

    /// The to-do `todo list` shows as `number`; exits with a message when there is none.
    func item(number: Int) async throws -> RoostObject {
        let todos = try await local()
        guard todos.indices.contains(number - 1) else {
            fail(todos.isEmpty ? "There are no to-dos yet; add one with `todo add <title>`."
                               : "There is no to-do \(number); `todo list` shows them (1 to \(todos.count)).")
        }
        return todos[number - 1]
    }

    /// A new to-do owned by `owner`, pinned and queued for the server (kept on disk first).
    @discardableResult
    func add(_ title: String, done: Bool = false, position: Double = Date().timeIntervalSince1970, owner: RoostUser) async throws -> RoostObject {
        let item = client.object("Todo")
        item["title"] = title
        item["done"] = done
        item["position"] = position
        item.set("owner", pointerTo: owner)
        item.acl = RoostACL(owner: owner)
        try item.pin(name: TodoList.pinName)
        try await item.saveEventually()
        return item
    }

    /// Online: deliver queued changes, then take the server's list (other devices' edits) for offline use.
    func refresh() async {
        guard await client.isServerReachable(), let user = client.currentUser, !user.isLazy else { return }
        _ = await client.waitForPendingWrites(timeout: 10)
        guard client.pendingCount == 0,
            let remote = try? await client.query("Todo").whereKey("owner", equalTo: user).limit(10_000).find()
        else { return }
        let localOnly = ((try? await local()) ?? []).filter { $0.objectId == nil }
        try? client.unpinAll(name: TodoList.pinName)
        try? client.pinAll(remote + localOnly, name: TodoList.pinName)
    }

    /// Waits a little for queued changes when the server is up; false when they are still waiting.
    @discardableResult
    func deliver() async -> Bool {
        await client.isServerReachable() ? await client.waitForPendingWrites(timeout: 5) : false
    }
}

/// A registered account, as opposed to the automatic anonymous one (local or on the server).
func isRegistered(_ user: RoostUser?) -> Bool {
    guard let user else { return false }
    return !user.isLazy && !user.isAnonymous
}

func describe(_ user: RoostUser) -> String {
    if user.isLazy { return "an anonymous user (not on the server yet)" }
    if user.isAnonymous { return "an anonymous user (\(user.objectId ?? "?"))" }
    return "\(user.username ?? "?") (\(user.objectId ?? "?"))"
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(1)
}
