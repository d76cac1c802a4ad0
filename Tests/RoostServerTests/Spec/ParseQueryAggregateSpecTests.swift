import Foundation
import RoostCore
import Testing

/// Parse Server's spec/ParseQuery.Aggregate.spec.js, REST-observable cases, over the spec's `loadTestData()` fixture
/// (four `TestObject`s) sent as the spec's `get` sends them: each parameter JSON-encoded in the URL.
@Suite struct ParseQueryAggregateSpecTests {
    private static let fixture: [JSON] = [
        ["score": 10, "name": "foo", "sender": ["group": "A"], "views": 900, "size": ["S", "M"]],
        ["score": 10, "name": "foo", "sender": ["group": "A"], "views": 800, "size": ["M", "L"]],
        ["score": 10, "name": "bar", "sender": ["group": "B"], "views": 700, "size": ["S"]],
        ["score": 20, "name": "dpl", "sender": ["group": "B"], "views": 700, "size": ["S"]],
    ]

    private static func serverWithFixture() async throws -> TestServer {
        let server = try TestServer(arguments: fastHashing)
        _ = try await server.createAll("TestObject", fixture)
        return server
    }

    /// `GET /aggregate/<C>` with the master key; every parameter JSON-encoded.
    private static func aggregate(_ server: TestServer, in className: String = "TestObject", _ parameters: [String: JSON],
                                  master: Bool = true) async throws -> TestResponse {
        try await server.request("GET", "/aggregate/\(className)", master: master, query: parameters.mapValues(\.jsonText))
    }

    private static func results(_ server: TestServer, in className: String = "TestObject", _ parameters: [String: JSON]) async throws -> [JSON] {
        let response = try await aggregate(server, in: className, parameters)
        guard response.status == 200, let results = response.json["results"]?.arrayValue else {
            throw TestServerError.unexpected(response.status, response.text)
        }
        return results
    }

    private static func pipeline(_ stages: JSON...) -> [String: JSON] { ["pipeline": .array(stages)] }

    // spec: ParseQuery.Aggregate.spec.js: should only query aggregate with master key
    // spec: ParseQuery.Aggregate.spec.js: invalid query group _id required
    // spec: ParseQuery.Aggregate.spec.js: group by field
    // spec: ParseQuery.Aggregate.spec.js: group by pipeline operator
    // spec: ParseQuery.Aggregate.spec.js: group by number
    // spec: ParseQuery.Aggregate.spec.js: group sum query
    // spec: ParseQuery.Aggregate.spec.js: group count query
    // spec: ParseQuery.Aggregate.spec.js: group min query
    // spec: ParseQuery.Aggregate.spec.js: group max query
    // spec: ParseQuery.Aggregate.spec.js: group avg query
    // spec: ParseQuery.Aggregate.spec.js: project with group query
    @Test func groups() async throws {
        let server = try await Self.serverWithFixture()
        let refused = try await Self.aggregate(server, in: "someClass", [:], master: false)
        #expect(refused.status == 403)
        #expect(refused.json["error"] == "unauthorized: master key is required")
        let noId = try await Self.aggregate(server, ["$group": [:]])
        expectError(noId, 102)

        for parameters in [["$group": ["_id": "$name"]], ["pipeline": ["$group": ["_id": "$name"]]]] as [[String: JSON]] {
            let byName = try await Self.results(server, parameters)
            #expect(byName.count == 3)
            #expect(byName.allSatisfy { ($0["objectId"] ?? .null) != .null })
        }
        let byScore = try await Self.results(server, ["$group": ["_id": "$score"]])
        #expect(Set(byScore) == [["objectId": 10], ["objectId": 20]])
        let accumulators: [(JSON, String, JSON)] = [
            (["$sum": "$score"], "total", 50), (["$sum": 1], "total", 4), (["$min": "$score"], "minScore", 10),
            (["$max": "$score"], "maxScore", 20), (["$avg": "$score"], "avgScore", 12.5),
        ]
        for (accumulator, name, expected) in accumulators {
            let result = try await Self.results(server, ["$group": .object(["_id": nil, name: accumulator])])
            #expect(result == [.object(["objectId": nil, name: expected])], "\(accumulator)")
        }
        let projected = try await Self.results(server, ["$project": ["score": 1], "$group": ["_id": "$score", "score": ["$sum": "$score"]]])
        #expect(Set(projected) == [["objectId": 10, "score": 30], ["objectId": 20, "score": 20]])
    }

