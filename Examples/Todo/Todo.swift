// todo: an occasionally connected to-do list on Roost (`todo --help` lists the commands).
//
// Works with the server down: writes go through saveEventually (kept on disk, delivered exactly
// once later) and reads come from pinned objects. The first use makes an anonymous account;
// `signup` turns it into a registered one and keeps every to-do.
import ArgumentParser
import Foundation
import Roost

@main
struct Todo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "todo",
        abstract: "An occasionally connected to-do list on Roost.",
        discussion: """
            Works with the server down: changes wait on disk and are delivered exactly once when it is back. \
            The first use makes an anonymous account; `todo signup <username>` turns it into yours, list kept.

            Environment:
              ROOST_SERVER_URL   the Parse API (default http://127.0.0.1:1337/parse)
              ROOST_APP_ID       the application id (default roost)
              ROOST_STORAGE_DIR  this device's state (default $XDG_DATA_HOME/roost/todo)
            """,
        version: "todo 0.1.0",
        subcommands: [Add.self, List.self, Done.self, Remove.self, Watch.self, Sync.self, WhoAmI.self, SignUp.self, LogIn.self, LogOut.self],
        defaultSubcommand: List.self)
}

struct Add: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Add a to-do.")
    @Argument(help: "The to-do, e.g. Buy 100 tons of cat litter.") var title: [String]

    func run() async throws {
        let list = TodoList()
        let title = title.joined(separator: " ")
        guard !title.isEmpty, let user = list.client.currentUser else { throw ValidationError("A title is needed.") }
        try await list.add(title, owner: user)
        let synced = try await list.delivered(timeout: 5)
        print("Added: \(title)\(synced ? "" : " (will sync when the server is reachable)")")
    }
}

struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the to-dos (refreshed from the server when it is reachable).")

    func run() async throws {
        let list = TodoList()
        await list.refresh()
        let todos = try await list.local()
        if todos.isEmpty { print("Nothing to do.") }
        for (index, item) in todos.enumerated() {
            let done: Bool = item["done"] ?? false
            let title: String = item["title"] ?? ""
            print("\(index + 1). [\(done ? "x" : " ")] \(title)\(item.objectId == nil ? "  (not synced yet)" : "")")
        }
    }
}

struct Done: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Mark a to-do done.")
    @Argument(help: "Its number in `todo list`.") var number: Int

    func run() async throws {
        let list = TodoList()
        let item = try await list.item(number: number)
        item["done"] = true
        try await item.saveEventually()
        try await list.delivered(timeout: 5)
        print("Done: \(item["title"] as String? ?? "")")
    }
}

struct Remove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "rm", abstract: "Remove a to-do.")
    @Argument(help: "Its number in `todo list`.") var number: Int

    func run() async throws {
        let list = TodoList()
        let item = try await list.item(number: number)
        try await item.deleteEventually()
        try item.unpin()
        try await list.delivered(timeout: 5)
        print("Removed: \(item["title"] as String? ?? "")")
    }
}

struct Sync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Deliver the changes waiting for the server, and say what is left.")

    func run() async throws {
        let list = TodoList()
        let sent = try await list.delivered(timeout: 30)
        let refused = try list.client.failedCommands()
        if !sent {
            print("\(list.client.pendingCount) change(s) waiting for the server.")
        } else if refused.isEmpty {
            print("All changes are on the server.")  // Only when nothing was refused: a refusal is listed below.
        }
        for failed in refused {
            print("refused by the server: \(failed.kind) \(failed.className) — \(failed.message)")
        }
    }
}

struct WhoAmI: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "whoami", abstract: "Show the current user.")

    func run() async throws {
        print(TodoList().client.currentUser.map(describe) ?? "nobody")
    }
}

struct SignUp: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "signup", abstract: "Make the anonymous account a registered one, keeping its to-dos (asks for a password).")
    @Argument(help: "The new account's username.") var username: String

    func run() async throws {
        let list = TodoList()
        if let current = list.client.currentUser, isRegistered(current) {
            fail("You are logged in as \(current.username ?? "?"). Log out first (`todo logout`), then `todo signup \(username)`.")
        }
        let user = try await list.client.signUp(username: username, password: readPassword())
        _ = try? await list.client.waitForPendingWrites(timeout: 10)
        print("Signed up as \(describe(user)); your to-dos are kept.")
    }
}

struct LogIn: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login", abstract: "Log in to a registered account (asks for a password).",
        discussion: """
            The anonymous account's to-dos stay with it, as in Parse apps: to keep them, sign up instead \
            (`todo signup <username>`), or log in with --move to move them into the account's list.
            """)
    @Argument(help: "The account's username.") var username: String
    @Flag(help: "Move this device's anonymous to-dos into the account's list.") var move = false
    @Flag(help: "Log in even though the anonymous to-dos are left behind.") var leaveBehind = false

    func run() async throws {
        let list = TodoList()
        let current = list.client.currentUser
        let anonymousTodos = isRegistered(current) || current == nil ? [] : try await list.local()
        if !anonymousTodos.isEmpty, !move, !leaveBehind {
            fail("""
                You have \(anonymousTodos.count) to-do(s) as an anonymous user; logging in as \(username) would leave them behind.
                  todo signup <new username>           keeps them: the anonymous account becomes a registered one
                  todo login \(username) --move          moves them into \(username)'s list
                  todo login \(username) --leave-behind  logs in without them
                """)
        }
        let user = try await list.client.logIn(username: username, password: readPassword())
        try list.client.unpinAll(name: TodoList.pinName)
        if move {
            for item in anonymousTodos {
                try await list.add(item["title"] ?? "", done: item["done"] ?? false,
                                   position: item["position"] ?? Date().timeIntervalSince1970, owner: user)
            }
        }
        await list.refresh()
        print("Logged in as \(describe(user)).")
        if move, !anonymousTodos.isEmpty { print("Moved \(anonymousTodos.count) to-do(s) into your list.") }
        if leaveBehind, !anonymousTodos.isEmpty { print("Left \(anonymousTodos.count) anonymous to-do(s) behind.") }
    }
}

struct LogOut: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "logout", abstract: "Log out (this device forgets the list).")

    func run() async throws {
        let list = TodoList()
        try await list.client.logOut()
        try list.client.unpinAll(name: TodoList.pinName)
        print("Logged out.")
    }
}

