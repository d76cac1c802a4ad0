import Foundation
import RoostCore
import Testing

/// Parse Server's spec/ParseLiveQuery.spec.js over the wire: REST writes, and Parse's LiveQuery messages on a
/// WebSocket (`LiveSocket`) where the spec uses the JS SDK's subscription. The JS SDK subscribes with the current
/// user's session token; so do these tests. Cases about Cloud Code LiveQuery triggers (`beforeConnect`,
/// `beforeSubscribe`, `afterLiveQueryEvent`, `onLiveQueryEvent`) or server internals are not carried.
/// Timed (events within seconds, silence over half a second): listed in the Makefile's TIMED_SUITES.
@Suite struct ParseLiveQuerySpecTests {
    /// A connected socket with one subscription (request id 1) that Roost accepted.
    private func subscribed(_ server: TestServer, _ query: JSON, sessionToken: String? = nil) async throws -> LiveSocket {
        let socket = try LiveSocket(server)
        var connect: [String: JSON] = [:]
        if let sessionToken { connect["sessionToken"] = .string(sessionToken) }
        #expect(try await socket.connect(connect)?["op"] == "connected")
        let answer = try await socket.subscribe(1, query)
        try #require(answer?["op"] == "subscribed", "\(answer ?? .null)")
        return socket
    }

    // spec: ParseLiveQuery.spec.js: can subscribe to query
    @Test func anUpdateOfTheSubscribedObjectIsSent() async throws {
        let server = try TestServer()
        let id = try await server.create("TestObject", [:])
        let socket = try await subscribed(server, ["className": "TestObject", "where": ["objectId": .string(id)]])
        try await server.update("TestObject", id, ["foo": "bar"])
        let event = try await socket.next()
        #expect(event?["op"] == "update" && event?["requestId"] == 1)
        #expect(event?["object"]?["objectId"] == .string(id) && event?["object"]?["foo"] == "bar")
    }

    // spec: ParseLiveQuery.spec.js: can use patterns in className
    @Test func aClassNamePatternMakesMatchingClassesLive() async throws {
        let server = try TestServer(arguments: ["--live-query-classes", "Test.*"])
        let id = try await server.create("TestObject", [:])
        let socket = try await subscribed(server, ["className": "TestObject", "where": ["objectId": .string(id)]])
        try await server.update("TestObject", id, ["foo": "bar"])
        let event = try await socket.next()
        #expect(event?["op"] == "update" && event?["object"]?["foo"] == "bar", "\(event ?? .null)")
        // Anchored at both ends, as Parse's `new RegExp('^' + name + '$')`: a class that only contains a match is not live.
        for className in ["MyTestObject", "Other"] {
            let refused = try await socket.subscribe(2, ["className": .string(className), "where": [:]])
            #expect(refused?["op"] == "error" && refused?["code"] == 119, "\(className): \(refused ?? .null)")
        }
    }

