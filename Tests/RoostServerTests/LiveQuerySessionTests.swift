import Foundation
import RoostCore
import Testing

/// `_Session` over LiveQuery: every session write (sign-up, log-in, `POST /sessions`, `upgradeToRevocableSession`,
/// `PUT /sessions/<id>`, log-out, a password change, a deleted user) is an event like an object write: after the commit,
/// in commit order, with a `seq` a resume replays. Only the session's user (or the master key) gets it, never a token.
/// Timed (events within seconds, silence over half a second): listed in the Makefile's TIMED_SUITES.
@Suite
struct LiveQuerySessionTests {
    private static let sessions: JSON = ["className": "_Session", "where": [:]]

    /// A socket connected with `fields` (a session token, the master key), subscribed to `query` as request 1.
    private func subscribed(_ server: TestServer, _ query: JSON = sessions, connect fields: [String: JSON] = [:],
                            since: Int64? = nil) async throws -> (socket: LiveSocket, answer: JSON) {
        let socket = try LiveSocket(server)
        #expect(try await socket.connect(fields)?["op"] == "connected")
        var message: [String: JSON] = ["op": "subscribe", "requestId": 1, "query": query]
        if let since { message["since"] = .number(Double(since)) }
        try socket.send(.object(message))
        let answer = try #require(try await socket.next())
        try #require(answer["op"] == "subscribed", "\(answer)")
        return (socket, answer)
    }

    /// The next `count` messages (failing when fewer come), then any more within half a second.
    private func events(_ count: Int, from socket: LiveSocket) async throws -> [JSON] {
        var events: [JSON] = []
        while events.count < count, let event = try await socket.next() { events.append(event) }
        return events + (try await socket.drain())
    }

    private func sessionId(_ api: RecordingServer, token: String) async throws -> String {
        let me = try await api.send("GET", "/sessions/me", token: token)
        return try #require(me.json["objectId"]?.stringValue, "\(me.text)")
    }

