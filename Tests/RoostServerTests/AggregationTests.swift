import Foundation
import RoostCore
@testable import RoostServer
import Testing

/// `Aggregation` on its own (the stages), and `GET /aggregate/<C>` end to end.
@Suite struct AggregationTests {
    let players: [Aggregation.Document] = [
        ["objectId": "a", "name": "ann", "score": 10, "team": "red", "tags": ["x", "y"]],
        ["objectId": "b", "name": "bob", "score": 20, "team": "red", "tags": ["y"]],
        ["objectId": "c", "name": "cid", "score": 30, "team": "blue"],
        ["objectId": "d", "name": "dee", "score": 40, "team": "blue", "tags": []],
        ["objectId": "e", "name": "eve", "score": 50, "team": nil],
    ]

    func run(_ pipeline: [JSON]) throws -> [Aggregation.Document] {
        try Aggregation(pipeline: pipeline).run(players)
    }

    @Test func groupsWithAccumulators() throws {
        let grouped = try run([
            ["$group": ["_id": "$team", "total": ["$sum": "$score"], "count": ["$sum": 1], "mean": ["$avg": "$score"],
                        "best": ["$max": "$score"], "names": ["$push": "$name"]]],
            ["$sort": ["total": -1]],
        ])
        #expect(grouped.map { $0["objectId"] } == ["blue", .null, "red"])
        #expect(grouped[0]["total"] == 70 && grouped[0]["count"] == 2 && grouped[0]["mean"] == 35 && grouped[0]["best"] == 40)
        #expect(grouped[2]["names"] == ["ann", "bob"])
        #expect(try run([["$group": ["_id": nil, "total": ["$sum": "$score"]]]]) == [["objectId": nil, "total": 150]])
    }

    @Test func matchesProjectsSortsAndPages() throws {
        let page = try run([
            ["$match": ["score": ["$gte": 20, "$lt": 50], "team": ["$in": ["red", "blue"]]]],
            ["$sort": ["score": -1]], ["$skip": 1], ["$limit": 1], ["$project": ["name": 1]],
        ])
        #expect(page == [["objectId": "c", "name": "cid"]])
        // An array field matches a value it contains; `$exists` looks for the key.
        #expect(try run([["$match": ["tags": "y"]]]).map { $0["objectId"] } == ["a", "b"])
        #expect(try run([["$match": ["tags": ["$exists": false]]]]).map { $0["objectId"] } == ["c", "e"])
        #expect(try run([["$match": ["score": ["$gt": 15]]], ["$count": "n"]]) == [["n": 4]])
        #expect(try run([["$unwind": "$tags"], ["$project": ["tags": 1, "_id": 0]]]) == [["tags": "x"], ["tags": "y"], ["tags": "y"]])
        #expect(try run([["$project": ["score": 0, "tags": 0, "team": 0, "name": 0]]]).first == ["objectId": "a"])
    }

    @Test func distinctUnwindsArraysAndDropsNulls() {
        #expect(Aggregation.distinct("team", in: players) == ["red", "blue"])
        #expect(Aggregation.distinct("tags", in: players) == ["x", "y"])
    }

    /// Parse's `AggregateRouter.getPipeline` checks, all 102.
    @Test func badStagesAreRefusedAsParseDoes() {
        func message(_ pipeline: [JSON]) -> String? {
            do {
                _ = try Aggregation(pipeline: pipeline)
                return nil
            } catch let error as ParseError {
                #expect(error.code == .invalidQuery)
                return error.message
            } catch { return "\(error)" }
        }
        #expect(message([["group": ["_id": nil]]]) == "Invalid aggregate stage 'group'.")
        #expect(message([["$group": ["objectId": nil]]]) == "Cannot use 'objectId' in aggregation stage $group.")
        #expect(message([["$group": ["total": ["$sum": 1]]]]) == "Invalid parameter for query: group. Missing key _id")
        #expect(message([["$match": [:], "$limit": 1]]) == "Pipeline stages should only have one key but found $limit, $match.")
        #expect(message([["$lookup": [:]]]) != nil)
    }

