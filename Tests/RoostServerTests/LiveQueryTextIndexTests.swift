import Foundation
import RoostCore
import Testing

/// LiveQuery over a text-indexed field (`TextIndex`). Timed (listed in TIMED_SUITES): the socket answers the
/// server's pings only while it waits for a message, and under the parallel phase's load the REST writes between
/// its reads can outlast a ping round.
@Suite struct LiveQueryTextIndexTests {
    let text = TextIndexTests()

    /// A LiveQuery subscription with `$text` on a text-indexed field matches each version of a changed object by
    /// itself (the index narrows table reads only): enter, update and leave arrive as without the index.
    @Test func aLiveQueryOnATextIndexedFieldStillMatches() async throws {
        let server = try TestServer()
        let id = try await server.create("Note", ["body": "plain toast"])
        #expect(text.names(try await text.search(server, "Note", "body", "bagel")) == [])
        // SQLite's index table, which the search made (on PostgreSQL a search makes none: declared text indexes only).
        if !TestServer.onPostgres { #expect(try text.indexTable(server, "Note", "body") != nil) }
        let socket = try LiveSocket(server)
        #expect(try await socket.connect()?["op"] == "connected")
        let subscribed = try await socket.subscribe(1, ["className": "Note", "where": ["body": ["$text": ["$search": ["$term": "bagel"]]]]])
        #expect(subscribed?["op"] == "subscribed", "\(subscribed ?? .null)")
        try await server.update("Note", id, ["body": "fresh bagels"])
        try await server.update("Note", id, ["body": "fresh bagels, warm"])
        try await server.update("Note", id, ["body": "toast again"])
        var ops: [JSON] = []
        for _ in 0..<3 { ops.append(try await socket.next()?["op"] ?? .null) }
        #expect(ops == ["enter", "update", "leave"])
    }
}
