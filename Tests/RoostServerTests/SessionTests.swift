import Foundation
import RoostCore
import RoostServer
import Testing

/// `_Session` end to end: bad and expired tokens, log-out, `/sessions/me`, `/sessions`, deleting sessions,
/// installations, and tokens kept only as hashes.
@Suite struct SessionTests {
    @Test func invalidTokenFailsEvenOnPublicData() async throws {
        let api = try RecordingServer()
        let id = try await api.server.create("Public", ["n": 1])
        let alice = try await api.signUp("alice", "pw-alice-bad-token")
        let bogus = "r:" + String(repeating: "a", count: 32)
        // A token that was valid once: the session is gone after log-out.
        let old = try await api.logIn("alice", "pw-alice-bad-token")
        #expect(try await api.send("POST", "/logout", token: old.token).status == 200)

        for token in [bogus, "garbage", old.token] {
            expectError(try await api.send("GET", "/classes/Public/\(id)", token: token), 209, "Invalid session token")
            expectError(try await api.send("GET", "/classes/Public", token: token), 209)
            expectError(try await api.send("POST", "/classes/Public", json: ["n": 2], token: token), 209)
            expectError(try await api.send("PUT", "/classes/Public/\(id)", json: ["n": 3], token: token), 209)
            expectError(try await api.send("DELETE", "/classes/Public/\(id)", token: token), 209)
            expectError(try await api.send("GET", "/users/me", token: token), 209)
            expectError(try await api.send("POST", "/logout", token: token), 209)
            expectError(try await api.send("GET", "/sessions/me", token: token), 209)
            expectError(try await api.send("POST", "/batch", json: ["requests": [["method": "GET", "path": "/parse/classes/Public"]]],
                                           token: token), 209)
            // Even signing up.
            expectError(try await api.send("POST", "/users", json: ["username": "zed", "password": "pw-zed"], token: token), 209)
        }
        // Nothing was written by the refused requests.
        #expect(try await api.server.fetch("Public", id)["n"] == 1)
        #expect(try await api.server.results("Public").count == 1)
        // POST /login ignores a session token (as Parse does), so a stale token never blocks logging in again.
        let fresh = try await api.send("POST", "/login", json: ["username": "alice", "password": "pw-alice-bad-token"], token: bogus)
        #expect(fresh.status == 200)
        #expect(try await api.me(alice.token).status == 200)
        api.expectNeverShown(["pw-alice-bad-token", "pw-zed"])
    }

