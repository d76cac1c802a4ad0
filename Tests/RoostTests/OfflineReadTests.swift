import Foundation
import Roost
import RoostCore
import Testing

@Suite struct OfflineReadTests {
    func seed(_ client: RoostClient, _ titles: [String], from first: Int = 0) async throws {
        try await client.saveAll(titles.enumerated().map { index, title in
            let object = client.object("Article")
            object["title"] = title
            object["rank"] = first + index
            return object
        })
    }

    func titles(_ objects: [RoostObject]) -> [String] { objects.compactMap { $0["title"] as String? } }

    @Test func cachePoliciesAnswerFromTheRightPlace() async throws {
        let server = try ServerProcess()
        let client = try server.makeClient()
        try await seed(client, ["a", "b"])
        let query = client.query("Article").order(byAscending: "rank")

        await #expect(throws: RoostError.self) { try await query.cachePolicy(.cacheOnly).find() }  // Nothing cached yet.
        #expect(query.lastUpdated == nil)
        #expect(titles(try await query.cachePolicy(.ignoreCache).find()) == ["a", "b"])
        #expect(query.lastUpdated == nil)  // ignoreCache writes nothing.
        #expect(titles(try await query.cachePolicy(.networkOnly).find()) == ["a", "b"])
        #expect(query.lastUpdated != nil)

        try await seed(client, ["c"], from: 2)
        #expect(titles(try await query.cachePolicy(.cacheOnly).find()) == ["a", "b"])
        #expect(titles(try await query.cachePolicy(.cacheElseNetwork).find()) == ["a", "b"])
        #expect(titles(try await query.cachePolicy(.cacheElseNetwork).maxCacheAge(0).find()) == ["a", "b", "c"])
        #expect(titles(try await query.cachePolicy(.networkElseCache).find()) == ["a", "b", "c"])

        server.stop()
        var answers: [QueryResults] = []
        for try await answer in query.cachePolicy(.networkElseCache).results() { answers.append(answer) }
        #expect(answers.count == 1)
        #expect(answers[0].source == .cache)
        #expect(answers[0].networkError?.isTransport == true)  // The cached copy, with the error.
        #expect(titles(answers[0].objects) == ["a", "b", "c"])

        try query.clearCachedResult()
        await #expect(throws: RoostError.self) { try await query.cachePolicy(.networkElseCache).find() }
    }

    @Test func cacheThenNetworkAnswersTwiceAndSaysWhetherAnythingChanged() async throws {
        let server = try ServerProcess()
        let client = try server.makeClient()
        try await seed(client, ["a", "b"])
        let query = client.query("Article").order(byAscending: "rank").cachePolicy(.cacheThenNetwork)
        func answers() async throws -> [QueryResults] {
            var result: [QueryResults] = []
            for try await answer in query.results() { result.append(answer) }
            return result
        }
        let first = try await answers()
        #expect(first.map(\.source) == [.network])  // Nothing cached yet: one answer.
        #expect(first[0].changed == nil)

        let same = try await answers()
        #expect(same.map(\.source) == [.cache, .network])
        #expect(same[1].changed == false)

        let other = try server.makeClient()
        let article = try #require(try await other.query("Article").whereKey("title", equalTo: "b").first())
        article["title"] = "b (edited)"
        try await article.save()
        let changed = try await answers()
        #expect(changed[1].changed == true)
        #expect(titles(changed[1].objects) == ["a", "b (edited)"])
        #expect(titles(changed[0].objects) == ["a", "b"])
    }

    @Test func cachedResultsBelongToTheirUser() async throws {
        let server = try ServerProcess()
        let client = try server.makeClient()
        try await client.signUp(username: "u1", password: "pw")
        let mine = client.object("Private")
        mine["title"] = "mine"
        mine.acl = RoostACL(owner: try #require(client.currentUser))
        try await mine.save()
        #expect(try await client.query("Private").cachePolicy(.networkOnly).find().count == 1)
        try await client.logOut()
        try await client.signUp(username: "u2", password: "pw")
        await #expect(throws: RoostError.self) { try await client.query("Private").cachePolicy(.cacheOnly).find() }
    }

    @Test func pinnedObjectsAnswerLocalQueriesWithQueuedChanges() async throws {
        let server = try ServerProcess(start: false)
        let client = try server.makeClient()
        let milk = client.object("Todo")
        milk["title"] = "milk"
        milk["done"] = false
        milk["position"] = 1
        let eggs = client.object("Todo")
        eggs["title"] = "eggs"
        eggs["done"] = false
        eggs["position"] = 2
        try client.pinAll([milk, eggs], name: "todos")
        try await milk.saveEventually()
        try await eggs.saveEventually()
        eggs["done"] = true
        try await eggs.saveEventually()  // Offline: visible to local queries at once.

        let local = client.query("Todo").fromLocalDatastore(pinName: "todos")
        #expect(titles(try await local.order(byAscending: "position").find()) == ["milk", "eggs"])
        #expect(titles(try await local.whereKey("done", equalTo: true).find()) == ["eggs"])
        #expect(try await local.whereKey("title", hasPrefix: "mi").count() == 1)

        try server.start()
        try await client.waitForPendingWrites()
        let reloaded = try await local.order(byAscending: "position").find()
        #expect(reloaded.allSatisfy { $0.objectId != nil })  // The pins learned their objectIds.
        try milk.unpin()
        #expect(titles(try await local.find()) == ["eggs"])
        try client.unpinAll(name: "todos")
        #expect(try await local.find().isEmpty)
    }
}