    // spec: AggregateRouter.spec.js: get pipeline from Array
    // spec: AggregateRouter.spec.js: should throw with invalid stage
    // spec: AggregateRouter.spec.js: get pipeline fails multiple keys in Array stage 
    @Test func aPipelineMayBeTheWholeBody() async throws {
        let server = try TestServer()
        _ = try await server.createAll("Player", [["team": "red"], ["team": "red"], ["team": "blue"]])
        // A GET with a body: Foundation's URLSession sends none, so the request is written out by hand.
        func aggregate(_ pipeline: JSON) throws -> JSON {
            let body = pipeline.jsonText
            let (_, answer) = try RawConnection(port: server.port).exchange(
                "GET /parse/aggregate/Player HTTP/1.1\r\nHost: roost\r\nX-Parse-Application-Id: \(TestServer.applicationId)\r\n"
                + "X-Parse-Master-Key: \(TestServer.masterKey)\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n"
                + "Connection: close\r\n\r\n\(body)")
            return try JSONParser.parse(answer)
        }
        #expect(try aggregate([["$group": ["_id": "$team", "n": ["$sum": 1]]], ["$sort": ["n": -1]]])["results"]
                == [["objectId": "red", "n": 2], ["objectId": "blue", "n": 1]])
        #expect(try aggregate([["foo": "bar"]]) == ["code": 102, "error": "Invalid aggregate stage 'foo'."])
        #expect(try aggregate([["$match": ["team": "red"], "$limit": 1]])
                == ["code": 102, "error": "Pipeline stages should only have one key but found $limit, $match."])
    }

    @Test func aggregateEndpointForTheMasterKey() async throws {
        let server = try TestServer()
        _ = try await server.createAll("Player", [["name": "ann", "score": 10, "team": "red"], ["name": "bob", "score": 20, "team": "red"],
                                                  ["name": "cid", "score": 30, "team": "blue"]])
        let distinct = try await server.request("GET", "/aggregate/Player", master: true,
                                                query: ["distinct": "team", "where": #"{"score":{"$gt":15}}"#])
        #expect(distinct.status == 200, "\(distinct.text)")
        #expect(distinct.json == ["results": ["red", "blue"]])
        let grouped = try await server.request("GET", "/aggregate/Player", master: true,
                                               query: ["$group": #"{"_id":null,"total":{"$sum":"$score"}}"#])
        #expect(grouped.json == ["results": [["objectId": nil, "total": 60]]])
        let pipeline = try await server.request("GET", "/aggregate/Player", master: true, query: [
            "pipeline": #"[{"$group":{"_id":"$team","n":{"$sum":1}}},{"$sort":{"n":-1}}]"#,
        ])
        #expect(pipeline.json == ["results": [["objectId": "red", "n": 2], ["objectId": "blue", "n": 1]]])
        // Stage parameters run in the order the URL gives them, as Parse's (Express keeps it).
        func stages(_ written: [(String, String)]) async throws -> JSON? {
            let query = written.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)" }.joined(separator: "&")
            return try await server.request("GET", "/aggregate/Player?" + query, master: true).json["results"]
        }
        #expect(try await stages([("$sort", #"{"score":-1}"#), ("$limit", "1"), ("$project", #"{"name":1,"_id":0}"#)]) == [["name": "cid"]])
        let groups = #"{"_id":"$team","n":{"$sum":1}}"#, big = #"{"n":{"$gt":1}}"#, red = #"{"team":"red"}"#
        #expect(try await stages([("$group", groups), ("$match", big)]) == [["objectId": "red", "n": 2]])  // Groups filtered.
        #expect(try await stages([("$match", big), ("$group", groups)]) == [])  // No player has `n`.
        #expect(try await stages([("$match", red), ("$group", groups)]) == [["objectId": "red", "n": 2]])
        #expect(try await stages([("$group", groups), ("$match", red)]) == [])  // Groups have no `team`.
        // A body's stages keep no order once decoded: those run in the usual one, filters before groups. (A GET with a
        // body, as the JS SDK sends it: POST with `_method`.)
        let body = try await server.request("POST", "/aggregate/Player", json: ["_method": "GET", "$group": .object(["_id": "$team", "n": ["$sum": 1]]),
                                                                               "$match": ["team": "red"]], master: true)
        #expect(body.json["results"] == [["objectId": "red", "n": 2]], "\(body.text)")
        #expect(try await server.request("GET", "/aggregate/Player", query: ["distinct": "team"]).status == 403)
        #expect(try await server.request("GET", "/aggregate/Player", master: true, query: ["group": "{}"]).json["code"] == 102)
        // `comment`, like `hint` and `explain`, is an option Parse hands to the database, not a stage.
        let commented = try await server.request("GET", "/aggregate/Player", master: true, query: ["distinct": "team", "comment": "Hello"])
        #expect(commented.json == distinct.json, "\(commented.text)")
        #expect(try await server.request("GET", "/aggregate/Nothing", master: true, query: ["distinct": "a"]).json == ["results": []])
    }
}