    @Test func everySessionWriteOfTheUserIsAnEventAndOthersSeeNone() async throws {
        let api = try RecordingServer()
        let ann = try await api.signUp("ann", "pw-ann", headers: ["X-Parse-Installation-Id": "phone"])
        let bob = try await api.signUp("bob", "pw-bob")
        let annSocket = try await subscribed(api.server, connect: ["sessionToken": .string(ann.token)]).socket
        // Bob asks for Ann's sessions: the server answers his own instead (none change here).
        let bobSocket = try await subscribed(api.server, ["className": "_Session", "where": ["user": pointer("_User", ann.id)]],
                                             connect: ["sessionToken": .string(bob.token)]).socket

        let laptop = try await api.logIn("ann", "pw-ann", headers: ["X-Parse-Installation-Id": "laptop"])
        let laptopId = try await sessionId(api, token: laptop.token)
        let created = try await api.send("POST", "/sessions", json: ["device": "tv"], token: ann.token)
        #expect(created.status == 201, "\(created.text)")
        let tvId = try #require(created.json["objectId"]?.stringValue)
        let tvToken = try #require(created.json["sessionToken"]?.stringValue)
        #expect(try await api.send("PUT", "/sessions/\(tvId)", json: ["device": "tv 2"], token: ann.token).status == 200)
        let upgraded = try await api.send("POST", "/upgradeToRevocableSession", token: ann.token)
        let upgradedToken = try #require(upgraded.json["sessionToken"]?.stringValue, "\(upgraded.text)")
        #expect(try await api.send("POST", "/logout", token: laptop.token).status == 200)

        let events = try await events(5, from: annSocket)
        #expect(events.map { $0["op"] ?? .null } == ["create", "create", "update", "create", "delete"], "\(events)")
        guard events.count == 5 else { return }
        #expect(events[0]["object"]?["objectId"] == .string(laptopId))
        #expect(events[0]["object"]?["createdWith"] == ["action": "login", "authProvider": "password"])
        #expect(events[0]["object"]?["installationId"] == "laptop" && events[0]["object"]?["className"] == "_Session")
        #expect(events[1]["object"]?["objectId"] == .string(tvId) && events[1]["object"]?["device"] == "tv")
        #expect(events[1]["object"]?["createdWith"] == ["action": "create"])
        #expect(events[2]["object"]?["device"] == "tv 2" && events[2]["original"]?["device"] == "tv")
        #expect(events[3]["object"]?["createdWith"] == ["action": "upgrade"])
        #expect(events[4]["object"]?["objectId"] == .string(laptopId))
        for event in events { #expect(event["object"]?["user"] == pointer("_User", ann.id)) }
        let seqs = events.compactMap { $0["seq"]?.numberValue }
        #expect(seqs.count == 5 && seqs == seqs.sorted() && Set(seqs).count == 5, "one change each, in commit order: \(seqs)")
        // Tokens are stored hashed; no event carries one, not even the subscriber's own.
        for token in [ann.token, laptop.token, tvToken, upgradedToken] {
            #expect(!events.contains { $0.jsonText.contains(token) })
        }
        #expect(!events.contains { $0["object"]?["sessionToken"] != nil || $0["original"]?["sessionToken"] != nil })
        #expect(try await bobSocket.drain(quiet: 1).isEmpty, "Ann's sessions are not Bob's to see")

        // `query` answers with her current sessions as events show them: no token, hers only.
        try annSocket.send(["op": "query", "requestId": 1])
        let result = try #require(try await annSocket.next())
        let ids = Set((result["results"]?.arrayValue ?? []).compactMap { $0["objectId"]?.stringValue })
        #expect(result["op"] == "result" && ids.count == 3 && ids.contains(tvId) && !ids.contains(laptopId), "\(result)")
        #expect(result["results"]?.arrayValue?.allSatisfy { $0["user"] == pointer("_User", ann.id) && $0["sessionToken"] == nil } == true)
        for token in [ann.token, tvToken, upgradedToken] { #expect(!result.jsonText.contains(token)) }
    }

    /// A password change revokes all the user's sessions and starts one (as the REST answer's token): deletes, then the
    /// create, one transaction's changes in order; the user's deletion takes the last one with it.
    @Test func aPasswordChangeAndAUserDeletionSendTheirSessionsDeletes() async throws {
        let api = try RecordingServer()
        let ann = try await api.signUp("ann", "pw-ann", headers: ["X-Parse-Installation-Id": "phone"])
        let laptop = try await api.logIn("ann", "pw-ann", headers: ["X-Parse-Installation-Id": "laptop"])
        let phoneId = try await sessionId(api, token: ann.token), laptopId = try await sessionId(api, token: laptop.token)
        let master = try await subscribed(api.server, connect: ["masterKey": .string(TestServer.masterKey)]).socket

        let changed = try await api.send("PUT", "/users/\(ann.id)", json: ["password": "pw-ann-2"], token: ann.token)
        let newToken = try #require(changed.json["sessionToken"]?.stringValue, "\(changed.text)")
        let newId = try await sessionId(api, token: newToken)
        #expect(try await api.send("DELETE", "/users/\(ann.id)", token: newToken).status == 200)

        let events = try await events(4, from: master)
        let summary = events.map { [$0["op"] ?? .null, $0["object"]?["objectId"] ?? .null] }
        #expect(summary.count == 4, "\(events)")
        #expect(Set(summary.prefix(2)) == [["delete", .string(phoneId)], ["delete", .string(laptopId)]], "\(summary)")
        #expect(summary.suffix(2) == [["create", .string(newId)], ["delete", .string(newId)]], "\(summary)")
        let seqs = events.compactMap { $0["seq"]?.numberValue }
        #expect(seqs == seqs.sorted() && Set(seqs).count == 4, "\(seqs)")
    }

    /// A password reset through the mailed link revokes every session of the user (Parse's default
    /// `revokeSessionOnPasswordReset`): one delete each, in the reset's transaction.
    @Test func aPasswordResetSendsTheDeleteOfEverySession() async throws {
        let accounts = try AccountServer()
        let api = accounts.api
        let ann = try await api.signUp("ann", "pw-ann", ["email": "ann@example.com"], headers: ["X-Parse-Installation-Id": "phone"])
        let laptop = try await api.logIn("ann", "pw-ann", headers: ["X-Parse-Installation-Id": "laptop"])
        let ids: Set<JSON> = [.string(try await sessionId(api, token: ann.token)), .string(try await sessionId(api, token: laptop.token))]
        let master = try await subscribed(api.server, connect: ["masterKey": .string(TestServer.masterKey)]).socket

        _ = try await api.send("POST", "/requestPasswordReset", json: ["email": "ann@example.com"])
        let resetToken = try #require(token(in: try await accounts.sink.waitForMails(1).first?.link))
        let reset = try accounts.page("/parse/apps/\(TestServer.applicationId)/request_password_reset",
                                      form: [("new_password", "pw-ann-2"), ("token", resetToken), ("username", "ann")])
        #expect(reset.status == 302, "\(reset.body)")

        let events = try await events(2, from: master)
        #expect(events.map { $0["op"] ?? .null } == ["delete", "delete"], "\(events)")
        #expect(Set(events.map { $0["object"]?["objectId"] ?? .null }) == ids)
    }

    /// Session changes are in the change log: a client that was away gets them on resume, in order, and the same
    /// rule as live (its own sessions only).
    @Test func aResumeReplaysTheSessionChangesItMissed() async throws {
        let api = try RecordingServer()
        let ann = try await api.signUp("ann", "pw-ann", headers: ["X-Parse-Installation-Id": "phone"])
        let first = try await subscribed(api.server, connect: ["sessionToken": .string(ann.token)])
        let seen = try #require(first.answer["seq"]?.numberValue)
        withExtendedLifetime(first.socket) {}  // Gone from here: its socket closes.

        let laptop = try await api.logIn("ann", "pw-ann", headers: ["X-Parse-Installation-Id": "laptop"])
        let laptopId = try await sessionId(api, token: laptop.token)
        _ = try await api.signUp("bob", "pw-bob")  // Bob's session: not Ann's to replay.
        #expect(try await api.send("POST", "/logout", token: laptop.token).status == 200)

        let resumed = try await subscribed(api.server, connect: ["sessionToken": .string(ann.token)], since: Int64(seen))
        #expect(resumed.answer["resumed"] == true, "\(resumed.answer)")
        let replayed = try await resumed.socket.drain()
        #expect(replayed.map { [$0["op"] ?? .null, $0["object"]?["objectId"] ?? .null] }
                == [["create", .string(laptopId)], ["delete", .string(laptopId)]], "\(replayed)")
        #expect(!replayed.contains { $0.jsonText.contains(laptop.token) })
    }

    /// Sessions not in `--live-query-classes` are neither sent nor logged: subscribing is refused (119), and after a
    /// restart with all classes live, a resume from before says it cannot replay them (`resumed: false`).
    @Test func sessionsLeftOutOfTheLiveClassesCannotBeResumedLater() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("roost-live-sessions-\(UUID().uuidString)")
        let all = try RecordingServer(dataDirectory: directory)
        let ann = try await all.signUp("ann", "pw-ann")
        let before = try #require(try await subscribed(all.server, connect: ["sessionToken": .string(ann.token)]).answer["seq"]?.numberValue)
        _ = all.server.stop()

        let notes = try RecordingServer(arguments: fastHashing + ["--live-query-classes", "Note"], dataDirectory: directory)
        let socket = try LiveSocket(notes.server)
        try await socket.connect(["sessionToken": .string(ann.token)])
        #expect(try await socket.subscribe(1, Self.sessions)?["code"] == 119)
        _ = try await notes.logIn("ann", "pw-ann")  // Not logged: sessions are not live.
        _ = notes.server.stop()

        let again = try RecordingServer(dataDirectory: directory)
        let resumed = try await subscribed(again.server, connect: ["sessionToken": .string(ann.token)], since: Int64(before))
        #expect(resumed.answer["resumed"] == false, "\(resumed.answer)")
        withExtendedLifetime([all, notes]) {}  // Each server's deinit removes the data directory.
    }
}
