import Foundation
import Roost
import RoostCore
import RoostTestSupport
import Testing

/// `RoostClient.callFunction`: a Cloud Function served by a webhook, called with the user's session.
@Suite struct SDKCloudFunctionTests {
    @Test func callsAFunctionAndSurfacesItsError() async throws {
        let server = try ServerProcess()
        let receiver = try WebhookReceiver(reply: #"{"success":{"sum":3}}"#)
        let registered = try await server.masterRequest("POST", "hooks/functions", json: ["functionName": "add", "url": .string(receiver.url)])
        #expect(registered["functionName"] == "add")

        let client = try server.makeClient()
        _ = try await client.signUp(username: "cloud-user", password: "pw-cloud")
        #expect(try await client.callFunction("add", parameters: ["a": 1, "b": 2]) == ["sum": 3])
        let sent = try JSONParser.parse(Array(try #require(receiver.requests.last).body))
        #expect(sent["params"] == ["a": 1, "b": 2] && sent["user"]?["username"] == "cloud-user")

        receiver.reply(with: #"{"error":"b must be positive"}"#)
        await #expect(throws: RoostError.self) { try await client.callFunction("add", parameters: ["b": -1]) }
        do {
            _ = try await client.callFunction("missing")
            Issue.record("an unknown function answered")
        } catch let error as RoostError {
            #expect(error.code?.rawValue == 141)
        }
        #expect(throws: RoostError.self) { try client.callFunctionBlocking("no/slash") }
    }
}