    // spec: ParseQuery.Aggregate.spec.js: limit query
    // spec: ParseQuery.Aggregate.spec.js: sort ascending query
    // spec: ParseQuery.Aggregate.spec.js: sort decending query
    // spec: ParseQuery.Aggregate.spec.js: skip query
    // spec: ParseQuery.Aggregate.spec.js: match comparison query
    // spec: ParseQuery.Aggregate.spec.js: match multiple comparison query
    // spec: ParseQuery.Aggregate.spec.js: match complex comparison query
    // spec: ParseQuery.Aggregate.spec.js: match comparison and equality query
    // spec: ParseQuery.Aggregate.spec.js: match $or query
    // spec: ParseQuery.Aggregate.spec.js: match exists query
    // spec: ParseQuery.Aggregate.spec.js: project query
    // spec: ParseQuery.Aggregate.spec.js: multiple project query
    // spec: ParseQuery.Aggregate.spec.js: project updatedAt only transform
    // spec: ParseQuery.Aggregate.spec.js: class does not exist return empty
    // spec: ParseQuery.Aggregate.spec.js: field does not exist return empty
    @Test func matchSortPageAndProject() async throws {
        let server = try await Self.serverWithFixture()
        #expect(try await Self.results(server, ["$limit": 2]).count == 2)
        #expect(try await Self.results(server, ["$skip": 2]).count == 2)
        #expect(try await Self.results(server, ["$sort": ["name": 1]]).map { $0["name"] } == ["bar", "dpl", "foo", "foo"])
        #expect(try await Self.results(server, ["$sort": ["name": -1]]).map { $0["name"] } == ["foo", "foo", "dpl", "bar"])

        #expect(try await Self.results(server, ["$match": ["score": ["$gt": 15]]]).map { $0["score"] } == [20])
        #expect(try await Self.results(server, ["$match": ["score": ["$gt": 5, "$lt": 15]]]).map { $0["score"] } == [10, 10, 10])
        let complex = try await Self.results(server, ["$match": ["score": ["$gt": 5, "$lt": 15], "views": ["$gt": 850, "$lt": 1000]]])
        #expect(complex.map { [$0["score"], $0["views"]] } == [[10, 900]])
        let equality = try await Self.results(server, ["$match": ["score": ["$gt": 5, "$lt": 15], "views": 900]])
        #expect(equality.map { [$0["score"], $0["views"]] } == [[10, 900]])
        let either = try await Self.results(server, ["$match": ["$or": [["score": ["$gt": 15, "$lt": 25]], ["views": ["$gt": 750, "$lt": 850]]]]])
        #expect(Set(either.map { [$0["score"], $0["views"]] }) == [[20, 700], [10, 800]])
        #expect(try await Self.results(server, ["$match": ["score": ["$exists": true]]]).count == 4)

        for result in try await Self.results(server, ["$project": ["name": 1]]) {
            #expect(result["objectId"] != nil && result["name"] != nil)
            #expect(result["sender"] == nil && result["size"] == nil && result["score"] == nil)
        }
        for result in try await Self.results(server, ["$project": ["name": 1, "score": 1, "sender": 1]]) {
            #expect(result["objectId"] != nil && result["name"] != nil && result["score"] != nil && result["sender"] != nil)
            #expect(result["size"] == nil)
        }
        let updatedOnly = try await Self.results(server, Self.pipeline(["$project": ["_id": 0, "updatedAt": 1]]))
        #expect(updatedOnly.count == 4)
        #expect(updatedOnly.allSatisfy { $0["updatedAt"] != nil && $0["objectId"] == nil })

        #expect(try await Self.results(server, in: "UnknownClass", ["$group": ["_id": nil, "total": ["$sum": "$score"]]]).isEmpty)
        #expect(try await Self.results(server, in: "UnknownClass", ["$group": ["_id": nil, "total": ["$sum": "$unknownfield"]]]).isEmpty)
    }

