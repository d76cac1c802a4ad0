import Foundation
import RoostCore
import Testing

/// `explain=true` on a find: SQLite's query plan, for the master key only (Parse Server's default,
/// `databaseOptions.allowPublicExplain` false, and its messages).
@Suite struct QueryExplainTests {
    @Test func explainAnswersThePlanToTheMasterKeyOnly() async throws {
        let server = try TestServer()
        _ = try await server.createAll("Game", [["score": 1], ["score": 2]])
        for value in ["true", "queryPlanner"] {
            expectError(try await server.find("Game", ["explain": .string(value)]), 102,
                        "Using the explain query parameter requires the master key")
        }
        let plan = try await server.find("Game", ["explain": "true", "where": ["score": 1]], master: true)
        #expect(plan.status == 200, "\(plan.text)")
        let steps = try #require(plan.json["results"]?.arrayValue)
        #expect(!steps.isEmpty)
        // Plan steps, not objects: each names what SQLite does (a scan or a search of the class's table).
        #expect(steps.allSatisfy { $0["detail"]?.stringValue != nil && $0["objectId"] == nil }, "\(plan.text)")
        #expect(steps.contains { ($0["detail"]?.stringValue ?? "").hasPrefix("SCAN") || ($0["detail"]?.stringValue ?? "").hasPrefix("SEARCH") })

        expectError(try await server.find("Game", ["explain": "bogus"], master: true), 102, "Invalid value for explain")
        // Without explain the same query is an ordinary public read.
        #expect(try await server.find("Game", ["where": ["score": 1]]).json["results"]?.arrayValue?.count == 1)
        #expect(try await server.find("Game", ["explain": false], master: true).json["results"]?.arrayValue?.count == 2)
    }

    // spec: ParseQuery.spec.js: gracefully handles invalid explain values
    @Test func falsyExplainValuesAskForNothing() async throws {
        let server = try TestServer()
        _ = try await server.createAll("Game", [["score": 1], ["score": 2]])
        for value: JSON in [0, .null, ""] {
            let found = try await server.find("Game", ["explain": value], master: true)
            #expect(found.json["results"]?.arrayValue?.count == 2, "\(value): \(found.text)")
        }
    }
}