    @Test func expiredTokenIsRefused() async throws {
        let api = try RecordingServer(arguments: fastHashing + ["--session-length", "1"])
        let id = try await api.server.create("Public", ["n": 1])
        let signedUp = ContinuousClock.now
        let alice = try await api.signUp("alice", "pw-alice-expiry")
        let first = try await api.me(alice.token)
        if ContinuousClock.now - signedUp < .milliseconds(700) {
            #expect(first.status == 200)
            let session = try await api.send("GET", "/sessions/me", token: alice.token)
            let expires = try #require(session.json["expiresAt"]?["iso"]?.stringValue)
            let created = try #require(session.json["createdAt"]?.stringValue)
            #expect(session.json["expiresAt"]?["__type"] == "Date")
            #expect(expires > created)
        }
        // Poll until the one-second session has expired.
        let deadline = ContinuousClock.now + .seconds(15)
        var expired: TestResponse?
        while ContinuousClock.now < deadline {
            let response = try await api.me(alice.token)
            if response.status != 200 {
                expired = response
                break
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        let refused = try #require(expired)
        expectError(refused, 209, "Session token is expired.")
        expectError(try await api.send("GET", "/classes/Public/\(id)", token: alice.token), 209)
        expectError(try await api.send("GET", "/classes/Public", token: alice.token), 209)
        expectError(try await api.send("POST", "/classes/Public", json: ["n": 2], token: alice.token), 209)
        #expect(try await api.server.results("Public").count == 1)
        // Logging in again gives a working session.
        let again = try await api.send("POST", "/login", json: ["username": "alice", "password": "pw-alice-expiry"], token: alice.token)
        #expect(again.status == 200)
        #expect(again.json["sessionToken"] != .string(alice.token))
        api.expectNeverShown(["pw-alice-expiry"])
    }

    @Test func logOutDeletesOnlyThatSession() async throws {
        let api = try RecordingServer()
        let alice = try await api.signUp("alice", "pw-alice-logout")
        let otherDevice = try await api.logIn("alice", "pw-alice-logout")

        let out = try await api.send("POST", "/logout", token: alice.token)
        #expect(out.status == 200)
        #expect(out.json == [:])
        expectError(try await api.me(alice.token), 209)
        expectError(try await api.send("POST", "/logout", token: alice.token), 209)
        #expect(try await api.me(otherDevice.token).status == 200)
        let sessions = try await api.send("GET", "/sessions", token: otherDevice.token)
        #expect(sessions.json["results"]?.arrayValue?.count == 1)
        // Without a token there is nothing to end.
        let anonymousOut = try await api.send("POST", "/logout")
        #expect(anonymousOut.status == 200)
        #expect(anonymousOut.json == [:])
        api.expectNeverShown(["pw-alice-logout"])
    }

    @Test func sessionsMeDescribesTheCurrentSession() async throws {
        let api = try RecordingServer()
        let before = ParseDate.now()
        let alice = try await api.signUp("alice", "pw-alice-sme", headers: ["X-Parse-Installation-Id": "install-1"])
        let session = try await api.send("GET", "/sessions/me", token: alice.token)
        #expect(session.status == 200)
        #expect(session.json["sessionToken"] == .string(alice.token))
        #expect(session.json["user"] == pointer("_User", alice.id))
        #expect(session.json["createdWith"] == ["action": "signup", "authProvider": "password"])
        #expect(session.json["installationId"] == "install-1")
        #expect(session.json["objectId"]?.stringValue?.count == 10)
        #expect(isParseISODate(session.json["createdAt"]?.stringValue))
        // A year from now, as a Date value.
        #expect(session.json["expiresAt"]?["__type"] == "Date")
        let expires = try #require(session.json["expiresAt"]?["iso"]?.stringValue)
        #expect(isParseISODate(expires))
        let expiresAt = try #require(ParseDate(iso: expires))
        let year: Int64 = 31_536_000_000
        #expect(expiresAt.millisecondsSince1970 >= before.millisecondsSince1970 + year)
        #expect(expiresAt.millisecondsSince1970 <= ParseDate.now().millisecondsSince1970 + year)

        let login = try await api.logIn("alice", "pw-alice-sme")
        let loginSession = try await api.send("GET", "/sessions/me", token: login.token)
        #expect(loginSession.json["createdWith"] == ["action": "login", "authProvider": "password"])
        #expect(loginSession.json["installationId"] == nil)
        #expect(loginSession.json["objectId"] != session.json["objectId"])

        expectError(try await api.send("GET", "/sessions/me"), 209)
        api.expectNeverShown(["pw-alice-sme"])
    }

    @Test func sessionsListsOnlyTheCallersOwn() async throws {
        let api = try RecordingServer()
        let alice = try await api.signUp("alice", "pw-alice-list")
        let aliceAgain = try await api.logIn("alice", "pw-alice-list")
        let bob = try await api.signUp("bob", "pw-bob-list")

        let aliceList = try await api.send("GET", "/sessions", token: aliceAgain.token)
        #expect(aliceList.status == 200)
        let results = try #require(aliceList.json["results"]?.arrayValue)
        #expect(results.count == 2)
        for session in results { #expect(session["user"] == pointer("_User", alice.id)) }
        let withToken = results.filter { $0["sessionToken"] != nil }
        #expect(withToken.count == 1)
        #expect(withToken.first?["sessionToken"] == .string(aliceAgain.token))
        // Neither list shows any token but the caller's current one.
        #expect(!aliceList.text.contains(alice.token))
        #expect(!aliceList.text.contains(bob.token))

        let bobList = try await api.send("GET", "/sessions", token: bob.token)
        #expect(bobList.json["results"]?.arrayValue?.count == 1)
        #expect(bobList.json["results"]?.arrayValue?.first?["user"] == pointer("_User", bob.id))
        #expect(bobList.json["results"]?.arrayValue?.first?["sessionToken"] == .string(bob.token))

        expectError(try await api.send("GET", "/sessions"), 209)
        api.expectNeverShown(["pw-alice-list", "pw-bob-list"])
    }

    /// Tokens are stored hashed, yet `where: {sessionToken: …}` finds a token's session (Cloud Code's way to check one),
    /// answered with the token it was found by; a user still finds only their own sessions.
    @Test func aSessionIsFoundByItsToken() async throws {
        let api = try RecordingServer()
        let alice = try await api.signUp("alice", "pw-alice-token")
        let bob = try await api.signUp("bob", "pw-bob-token")
        let byToken = { (token: String) in JSON.object(["sessionToken": .string(token)]).jsonText }
        let found = try await api.server.request("GET", "/classes/_Session", master: true, query: ["where": byToken(bob.token)])
        let sessions = try #require(found.json["results"]?.arrayValue, "\(found.text)")
        #expect(sessions.count == 1 && sessions.first?["user"] == pointer("_User", bob.id), "\(found.text)")
        #expect(sessions.first?["sessionToken"] == .string(bob.token))
        let withOthers = try await api.server.request("GET", "/sessions", master: true, query: [
            "where": #"{"sessionToken":"\#(alice.token)","createdWith.action":"signup"}"#, "count": "1"])
        #expect(withOthers.json["count"] == 1 && withOthers.json["results"]?.arrayValue?.first?["user"] == pointer("_User", alice.id),
                "\(withOthers.text)")
        let unknown = try await api.server.request("GET", "/sessions", master: true, query: ["where": byToken("r:" + String(repeating: "0", count: 32))])
        #expect(unknown.json["results"] == [], "\(unknown.text)")
        #expect(try await api.send("GET", "/sessions?where=\(byToken(bob.token).addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)",
                                   token: alice.token).json["results"] == [])
    }

    /// Guide, "Querying Sessions": "You can also add a where clause to your query, just like normal Parse objects."
    @Test func sessionsTakeParseQueries() async throws {
        let api = try RecordingServer()
        let alice = try await api.signUp("alice", "pw-alice-query", headers: ["X-Parse-Installation-Id": "install-a"])
        _ = try await api.logIn("alice", "pw-alice-query", headers: ["X-Parse-Installation-Id": "install-b"])
        _ = try await api.logIn("alice", "pw-alice-query")
        let bob = try await api.signUp("bob", "pw-bob-query", headers: ["X-Parse-Installation-Id": "install-a"])

        let byInstallation = try await api.send("GET", "/sessions", token: alice.token, query: ["where": #"{"installationId":"install-b"}"#])
        #expect(byInstallation.status == 200, "\(byInstallation.text)")
        #expect(byInstallation.json["results"]?.arrayValue?.count == 1)
        #expect(byInstallation.json["results"]?.arrayValue?.first?["installationId"] == "install-b")

        let logins = try await api.send("GET", "/sessions", token: alice.token,
                                        query: ["where": #"{"createdWith.action":"login"}"#, "count": "1", "limit": "0"])
        #expect(logins.json == ["results": [], "count": 2])

        let ordered = try await api.send("GET", "/sessions", token: alice.token, query: ["order": "-createdAt", "limit": "1", "keys": "installationId"])
        let newest = try #require(ordered.json["results"]?.arrayValue?.first)
        #expect(newest["installationId"] == nil)  // The last log-in had no installation.
        #expect(newest["user"] == nil)  // Not among the keys.

        // Another user's sessions stay out of reach, whatever the query says.
        let other = try await api.send("GET", "/sessions", token: alice.token, query: ["where": #"{"installationId":"install-a"}"#])
        #expect(other.json["results"]?.arrayValue?.map { $0["user"] } == [pointer("_User", alice.id)])
        let all = try await api.send("GET", "/sessions", master: true, query: ["where": #"{"installationId":"install-a"}"#, "count": "1"])
        #expect(all.json["count"] == 2)
        #expect(Set(all.json["results"]?.arrayValue?.compactMap { $0["user"]?["objectId"]?.stringValue } ?? []) == [alice.id, bob.id])

        // The same through the `_Session` class.
        let asClass = try await api.send("GET", "/classes/_Session", token: alice.token, query: ["count": "1", "limit": "0"])
        #expect(asClass.json == ["results": [], "count": 3])
        let sessionId = try #require(byInstallation.json["results"]?.arrayValue?.first?["objectId"]?.stringValue)
        #expect(try await api.send("GET", "/classes/_Session/\(sessionId)", token: alice.token).json["installationId"] == "install-b")
        expectError(try await api.send("GET", "/classes/_Session/\(sessionId)", token: bob.token), 101)

        let withUser = try await api.send("GET", "/sessions", token: alice.token, query: ["include": "user", "limit": "1"])
        #expect(withUser.json["results"]?.arrayValue?.first?["user"]?["username"] == "alice")
        expectError(try await api.send("GET", "/sessions", token: alice.token, query: ["bogus": "1"]), 102, "Invalid parameter for query: bogus")
        api.expectNeverShown(["pw-alice-query", "pw-bob-query"])
    }

    @Test func sessionsAreDeletedOnlyByTheirUser() async throws {
        let api = try RecordingServer()
        let alice = try await api.signUp("alice", "pw-alice-sdel")
        let aliceAgain = try await api.logIn("alice", "pw-alice-sdel")
        let bob = try await api.signUp("bob", "pw-bob-sdel")
        let bobSession = try #require(try await api.send("GET", "/sessions/me", token: bob.token).json["objectId"]?.stringValue)
        let aliceSecond = try #require(try await api.send("GET", "/sessions/me", token: aliceAgain.token).json["objectId"]?.stringValue)

        // Someone else's session is answered as missing, and is left alone.
        let missing = try await api.send("DELETE", "/sessions/abcdefghij", token: alice.token)
        expectError(missing, 101, "Object not found for delete.")
        let refused = try await api.send("DELETE", "/sessions/\(bobSession)", token: alice.token)
        expectError(refused, 101)
        #expect(refused.body == missing.body)
        expectError(try await api.send("GET", "/sessions/\(bobSession)", token: alice.token), 101)
        #expect(try await api.me(bob.token).status == 200)
        // Without any session.
        let noSession = try await api.send("DELETE", "/sessions/\(bobSession)")
        #expect(noSession.status >= 400)
        #expect(try await api.me(bob.token).status == 200)

        // One's own other session: it stops working at once.
        let own = try await api.send("GET", "/sessions/\(aliceSecond)", token: alice.token)
        #expect(own.status == 200)
        #expect(own.json["sessionToken"] == nil)  // Only the presented token is ever shown.
        let deleted = try await api.send("DELETE", "/sessions/\(aliceSecond)", token: alice.token)
        #expect(deleted.status == 200)
        #expect(deleted.json == [:])
        expectError(try await api.me(aliceAgain.token), 209)
        #expect(try await api.me(alice.token).status == 200)

        // The master key may end anyone's session.
        #expect(try await api.send("DELETE", "/sessions/\(bobSession)", master: true).status == 200)
        expectError(try await api.me(bob.token), 209)
        api.expectNeverShown(["pw-alice-sdel", "pw-bob-sdel"])
    }

    /// Parse: non-master `_Session` reads are limited to the caller's own; the master key sees all of them.
    @Test func masterKeyListsEverySession() async throws {
        let api = try RecordingServer()
        _ = try await api.signUp("alice", "pw-alice-msl")
        _ = try await api.signUp("bob", "pw-bob-msl")
        let all = try await api.send("GET", "/sessions", master: true)
        #expect(all.status == 200, "\(all.text)")
        #expect(all.json["results"]?.arrayValue?.count == 2)
        api.expectNeverShown(["pw-alice-msl", "pw-bob-msl"])
    }

    /// Parse deletes a user's older sessions from the same installation when they log in again there.
    @Test func loggingInAgainFromAnInstallationReplacesItsSession() async throws {
        let api = try RecordingServer()
        let phone = ["X-Parse-Installation-Id": "phone-1"]
        let alice = try await api.signUp("alice", "pw-alice-inst", headers: phone)
        let tablet = try await api.logIn("alice", "pw-alice-inst", headers: ["X-Parse-Installation-Id": "tablet-1"])
        let phoneAgain = try await api.logIn("alice", "pw-alice-inst", headers: phone)
        expectError(try await api.me(alice.token), 209)
        #expect(try await api.me(tablet.token).status == 200)
        #expect(try await api.me(phoneAgain.token).status == 200)
        let sessions = try await api.send("GET", "/sessions", token: phoneAgain.token)
        #expect(sessions.json["results"]?.arrayValue?.compactMap { $0["installationId"]?.stringValue }.sorted() == ["phone-1", "tablet-1"])
        api.expectNeverShown(["pw-alice-inst"])
    }

    /// Only a SHA-256 of each token is stored: a copy of the data directory yields no working token.
    @Test(.enabled(if: !TestServer.onPostgres, "reads the SQLite file in the data directory"))
    func tokensAreStoredOnlyAsHashes() async throws {
        let api = try RecordingServer()
        let alice = try await api.signUp("alice", "pw-alice-hash")
        let login = try await api.logIn("alice", "pw-alice-hash")
        let stored = try api.storedBytes()
        for token in [alice.token, login.token] {
            #expect(stored.range(of: Data(token.utf8)) == nil)
            #expect(stored.range(of: Data(token.dropFirst(2).utf8)) == nil)
            #expect(stored.range(of: Data(SessionToken.digest(token).utf8)) != nil)
        }
        api.expectNeverShown(["pw-alice-hash"])
    }

    @Test func tokensAreRandomAndWellFormed() async throws {
        let api = try RecordingServer()
        _ = try await api.signUp("alice", "pw-alice-many")
        var tokens: Set<String> = []
        for _ in 0..<20 {
            let account = try await api.logIn("alice", "pw-alice-many")
            #expect(isSessionToken(account.token))
            tokens.insert(account.token)
        }
        #expect(tokens.count == 20)
        let sessions = try await api.send("GET", "/sessions", token: tokens.first)
        #expect(sessions.json["results"]?.arrayValue?.count == 21)
        api.expectNeverShown(["pw-alice-many"])
    }
}
