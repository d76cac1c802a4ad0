// todo: an occasionally connected to-do list on Roost.
//
//   todo add "Buy 100 tons of cat litter"   todo list   todo done <n>   todo rm <n>
//   todo sync   todo whoami   todo signup <username>   todo login <username>   todo logout
//
// Works with the server down: writes go through saveEventually (kept on disk, delivered exactly
// once later) and reads come from pinned objects. The first use makes an anonymous account;
// `signup` turns it into a registered one and keeps every to-do.
// Environment: ROOST_SERVER_URL (default http://127.0.0.1:1337/parse), ROOST_APP_ID (default roost),
// ROOST_STORAGE_DIR (default: the XDG data directory).
import Foundation
import Roost

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(1)
}

let environment = ProcessInfo.processInfo.environment
let serverAddress = environment["ROOST_SERVER_URL"].flatMap { $0.isEmpty ? nil : $0 } ?? "http://127.0.0.1:1337/parse"
guard let serverURL = URL(string: serverAddress), serverURL.scheme != nil else {
    fail("todo: ROOST_SERVER_URL is not a URL: \(serverAddress)")
}
let client: RoostClient
do {
    client = try RoostClient(.init(
        serverURL: serverURL, applicationId: environment["ROOST_APP_ID"] ?? "roost",
        storageDirectory: environment["ROOST_STORAGE_DIR"].map { URL(fileURLWithPath: $0) }, requestTimeout: 5))
} catch {
    fail("todo: \(error)")  // A damaged, read-only or full storage directory: say so, never trap.
}
client.enableAutomaticUser()
let pinName = "todos"

/// Whether queued changes reached the server within `seconds` (false when it cannot be reached).
/// - Throws: why they cannot be delivered (wrong app id or URL, a session to log in again for).
func delivered(timeout seconds: TimeInterval) async throws -> Bool {
    guard await client.isServerReachable() else { return false }
    do {
        return try await client.waitForPendingWrites(timeout: seconds)
    } catch let error as RoostError where error.code == .invalidSessionToken {
        FileHandle.standardError.write(Data("todo: your session ended; `todo login <username>` sends your changes\n".utf8))
        return false
    }
}

/// The to-dos as this device knows them, in the order they were added.
func localTodos() async throws -> [RoostObject] {
    try await client.query("Todo").fromLocalDatastore(pinName: pinName).order(byAscending: "position").limit(10_000).find()
}

/// Online: deliver queued changes, then take the server's list (other devices' edits) for offline use.
func refresh() async {
    guard await client.isServerReachable(), let user = client.currentUser, !user.isLazy else { return }
    _ = try? await client.waitForPendingWrites(timeout: 10)
    guard client.pendingCount == 0,
        let remote = try? await client.query("Todo").whereKey("owner", equalTo: user).limit(10_000).find()
    else { return }
    let localOnly = ((try? await localTodos()) ?? []).filter { $0.objectId == nil }
    try? client.unpinAll(name: pinName)
    try? client.pinAll(remote + localOnly, name: pinName)
}

func todo(at argument: String?) async throws -> RoostObject {
    guard let argument, let number = Int(argument) else { fail("usage: todo done|rm <n>") }
    let todos = try await localTodos()
    guard (1...todos.count).contains(number) else { fail("no to-do \(number); `todo list` shows them") }
    return todos[number - 1]
}

func readPassword() -> String {
    FileHandle.standardOutput.write(Data("Password: ".utf8))
    guard let line = readLine(), !line.isEmpty else { fail("a password is needed") }
    return line
}

func describe(_ user: RoostUser) -> String {
    if user.isLazy { return "an anonymous user (not on the server yet)" }
    if user.isAnonymous { return "an anonymous user (\(user.objectId ?? "?"))" }
    return "\(user.username ?? "?") (\(user.objectId ?? "?"))"
}

let arguments = Array(CommandLine.arguments.dropFirst())
let semaphore = DispatchSemaphore(value: 0)
Task.detached {
    do {
        switch arguments.first {
        case "add":
            let title = arguments.dropFirst().joined(separator: " ")
            guard !title.isEmpty, let user = client.currentUser else { fail("usage: todo add <title>") }
            let item = client.object("Todo")
            item["title"] = title
            item["done"] = false
            item["position"] = Date().timeIntervalSince1970
            item.set("owner", pointerTo: user)
            item.acl = RoostACL(owner: user)
            try await item.saveEventually(pinName: pinName)  // Listed and queued in one transaction.
            let synced = try await delivered(timeout: 5)
            print("Added: \(title)\(synced ? "" : " (will sync when the server is reachable)")")
        case "list", nil:
            await refresh()
            let todos = try await localTodos()
            if todos.isEmpty { print("Nothing to do.") }
            for (index, item) in todos.enumerated() {
                let done: Bool = item["done"] ?? false
                let title: String = item["title"] ?? ""
                print("\(index + 1). [\(done ? "x" : " ")] \(title)\(item.objectId == nil ? "  (not synced yet)" : "")")
            }
        case "done":
            let item = try await todo(at: arguments.dropFirst().first)
            item["done"] = true
            try await item.saveEventually()
            _ = try await delivered(timeout: 5)
            print("Done: \(item["title"] as String? ?? "")")
        case "rm":
            let item = try await todo(at: arguments.dropFirst().first)
            try await item.deleteEventually()
            try item.unpin()
            _ = try await delivered(timeout: 5)
            print("Removed: \(item["title"] as String? ?? "")")
        case "sync":
            let sent = try await delivered(timeout: 30)
            let refused = try client.failedCommands()
            if !sent {
                print("\(client.pendingCount) change(s) waiting for the server.")
            } else if refused.isEmpty {
                print("All changes are on the server.")
            }
            for failed in refused {
                print("refused by the server: \(failed.kind) \(failed.className) — \(failed.message)")
            }
        case "whoami":
            print(client.currentUser.map(describe) ?? "nobody")
        case "signup":
            guard let username = arguments.dropFirst().first else { fail("usage: todo signup <username>") }
            let user = try await client.signUp(username: username, password: readPassword())
            _ = try? await client.waitForPendingWrites(timeout: 10)
            print("Signed up as \(describe(user)); your to-dos are kept.")
        case "login":
            guard let username = arguments.dropFirst().first else { fail("usage: todo login <username>") }
            let user = try await client.logIn(username: username, password: readPassword())
            try client.unpinAll(name: pinName)
            await refresh()
            print("Logged in as \(describe(user)).")
        case "logout":
            try await client.logOut()
            try client.unpinAll(name: pinName)
            print("Logged out.")
        default:
            fail("usage: todo add|list|done|rm|sync|whoami|signup|login|logout")
        }
    } catch let error as RoostError {
        fail("todo: \(error)")
    } catch {
        fail("todo: \(error)")
    }
    semaphore.signal()
}
semaphore.wait()