    // spec: ParseLiveQuery.spec.js: liveQuery on Session class
    /// The JS SDK logs in from the installation it signed up from. Parse then deletes that installation's older session
    /// in the background, unknown to LiveQuery (whose cached auth keeps the subscriber going); Roost ends a subscription
    /// whose session is revoked (209), so here the log-in comes from a second installation, as from another device.
    @Test func aLogInSendsTheNewSessionToItsUsersSubscription() async throws {
        let api = try RecordingServer(arguments: fastHashing + ["--live-query-classes", "_Session"])
        let user = try await api.signUp("username", "password", headers: ["X-Parse-Installation-Id": "phone"])
        let socket = try await subscribed(api.server, ["className": "_Session", "where": [:]], sessionToken: user.token)
        let login = try await api.logIn("username", "password", headers: ["X-Parse-Installation-Id": "laptop"])
        let event = try await socket.next()
        let object = event?["object"]
        #expect(event?["op"] == "create", "\(event ?? .null)")
        #expect(object?["user"] == pointer("_User", user.id))
        #expect(object?["createdWith"] == ["action": "login", "authProvider": "password"])
        #expect(object?["expiresAt"]?["__type"] == "Date" && object?["expiresAt"]?["iso"]?.stringValue.flatMap(ParseDate.init(iso:)) != nil)
        #expect(object?["installationId"] == "laptop")
        for key in ["createdAt", "updatedAt"] { #expect(object?[key]?.stringValue.flatMap(ParseDate.init(iso:)) != nil, "\(key)") }
        // Tokens are stored hashed, and an event never carries one.
        #expect(object?["sessionToken"] == nil)
        #expect(!(event?.jsonText.contains(login.token) ?? true) && !(event?.jsonText.contains(user.token) ?? true))
    }

    // spec: ParseLiveQuery.spec.js: can handle live query with fields
    @Test func watchSendsOnlyChangesOfTheWatchedField() async throws {
        let server = try TestServer()
        let socket = try await subscribed(server, ["className": "Test", "where": [:], "watch": ["yolo"]])
        let first = try await server.create("Test", ["foo": "bar"])
        try await server.update("Test", first, ["foo": "xyz", "yolo": "xyz"])
        let second = try await server.create("Test", ["foo": "bar", "yolo": "bar"])
        try await server.update("Test", second, ["foo": "bart"])
        let events = [try await socket.next(), try await socket.next()].compactMap { $0 } + (try await socket.drain())
        #expect(events.map { [$0["op"] ?? .null, $0["object"]?["objectId"] ?? .null] } == [["update", .string(first)], ["create", .string(second)]])
    }

    // spec: ParseLiveQuery.spec.js: LiveQuery should work with changing role
    @Test func joiningARoleGrantsItsObjectsEvents() async throws {
        let api = try RecordingServer()
        let user = try await api.signUp("username", "password")
        let role = try await api.send("POST", "/roles", json: ["name": "Test", "ACL": privateACL(user.id)], token: user.token)
        let roleId = try #require(role.json["objectId"]?.stringValue, "\(role.text)")
        let socket = try await subscribed(api.server, ["className": "Chat", "where": [:]], sessionToken: user.token)
        let chat = try await api.server.create("Chat", ["foo": "bar", "ACL": ["role:Test": ["read": true]]], token: nil, master: true)
        #expect(try await socket.drain(quiet: 1).isEmpty, "not in the role yet: no create")
        let joined = try await api.send("PUT", "/roles/\(roleId)", json: ["users": [
            "__op": "AddRelation", "objects": [pointer("_User", user.id)]]], token: user.token)
        #expect(joined.status == 200, "\(joined.text)")
        try await api.server.update("Chat", chat, ["foo": "yolo"], master: true)
        let event = try await socket.next()
        #expect(event?["op"] == "update")
        #expect(event?["object"]?["foo"] == "yolo")
        #expect(event?["object"]?["ACL"] == ["role:Test": ["read": true]])
    }

    // spec: ParseLiveQuery.spec.js: prevent liveQuery on Session class when not logged in
    @Test func aSessionSubscriptionWithoutASessionIsRefused() async throws {
        let server = try TestServer()
        let socket = try LiveSocket(server)
        try await socket.connect()
        let answer = try await socket.subscribe(1, ["className": "_Session", "where": [:]])
        #expect(answer == ["op": "error", "code": 209, "error": "Invalid session token", "reconnect": false, "requestId": 1])
    }

    // spec: ParseLiveQuery.spec.js: handle invalid websocket payload length
    @Test func aBrokenFrameClosesTheSocketAndAReconnectedClientGetsEvents() async throws {
        let server = try TestServer()
        let id = try await server.create("TestObject", [:])
        let query: JSON = ["className": "TestObject", "where": ["objectId": .string(id)]]
        let broken = try await subscribed(server, query)
        // A masked ping whose length says 126 bytes: control frames carry at most 125 (RFC 6455 §5.5).
        try broken.connection.send(bytes: [0x89, 0xfe])
        #expect(try await broken.closeCode() == 1002)
        let socket = try await subscribed(server, query)
        try await server.update("TestObject", id, ["foo": "bar"])
        let event = try await socket.next()
        #expect(event?["op"] == "update" && event?["object"]?["foo"] == "bar")
    }

    // spec: ParseLiveQuery.spec.js: should execute live query update on email validation
    @Test func verifyingTheEmailSendsAnUpdate() async throws {
        let accounts = try AccountServer(["--verify-user-emails"])
        let user = try await accounts.api.signUp("zxcv", "asdf", ["email": "asdf@example.com"])
        let socket = try await subscribed(accounts.api.server, ["className": "_User", "where": ["objectId": .string(user.id)]],
                                          sessionToken: user.token)
        let link = try #require(try await accounts.sink.waitForMails(1).first?.link)
        #expect(try accounts.page(link).location?.contains("verify_email_success.html") == true)
        let event = try await socket.next()
        #expect(event?["op"] == "update" && event?["object"]?["emailVerified"] == true, "\(event ?? .null)")
    }

    // spec: ParseLiveQuery.spec.js: should not broadcast event to client with invalid session token - avisory GHSA-2xm2-xj2q-qgpj
    @Test func noEventsAfterTheSubscribersSessionIsLoggedOut() async throws {
        let api = try RecordingServer()
        let user = try await api.signUp("username", "password")
        let socket = try await subscribed(api.server, ["className": "TestObject", "where": [:]], sessionToken: user.token)
        let readable: JSON = ["ACL": [user.id: ["read": true]]]
        let first = try await api.server.create("TestObject", readable, token: user.token)
        let event = try await socket.next()
        #expect(event?["op"] == "create" && event?["object"]?["objectId"] == .string(first))
        #expect(try await api.send("POST", "/logout", token: user.token).status == 200)
        _ = try await api.server.create("TestObject", readable, token: nil)
        let after = try await socket.drain(quiet: 1)
        #expect(!after.contains { $0["op"] == "create" }, "\(after)")
    }

    // spec: ParseLiveQuery.spec.js: should strip out session token in LiveQuery
    @Test func userEventsNeverCarryASessionToken() async throws {
        let api = try RecordingServer()
        let socket = try await subscribed(api.server, ["className": "_User", "where": ["foo": "bar"]])
        let user = try await api.signUp("username", "password", ["foo": "bar", "ACL": ["*": ["read": true]]])
        let changes: [JSON] = [["foo": ["__op": "Delete"]], ["foo": "bar"], ["yolo": "bar"]]
        for change in changes {
            #expect(try await api.send("PUT", "/users/\(user.id)", json: change, token: user.token).status == 200)
        }
        #expect(try await api.send("DELETE", "/users/\(user.id)", token: user.token).status == 200)
        var events: [JSON] = []
        while events.count < 5, let event = try await socket.next() { events.append(event) }
        events += try await socket.drain()
        #expect(events.map { $0["op"] ?? .null } == ["create", "leave", "enter", "update", "delete"])
        for event in events {
            #expect(event["object"]?["sessionToken"] == nil && event["original"]?["sessionToken"] == nil, "\(event)")
        }
    }

    // spec: ParseLiveQuery.spec.js: should strip out protected fields
    @Test func protectedFieldsAreLeftOutOfObjectAndOriginal() async throws {
        let server = try TestServer()
        let id = try await server.create("Test", ["foo": "foo", "bar": "bar", "qux": "qux"])
        let permissions: JSON = ["get": ["*": true], "find": ["*": true], "update": ["*": true], "protectedFields": ["*": ["foo"]]]
        let schema = try await server.request("PUT", "/schemas/Test", json: ["classLevelPermissions": permissions], master: true)
        #expect(schema.status == 200, "\(schema.text)")
        let fetched = try await server.fetch("Test", id)
        #expect(fetched["foo"] == nil && fetched["bar"] == "bar" && fetched["qux"] == "qux")
        let socket = try await subscribed(server, ["className": "Test", "where": [:]])
        try await server.update("Test", id, ["foo": "abc"])
        let event = try await socket.next()
        #expect(event?["op"] == "update")
        for version in [event?["object"], event?["original"]] {
            #expect(version?["foo"] == nil && version?["bar"] == "bar" && version?["qux"] == "qux", "\(event ?? .null)")
        }
    }

    // spec: ParseLiveQuery.spec.js: can subscribe to query and return object with withinKilometers with last parameter on update
    @Test func aCenterSphereSubscriptionGetsTheUpdate() async throws {
        let server = try TestServer()
        let id = try await server.create("TestObject", ["location": geoPoint(40, -30)])
        // The JS SDK's `withinKilometers(key, point, 2, false)`: 2 km in radians of the Earth's radius.
        let socket = try await subscribed(server, ["className": "TestObject", "where": [
            "location": ["$geoWithin": ["$centerSphere": [[-30, 40], .number(2 / 6371.0)]]]]])
        try await server.update("TestObject", id, ["location": geoPoint(40, -30)])
        let event = try await socket.next()
        #expect(event?["op"] == "update" && event?["object"]?["objectId"] == .string(id))
    }

    // spec: ParseLiveQuery.spec.js: triggers query event with constraint not equal to null
    @Test func notEqualToNullMatchesACreateThatSetsTheField() async throws {
        let server = try TestServer()
        let socket = try await subscribed(server, ["className": "TestObject", "where": ["foo": ["$ne": nil]]])
        _ = try await server.create("TestObject", ["foo": "bar"])
        let events = [try await socket.next()].compactMap { $0 } + (try await socket.drain(quiet: 1))
        #expect(events.count == 1 && events.first?["op"] == "create" && events.first?["object"]?["foo"] == "bar", "\(events)")
    }
}
