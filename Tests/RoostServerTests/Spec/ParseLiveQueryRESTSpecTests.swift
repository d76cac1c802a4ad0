import Foundation
import RoostCore
import Testing

/// More of Parse Server's spec/ParseLiveQuery.spec.js over the wire (see `ParseLiveQuerySpecTests`): REST writes and
/// Parse's LiveQuery messages on a `LiveSocket`, subscribed with the signed-up user's session token as the JS SDK
/// subscribes. Of "LiveQuery with ACL", the events are carried; its `beforeConnect`, `beforeSubscribe` and
/// `afterLiveQueryEvent` Cloud Code spies are not (Roost has no JavaScript Cloud Code).
/// Timed (events within seconds): to be listed in the Makefile's TIMED_SUITES and POSTGRES_TIMED_SUITES.
@Suite struct ParseLiveQueryRESTSpecTests {
    /// A connected socket with one subscription (request id 1) that Roost accepted.
    private func subscribed(_ server: TestServer, _ query: JSON, sessionToken: String? = nil) async throws -> LiveSocket {
        let socket = try LiveSocket(server)
        var connect: [String: JSON] = [:]
        if let sessionToken { connect["sessionToken"] = .string(sessionToken) }
        #expect(try await socket.connect(connect)?["op"] == "connected")
        let answer = try await socket.subscribe(1, query, sessionToken: sessionToken)
        try #require(answer?["op"] == "subscribed", "\(answer ?? .null)")
        return socket
    }

    // spec: ParseLiveQuery.spec.js: LiveQuery with ACL
    /// The user's own object, readable by the user only: its subscriber gets the create and the delete.
    @Test func theOwnerOfAPrivateObjectGetsItsCreateAndDelete() async throws {
        let api = try RecordingServer(arguments: fastHashing + ["--live-query-classes", "Chat"])
        let user = try await api.signUp("username", "password")
        let socket = try await subscribed(api.server, ["className": "Chat", "where": [:]], sessionToken: user.token)
        let created = try await api.send("POST", "/classes/Chat", json: ["foo": "bar", "ACL": privateACL(user.id)], token: user.token)
        let id = try #require(created.json["objectId"]?.stringValue, "\(created.text)")
        let create = try await socket.next()
        #expect(create?["op"] == "create" && create?["requestId"] == 1, "\(create ?? .null)")
        #expect(create?["object"]?["objectId"] == .string(id) && create?["object"]?["foo"] == "bar")
        #expect(try await api.send("DELETE", "/classes/Chat/\(id)", token: user.token).status == 200)
        let delete = try await socket.next()
        #expect(delete?["op"] == "delete" && delete?["object"]?["objectId"] == .string(id), "\(delete ?? .null)")
        #expect(delete?["object"]?["foo"] == "bar")
        #expect(try await socket.drain().isEmpty)
    }

    // spec: ParseLiveQuery.spec.js: does shutdown liveQuery server
    /// Parse's `handleShutdown` closes the LiveQuery server, and the subscription hears `close`; Roost's SIGTERM closes
    /// every socket with 1001 ("server stopping"). (Whether the port is still open is not checked: another test's server
    /// may take it at once.)
    @Test func stoppingTheServerClosesTheSubscribersSocket() async throws {
        let server = try TestServer(arguments: ["--live-query-classes", "Yolo"])
        let socket = try await subscribed(server, ["className": "Yolo", "where": [:]])
        #expect(server.stop() == 0)
        #expect(try await socket.closeCode() == 1001)
    }
}
