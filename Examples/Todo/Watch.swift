import ArgumentParser
import Foundation
import Roost

/// `todo watch`: the list's changes made on other devices, printed as they happen (LiveQuery). Across a
/// disconnect or a server restart it resumes where it stopped, so no change is missed or printed twice; when the
/// server cannot replay the gap, it prints the whole list again.
struct Watch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print changes to the list as they happen on other devices (Ctrl-C to stop).")
    @Option(help: "Stop after this many changes (for scripts).") var count: Int?

    func run() async throws {
        let list = TodoList()
        guard let user = list.client.currentUser, !user.isLazy else {
            fail("This device has no account on the server yet: `todo add <title>` or `todo login <username>` first.")
        }
        await list.refresh()
        var seen = 0
        var isFirst = true
        // The subscription keeps the pinned list (what `todo list` shows offline) in step, event by event.
        let subscription = list.client.query("Todo").whereKey("owner", equalTo: user).subscribe(pinName: TodoList.pinName)
        for try await event in subscription {
            switch event.kind {
            case .subscribed:
                say(isFirst ? "Watching \(describe(user))'s list (Ctrl-C to stop)." : "(reconnected)")
                isFirst = false
                continue
            case .created, .entered:
                say("+ \(title(event.object))")
            case .updated:
                say(describeUpdate(event))
            case .left, .deleted:
                say("- \(title(event.object))")
            case .refreshed:
                say("The server could not replay what happened while disconnected; the list now:")
                for item in event.objects.sorted(by: { ($0["position"] ?? 0.0) < ($1["position"] ?? 0.0) }) {
                    say("  [\((item["done"] ?? false) ? "x" : " ")] \(title(item))")
                }
            }
            seen += 1
            if let count, seen >= count { break }
        }
    }

    private func title(_ item: RoostObject?) -> String { item?["title"] ?? "(untitled)" }

    private func describeUpdate(_ event: LiveQueryEvent) -> String {
        let now = title(event.object), before: String? = event.previous?["title"]
        let done: Bool = event.object?["done"] ?? false, wasDone: Bool = event.previous?["done"] ?? false
        if let before, before != now { return "~ \(before) → \(now)" }
        if done != wasDone { return done ? "✓ \(now)" : "☐ \(now) (not done)" }
        return "~ \(now)"
    }
}
