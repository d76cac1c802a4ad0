import Foundation
import Roost
import RoostCore
import Testing

@Suite struct SDKQueryTests {
    struct TodoItem: RoostModel, Equatable {
        static let className = "TodoItem"
        var objectId: String?
        var createdAt: Date?
        var updatedAt: Date?
        var title: String
        var priority: Int
        var done = false
        var due: Date?
    }

    @Test func theBuilderCoversTheOperators() async throws {
        let server = try ServerProcess()
        let client = try server.makeClient()
        let team = client.object("Team")
        team["city"] = "Paris"
        try await team.save()
        var objects: [RoostObject] = []
        for (index, name) in ["alpha", "beta", "gamma", "delta", "epsilon"].enumerated() {
            let object = client.object("Player")
            object["name"] = name
            object["score"] = index * 10
            object["tags"] = index % 2 == 0 ? ["even", "x"] : ["odd"]
            object["hometown"] = index < 2 ? "Paris" : "Rome"
            object["place"] = GeoPoint(latitude: 40 + Double(index), longitude: 10)
            if index == 0 { object.set("team", pointerTo: team) }
            objects.append(object)
        }
        try await client.saveAll(objects)
        func names(_ query: RoostQuery) async throws -> Set<String> {
            Set(try await query.find().compactMap { $0["name"] as String? })
        }
        let players = client.query("Player")
        #expect(try await names(players.whereKey("score", greaterThan: 15).whereKey("score", lessThanOrEqualTo: 30)) == ["gamma", "delta"])
        #expect(try await names(players.whereKey("name", containedIn: ["beta", "zeta"])) == ["beta"])
        #expect(try await names(players.whereKey("name", notEqualTo: "alpha").whereKey("tags", equalTo: "even")) == ["gamma", "epsilon"])
        #expect(try await names(players.whereKey("tags", containsAllObjectsIn: ["even", "x"])) == ["alpha", "gamma", "epsilon"])
        #expect(try await names(players.whereKey("name", hasPrefix: "ga")) == ["gamma"])
        #expect(try await names(players.whereKey("name", hasSuffix: "ta")) == ["beta", "delta"])
        #expect(try await names(players.whereKey("name", matchesRegex: "^EP", options: "i")) == ["epsilon"])
        #expect(try await names(players.whereKey("hometown", matchesText: "paris -rome")) == ["alpha", "beta"])
        let byRelevance = try await players.whereKey("tags", matchesText: "odd even").orderByTextScore().find()
        #expect(byRelevance.count == 5)
        // ["odd"] is all match; ["even", "x"] is half match.
        #expect(Set(byRelevance.prefix(2).compactMap { $0["name"] as String? }) == ["beta", "delta"])
        #expect(try await names(players.whereKeyExists("team")) == ["alpha"])
        #expect(try await names(players.whereKey("team", matchesQuery: client.query("Team").whereKey("city", equalTo: "Paris"))) == ["alpha"])
        #expect(try await names(players.whereKey("hometown", matchesKey: "city", in: client.query("Team"))) == ["alpha", "beta"])
        #expect(try await names(RoostQuery.or([players.whereKey("score", equalTo: 0), players.whereKey("score", equalTo: 40)])) == ["alpha", "epsilon"])
        let nearest = try await players.whereKey("place", nearGeoPoint: GeoPoint(latitude: 43.9, longitude: 10)).limit(2).find()
        #expect(nearest.compactMap { $0["name"] as String? } == ["epsilon", "delta"])
        #expect(try await players.order(byDescending: "score").first()?["name"] == "epsilon")
        #expect(try await players.order(byAscending: "score").skip(1).limit(2).find().compactMap { $0["name"] as String? } == ["beta", "gamma"])
        #expect(try await players.whereKey("score", greaterThanOrEqualTo: 20).count() == 3)
        let selected = try #require(try await players.select(["name"]).first())
        #expect(selected.value(forKey: "score") == nil)
        let included = try #require(try await players.whereKeyExists("team").include("team").first())
        #expect(included.pointer(forKey: "team")?["city"] == "Paris")
    }

    @Test func typedModelsSaveFetchAndQuery() async throws {
        let server = try ServerProcess()
        let client = try server.makeClient()
        let due = Date(timeIntervalSince1970: 1_800_000_000)
        var item = TodoItem(title: "Buy 100 tons of cat litter", priority: 2, due: due)
        try await client.save(&item)
        let id = try #require(item.objectId)
        #expect(item.createdAt != nil)

        item.done = true
        try await client.save(&item)
        let fetched = try await client.fetch(TodoItem.self, objectId: id)
        #expect(fetched.title == item.title)
        #expect(fetched.done)
        #expect(fetched.due == due)

        var second = TodoItem(title: "Water plants", priority: 1)
        try await client.save(&second)
        let open = try await client.query(TodoItem.self).whereKey("done", equalTo: false).find(as: TodoItem.self)
        #expect(open.map(\.title) == ["Water plants"])
        try await client.delete(second)
        #expect(try await client.query(TodoItem.self).count() == 1)
    }
}