    // spec: ParseQuery.Aggregate.spec.js: distinct query
    // spec: ParseQuery.Aggregate.spec.js: distinct query with where
    // spec: ParseQuery.Aggregate.spec.js: distinct query with where string
    // spec: ParseQuery.Aggregate.spec.js: distinct nested
    // spec: ParseQuery.Aggregate.spec.js: distinct class does not exist return empty
    // spec: ParseQuery.Aggregate.spec.js: distinct field does not exist return empty
    // spec: ParseQuery.Aggregate.spec.js: distinct array
    // spec: ParseQuery.Aggregate.spec.js: distinct objectId
    @Test func distinct() async throws {
        let server = try await Self.serverWithFixture()
        #expect(Set(try await Self.results(server, ["distinct": "score"])) == [10, 20])
        #expect(try await Self.results(server, ["distinct": "score", "$where": ["name": "bar"]]).first == 10)
        #expect(try await Self.results(server, ["distinct": "score", "where": ["name": "bar"]]) == [10])
        #expect(Set(try await Self.results(server, ["distinct": "sender.group"])) == ["A", "B"])
        #expect(try await Self.results(server, in: "UnknownClass", ["distinct": "unknown"]).isEmpty)
        #expect(try await Self.results(server, ["distinct": "unknown"]).isEmpty)
        #expect(Set(try await Self.results(server, ["distinct": "size"])) == ["S", "M", "L"])
        #expect(try await Self.results(server, ["distinct": "objectId"]).count == 4)
    }

