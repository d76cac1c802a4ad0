import Foundation
import Roost

let client = try RoostClient.initialize(.init(
    serverURL: URL(string: "http://127.0.0.1:1337/parse")!, applicationId: "roost"))
client.enableAutomaticUser()                 // an anonymous user at once, no network needed

let todo = client.object("Todo")
todo["title"] = "Buy 100 tons of cat litter"
todo.acl = RoostACL(owner: client.currentUser!)
try await todo.save()                         // creates the anonymous account first, then the to-do

let open = try await client.query("Todo").whereKey("done", notEqualTo: true).order(byDescending: "createdAt").find()
try await client.signUp(username: "ann", password: "a long passphrase")  // same objectId, data kept

let hits = try await client.query("Todo").whereKey("title", matchesText: "cat litter").orderByTextScore().find()
do {
    let total = try await client.callFunction("cartTotal", parameters: ["currency": "EUR"])  // a function webhook's result
    print(total)
} catch {
    print(error)  // 141 Invalid function until a webhook is registered for cartTotal (POST /hooks/functions)
}

struct TodoItem: RoostModel {
    static let className = "Todo"
    var objectId: String?
    var createdAt: Date?
    var updatedAt: Date?
    var title: String
    var done = false
}

do {  // a block, so `item` is a local variable
    var item = TodoItem(title: "Water the plants")
    try await client.save(&item)              // sets objectId, createdAt, updatedAt
    let waiting = try await client.query(TodoItem.self).whereKey("done", equalTo: false).find(as: TodoItem.self)
    print(waiting.count)
}

todo["done"] = true
try todo.saveEventually()         // on disk before it returns; delivered exactly once, in order, when reachable
try await client.waitForPendingWrites()

for try await answer in client.query("Todo").cachePolicy(.cacheThenNetwork).results() {
    print(answer.source, answer.changed ?? false, answer.objects.count)   // the cache at once, then the network
}
try todo.pin(name: "todos")       // query it offline with .fromLocalDatastore(pinName: "todos")

let live = client.query("Todo").whereKey("done", equalTo: false).subscribe()
Task {
    for try await event in live {                 // subscribed, created, entered, updated, left, deleted, refreshed
        print(event.kind, event.object?["title"] as String? ?? "", event.previous?["title"] as String? ?? "")
    }
}
let observer = NotificationCenter.default.addObserver(forName: RoostClient.dataDidChangeNotification, object: client,
                                                      queue: nil) { _ in print("the query cache and pinned objects changed") }
client.subscribe(client.query(TodoItem.self), watch: ["done"]) { result in   // the callback form, for plain programs
    if case .success(let event) = result, let item = try? event.object(as: TodoItem.self) { print(item.title, item.done) }
}
live.cancel()
NotificationCenter.default.removeObserver(observer)
