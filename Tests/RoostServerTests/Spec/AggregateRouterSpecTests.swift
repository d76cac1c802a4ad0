import Foundation
import RoostCore
import Testing

/// Parse Server's spec/AggregateRouter.spec.js over REST. The spec calls `AggregateRouter.getPipeline(body)`; here the
/// body goes to `GET /aggregate/<C>` as the JS SDK sends it (`POST` with `_method: GET`), and the answer shows which
/// pipeline ran. Three cases are in `AggregationTests` (the pipeline as the whole body, an invalid stage, two keys in a
/// stage). Not carried: `$search` (MongoDB Atlas Search) and a `$lookup` with a nested pipeline, MongoDB-only stages
/// (Roost answers 102 "Unsupported aggregate stage '$search'." / "'$lookup'.").
@Suite struct AggregateRouterSpecTests {
    /// Three `Player`s; the first has `someKey: "whatever"`. Returns the server and the ids in order.
    private func players() async throws -> (TestServer, [String]) {
        let server = try TestServer()
        let ids = try await server.createAll("Player", [["team": "red", "someKey": "whatever"], ["team": "red"], ["team": "blue"]])
        return (server, ids)
    }

    /// `GET /aggregate/Player` with the master key, `body` as the JS SDK sends it.
    private func aggregate(_ server: TestServer, _ body: [String: JSON]) async throws -> TestResponse {
        var body = body
        body["_method"] = "GET"
        return try await server.request("POST", "/aggregate/Player", json: .object(body), master: true)
    }

    private func results(_ response: TestResponse, sourceLocation: SourceLocation = #_sourceLocation) -> [JSON]? {
        #expect(response.status == 200, "\(response.text)", sourceLocation: sourceLocation)
        return response.json["results"]?.arrayValue
    }

    // spec: AggregateRouter.spec.js: get pipeline from Object
    // spec: AggregateRouter.spec.js: get pipeline from Pipeline Operator (Array)
    // spec: AggregateRouter.spec.js: get pipeline from Pipeline Operator (Object)
    /// `{$group: {_id: {}}}` makes one group of everything; MongoDB's empty `_id` is answered as `objectId: null`.
    @Test func aStageObjectAndAPipelineArrayOrObjectRunTheSamePipeline() async throws {
        let (server, _) = try await players()
        let group: JSON = ["_id": [:]]
        let oneGroup: [JSON] = [["objectId": nil]]
        #expect(results(try await aggregate(server, ["$group": group])) == oneGroup)
        #expect(results(try await aggregate(server, ["pipeline": [["$group": group]]])) == oneGroup)
        #expect(results(try await aggregate(server, ["pipeline": ["$group": group]])) == oneGroup)
        // The same in the URL, each parameter JSON-encoded.
        for query in [["$group": group.jsonText], ["pipeline": JSON.array([["$group": group]]).jsonText],
                      ["pipeline": JSON.object(["$group": group]).jsonText]] {
            let response = try await server.request("GET", "/aggregate/Player", master: true, query: query)
            #expect(results(response) == oneGroup, "\(query)")
        }
        // With an accumulator, the group is seen to hold all three.
        #expect(results(try await aggregate(server, ["pipeline": ["$group": ["_id": nil, "n": ["$sum": 1]]]])) == [["objectId": nil, "n": 3]])
    }

    // spec: AggregateRouter.spec.js: get pipeline fails multiple keys in Pipeline Operator Array stage 
    @Test func aPipelineStageWithTwoKeysIsRefused() async throws {
        let (server, _) = try await players()
        let stage: JSON = ["$group": ["_id": [:]], "$match": ["name": "Test"]]
        expectError(try await aggregate(server, ["pipeline": [stage]]), 102,
                    "Pipeline stages should only have one key but found $group, $match.")
    }

    // spec: AggregateRouter.spec.js: support stage name starting with `$`
    @Test func aMatchStageObjectFilters() async throws {
        let (server, ids) = try await players()
        let matched = results(try await aggregate(server, ["$match": ["someKey": "whatever"]]))
        #expect(matched?.compactMap { $0["objectId"]?.stringValue } == [ids[0]], "\(matched ?? [])")
        #expect(matched?.first?["team"] == "red")
    }

    // spec: AggregateRouter.spec.js: support the use of `_id` in stages
    /// `_id` names the objectId in `$match`, `$sort`, `$group` and `$project`. (The spec's `$addFields` stage is
    /// MongoDB's: Roost answers 102 "Unsupported aggregate stage '$addFields'.", Parse's PostgreSQL adapter skips it.)
    @Test func underscoreIdIsTheObjectIdInStages() async throws {
        let (server, ids) = try await players()
        let spec: JSON = [["$match": ["_id": "randomId"]], ["$sort": ["_id": -1]], ["$group": ["_id": [:]]], ["$project": ["_id": 0]]]
        #expect(results(try await aggregate(server, ["pipeline": spec])) == [])
        let grouped: JSON = [["$sort": ["_id": -1]], ["$group": ["_id": [:]]], ["$project": ["_id": 0]]]
        #expect(results(try await aggregate(server, ["pipeline": grouped])) == [[:]])
        let one: JSON = [["$match": ["_id": .string(ids[0])]], ["$project": ["_id": 0, "team": 1]]]
        #expect(results(try await aggregate(server, ["pipeline": one])) == [["team": "red"]])
        // Sorted as a find sorts `order=-objectId` (the database's collation decides between cases).
        let sorted = results(try await aggregate(server, ["pipeline": [["$sort": ["_id": -1]], ["$project": ["team": 1]]]]))
        let found = try await server.results("Player", ["order": "-objectId"]).compactMap { $0["objectId"]?.stringValue }
        #expect(Set(found) == Set(ids))
        #expect(sorted?.compactMap { $0["objectId"]?.stringValue } == found)
    }

    // spec: AggregateRouter.spec.js: should throw with invalid group
    @Test func aGroupOnObjectIdIsRefused() async throws {
        let (server, _) = try await players()
        let message = "Cannot use 'objectId' in aggregation stage $group."
        expectError(try await aggregate(server, ["pipeline": [["$group": ["objectId": "bar"]]]]), 102, message)
        expectError(try await aggregate(server, ["$group": ["objectId": "bar"]]), 102, message)
    }
}