    // spec: ParseQuery.Aggregate.spec.js: group by empty object
    // spec: ParseQuery.Aggregate.spec.js: group by empty string
    // spec: ParseQuery.Aggregate.spec.js: group by empty array
    // spec: ParseQuery.Aggregate.spec.js: group by multiple columns
    // spec: ParseQuery.Aggregate.spec.js: group by pointer
    // spec: ParseQuery.Aggregate.spec.js: match objectId query
    // spec: ParseQuery.Aggregate.spec.js: match field query
    // spec: ParseQuery.Aggregate.spec.js: match pointer query
    // spec: ParseQuery.Aggregate.spec.js: match pointer with operator query
    // spec: ParseQuery.Aggregate.spec.js: project pointer query
    // spec: ParseQuery.Aggregate.spec.js: distinct pointer
    // spec: ParseQuery.Aggregate.spec.js: project without objectId transform
    @Test func objectsAndPointers() async throws {
        let server = try await Self.serverWithFixture()
        _ = try await server.createAll("TestObject", [[:], [:], [:]])
        for key in [JSON.object([:]), "", []] {
            let grouped = try await Self.results(server, Self.pipeline(["$group": ["_id": key]]))
            #expect(grouped.first?["objectId"] == .null, "\(key.jsonText): \(grouped)")
        }
        let columns = try await Self.results(server, Self.pipeline(["$group": ["_id": ["score": "$score", "views": "$views"], "count": ["$sum": 1]]]))
        #expect(columns.count == 5)

        let targets = try await server.createAll("PointerObject", [[:], [:]])
        let owners = try await server.createAll("Owner", [
            ["pointer": pointer("PointerObject", targets[0]), "name": "TestObject1"],
            ["pointer": pointer("PointerObject", targets[1]), "name": "TestObject2"],
            ["pointer": pointer("PointerObject", targets[0]), "name": "hello"], [:],
        ])
        let byPointer = try await Self.results(server, in: "Owner", Self.pipeline(["$group": ["_id": "$pointer"]]))
        #expect(Set(byPointer.map { $0["objectId"] ?? .null }) == [.string(targets[0]), .string(targets[1]), .null])
        #expect(try await Self.results(server, in: "Owner", Self.pipeline(["$match": ["_id": .string(owners[1])]])).map { $0["objectId"] }
                == [.string(owners[1])])
        #expect(try await Self.results(server, in: "Owner", Self.pipeline(["$match": ["name": "TestObject1"]])).map { $0["objectId"] }
                == [.string(owners[0])])
        let matched = try await Self.results(server, in: "Owner", Self.pipeline(["$match": ["pointer": .string(targets[0])]]))
        #expect(Set(matched.compactMap { $0["objectId"]?.stringValue }) == [owners[0], owners[2]])
        #expect(matched.allSatisfy { $0["pointer"]?["objectId"] == .string(targets[0]) })
        #expect(try await Self.results(server, in: "Owner", Self.pipeline(["$match": ["pointer": ["$exists": true]]])).count == 3)
        let projected = try await Self.results(server, in: "Owner", Self.pipeline(
            ["$match": ["_id": .string(owners[2])]], ["$project": ["pointer": 1, "name": 1, "createdAt": 1]]))
        #expect(projected.count == 1)
        #expect(projected.first?["name"] == "hello")
        #expect(projected.first?["createdAt"] != nil)
        #expect(projected.first?["pointer"]?["objectId"] == .string(targets[0]))
        let distinctPointers = try await Self.results(server, in: "Owner", ["distinct": "pointer"])
        #expect(Set(distinctPointers.compactMap { $0["objectId"]?.stringValue }) == Set(targets))

        _ = try await server.createAll("Priced", [["name": "item a", "total": 20], ["name": "item b", "total": 25]])
        let withoutId = try await Self.results(server, in: "Priced", Self.pipeline(["$project": ["_id": 0, "total": 1]], ["$sort": ["total": 1]]))
        #expect(withoutId == [["total": 20], ["total": 25]])
    }

    // spec: ParseQuery.Aggregate.spec.js: match comparison date query
    // spec: ParseQuery.Aggregate.spec.js: match date query - createdAt
    // spec: ParseQuery.Aggregate.spec.js: match date query - updatedAt
    // spec: ParseQuery.Aggregate.spec.js: match date query - empty
    // spec: ParseQuery.Aggregate.spec.js: distinct createdAt
    // spec: ParseQuery.Aggregate.spec.js: distinct updatedAt
    // spec: ParseQuery.Aggregate.spec.js: match null values
    @Test func datesAndNulls() async throws {
        let server = try await Self.serverWithFixture()
        let now = Date()
        func iso(_ moment: Date) -> JSON { date(parseISO(moment)) }
        _ = try await server.createAll("Dated", [
            ["dateField": iso(now.addingTimeInterval(-86_400))], ["dateField": iso(now)], ["dateField": iso(now.addingTimeInterval(86_400))],
        ])
        #expect(try await Self.results(server, in: "Dated", Self.pipeline(["$match": ["dateField": ["$lt": iso(now.addingTimeInterval(86_400))]]])).count == 2)
        let startOfDay = iso(now.addingTimeInterval(-now.timeIntervalSince1970.truncatingRemainder(dividingBy: 86_400)))
        #expect(try await Self.results(server, Self.pipeline(["$match": ["createdAt": ["$gte": startOfDay]]])).count == 4)
        #expect(try await Self.results(server, Self.pipeline(["$match": ["updatedAt": ["$gte": startOfDay]]])).count == 4)
        #expect(try await Self.results(server, Self.pipeline(["$match": ["createdAt": iso(now.addingTimeInterval(30 * 86_400))]])).isEmpty)

        // One by one, a few milliseconds apart, as the spec saves them: two creates in one batch may share a millisecond.
        var marked: [String] = []
        for fields: JSON in [["createdAt_test": true], ["createdAt_test": true], [:]] {
            marked.append(try await server.create("Stamped", fields))
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(try await Self.results(server, in: "Stamped", ["distinct": "createdAt", "where": ["createdAt_test": true]]).count == 2)
        _ = try await server.request("PUT", "/classes/Stamped/\(marked[2])", json: ["updatedAt_test": true])
        try await Task.sleep(for: .milliseconds(5))
        _ = try await server.request("PUT", "/classes/Stamped/\(marked[0])", json: ["updatedAt_test": true])
        #expect(try await Self.results(server, in: "Stamped", ["distinct": "updatedAt", "where": ["updatedAt_test": true]]).count == 2)

        _ = try await server.createAll("MyCollection", [
            ["language": "en", "otherField": 1], ["language": "en", "otherField": 2], ["language": nil, "otherField": 3],
            ["language": nil, "otherField": 4], ["language": "pt", "otherField": 5], ["language": "pt", "otherField": 6],
        ])
        for match: JSON in [["language": ["$in": [nil, "en"]]], ["$or": [["language": "en"], ["language": nil]]]] {
            let found = try await Self.results(server, in: "MyCollection", Self.pipeline(["$match": match]))
            #expect(found.compactMap { $0["otherField"]?.numberValue }.sorted() == [1, 2, 3, 4], "\(match.jsonText)")
        }
    }

    // spec: ParseQuery.Aggregate.spec.js: distinct null field
    // spec: ParseQuery.Aggregate.spec.js: does not return sensitive hidden properties
    @Test func users() async throws {
        let server = try TestServer(arguments: fastHashing)
        for (name, value) in [("distinct_1", JSON.string("one")), ("distinct_2", .null)] {
            let made = try await server.request("POST", "/users", json: ["username": .string(name), "password": "password", "distinctField": value])
            #expect(made.status == 201)
        }
        #expect(try await Self.results(server, in: "_User", ["distinct": "distinctField"]) == ["one"])
        _ = try await server.request("POST", "/users", json: ["username": "leaky_user", "password": "password", "score": 10])
        let found = try await Self.results(server, in: "_User", ["$match": ["score": ["$gt": 5]]])
        #expect(found.count == 1)
        let user = try #require(found.first)
        for hidden in ["_hashed_password", "_wperm", "_rperm", "_acl", "_created_at", "_updated_at", "password", "sessionToken"] {
            #expect(user[hidden] == nil, "\(hidden)")
        }
        #expect(user["createdAt"] != nil && user["updatedAt"] != nil && user["objectId"] != nil)
        #expect(user["username"] == "leaky_user")
        #expect(user["score"] == 10)
    }

    // spec: ParseQuery.Aggregate.spec.js: group by date object
    // spec: ParseQuery.Aggregate.spec.js: group by date object transform
    // spec: ParseQuery.Aggregate.spec.js: group and multiply transform
    // spec: ParseQuery.Aggregate.spec.js: project and multiply transform
    // spec: ParseQuery.Aggregate.spec.js: can group by any date field (it does not work if you have dirty data)
    // spec: ParseQuery.Aggregate.spec.js: should aggregate with Date object (directAccess)
    @Test func expressions() async throws {
        let server = try TestServer()
        let made = try await server.request("POST", "/classes/Stamp", json: [:])
        let createdAt = try #require(made.json["createdAt"]?.stringValue)
        let parts = createdAt.split(whereSeparator: { "-T".contains($0) }).prefix(3).compactMap { Double($0) }
        for (day, month, year) in [("$_updated_at", "$_created_at", "$_created_at"), ("$updatedAt", "$createdAt", "$createdAt")] {
            let grouped = try await Self.results(server, in: "Stamp", Self.pipeline(["$group": [
                "_id": ["day": ["$dayOfMonth": .string(day)], "month": ["$month": .string(month)], "year": ["$year": .string(year)]],
                "count": ["$sum": 1],
            ]]))
            #expect(grouped.first?["objectId"] == ["day": .number(parts[2]), "month": .number(parts[1]), "year": .number(parts[0])], "\(grouped)")
        }

        _ = try await server.createAll("Item", [["name": "item a", "quantity": 2, "price": 10], ["name": "item b", "quantity": 5, "price": 5]])
        let total = try await Self.results(server, in: "Item", Self.pipeline(["$group": ["_id": nil, "total": ["$sum": ["$multiply": ["$quantity", "$price"]]]]]))
        #expect(total == [["objectId": nil, "total": 45]])
        let projected = try await Self.results(server, in: "Item", Self.pipeline(
            ["$match": ["quantity": ["$exists": true]]], ["$project": ["name": 1, "total": ["$multiply": ["$quantity", "$price"]]]]))
        #expect(Set(projected.map { [$0["name"], $0["total"]] }) == [["item a", 20], ["item b", 25]])

        _ = try await server.createAll("Dirty", [
            ["dateField2019": date("1990-12-01T00:00:00.000Z")], ["dateField2019": date("1990-06-01T00:00:00.000Z")],
            ["dateField2019": date("1990-12-01T00:00:00.000Z")], ["other": 1],
        ])
        let byDate = try await Self.results(server, in: "Dirty", Self.pipeline(
            ["$match": ["dateField2019": ["$exists": true]]],
            ["$group": ["_id": ["day": ["$dayOfMonth": "$dateField2019"], "month": ["$month": "$dateField2019"], "year": ["$year": "$dateField2019"]],
                        "count": ["$sum": 1]]]))
        #expect(byDate.compactMap { $0["count"]?.numberValue }.sorted() == [1, 2])

        _ = try await server.create("Dated", ["date": date("2026-01-01T00:00:00.000Z")])
        let now = date(ISO8601DateFormatter().string(from: Date()).replacingOccurrences(of: "Z", with: ".000Z"))
        #expect(try await Self.results(server, in: "Dated", Self.pipeline(["$match": ["date": ["$lte": now]]])).count == 1)
    }

    /// A File field is answered with its `url`, as a find answers it (clients decoding files need it).
    @Test func filesCarryTheirURL() async throws {
        let server = try TestServer()
        _ = try await server.create("Doc", ["name": "a", "attachment": ["__type": "File", "name": "abc_notes.txt"]])
        let found = try await server.find("Doc", master: true).json["results"]?.arrayValue?.first
        let url = try #require(found?["attachment"]?["url"]?.stringValue)
        let aggregated = try await Self.results(server, in: "Doc", Self.pipeline(["$match": ["name": "a"]]))
        #expect(aggregated.first?["attachment"] == ["__type": "File", "name": "abc_notes.txt", "url": .string(url)])
        let projected = try await Self.results(server, in: "Doc", Self.pipeline(["$project": ["attachment": 1]]))
        #expect(projected.first?["attachment"]?["url"] == .string(url))
    }
}

/// Parse's date form, with milliseconds.
private func parseISO(_ moment: Date) -> String {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    return formatter.string(from: moment)
}
