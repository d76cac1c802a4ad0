import Foundation
import Roost

/// This device's to-do list: the client, the to-dos pinned for offline use, and the refresh from the server.
/// Made only by commands that need it, so `todo --help` touches no storage.
struct TodoList {
    static let pinName = "todos"
    let client: RoostClient

    /// Exits with `todo: <why>` when the client cannot be made (a bad URL; a damaged, read-only or full
    /// storage directory): a plain message, never a trap.
    init() {
        let environment = ProcessInfo.processInfo.environment
        let serverAddress = environment["ROOST_SERVER_URL"].flatMap { $0.isEmpty ? nil : $0 } ?? "http://127.0.0.1:1337/parse"
        guard let serverURL = URL(string: serverAddress), serverURL.scheme != nil else {
            fail("todo: ROOST_SERVER_URL is not a URL: \(serverAddress)")
        }
        do {
            client = try RoostClient(.init(
                serverURL: serverURL, applicationId: environment["ROOST_APP_ID"] ?? "roost",
                storageDirectory: environment["ROOST_STORAGE_DIR"].map { URL(fileURLWithPath: $0) }, requestTimeout: 5))
        } catch {
            fail("todo: \(error)")
        }
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

    /// A new to-do owned by `owner`, listed (pinned) and queued for the server in one transaction (on disk first).
    @discardableResult
    func add(_ title: String, done: Bool = false, position: Double = Date().timeIntervalSince1970, owner: RoostUser) async throws -> RoostObject {
        let item = client.object("Todo")
        item["title"] = title
        item["done"] = done
        item["position"] = position
        item.set("owner", pointerTo: owner)
        item.acl = RoostACL(owner: owner)
        try await item.saveEventually(pinName: TodoList.pinName)
        return item
    }

    /// Online: deliver queued changes, then take the server's list (other devices' edits) for offline use.
    func refresh() async {
        guard await client.isServerReachable(), let user = client.currentUser, !user.isLazy else { return }
        _ = try? await client.waitForPendingWrites(timeout: 10)
        guard client.pendingCount == 0,
            let remote = try? await client.query("Todo").whereKey("owner", equalTo: user).limit(10_000).find()
        else { return }
        let localOnly = ((try? await local()) ?? []).filter { $0.objectId == nil }
        try? client.unpinAll(name: TodoList.pinName)
        try? client.pinAll(remote + localOnly, name: TodoList.pinName)
    }

    /// Whether queued changes reached the server within `seconds` (false when it cannot be reached, or
    /// when the session ended: then it says to log in again, which sends them).
    /// - Throws: why they cannot be delivered (a wrong application id, no Parse API at the URL).
    @discardableResult
    func delivered(timeout seconds: TimeInterval) async throws -> Bool {
        guard await client.isServerReachable() else { return false }
        do {
            return try await client.waitForPendingWrites(timeout: seconds)
        } catch let error as RoostError where error.code == .invalidSessionToken {
            FileHandle.standardError.write(Data("todo: your session ended; `todo login <username>` sends your changes\n".utf8))
            return false
        }
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


/// Prints a line at once (`print` is block-buffered into a pipe: a live line would wait there).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
