import Foundation
import RoostCore
import Testing

/// More of Parse Server's spec/LogsRouter.spec.js (see `LogsRouterSpecTests`). The spec calls
/// `LogsRouter.validateRequest` with a master-key request; over REST that is `GET /scriptlog` with the master key,
/// answered with the recent lines. ("can check invalid construction of controller", a request without a
/// `loggerController`, is about Parse's internals and is not carried.)
@Suite struct LogsRouterRESTSpecTests {
    // spec: LogsRouter.spec.js: can check valid master key of request
    @Test func scriptlogAnswersTheMasterKey() async throws {
        let server = try TestServer()
        _ = try await server.request("GET", "/health")
        let answer = try await server.request("GET", "/scriptlog", master: true)
        #expect(answer.status == 200, "\(answer.text)")
        let entries = try #require(answer.json.arrayValue, "\(answer.text)")
        #expect(!entries.isEmpty)
        #expect(entries.allSatisfy { $0["level"] != nil && $0["message"]?.stringValue != nil && $0["timestamp"]?.stringValue != nil })
    }
}
