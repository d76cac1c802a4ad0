import Foundation
import RoostCore
import RoostServer
import Testing

/// `/verifyPassword`, `/loginAs`, `/serverInfo`, `/purge/<C>` and `/jobs`, answered as Parse Server's
/// `UsersRouter`, `FeaturesRouter`, `PurgeRouter` and `FunctionsRouter` answer them.
@Suite struct AccountAndAdminRouteTests {
    @Test func verifyPasswordChecksCredentialsWithoutASession() async throws {
        let api = try RecordingServer()
        let alice = try await api.signUp("alice", "pw-alice-verify", ["email": "alice@example.com"])
        let sessionsBefore = try await api.send("GET", "/sessions", master: true).json["results"]?.arrayValue?.count

        let byURL = try await api.send("GET", "/verifyPassword", query: ["username": "alice", "password": "pw-alice-verify"])
        #expect(byURL.status == 200, "\(byURL.text)")
        #expect(byURL.json["objectId"]?.stringValue == alice.id)
        #expect(byURL.json["username"] == "alice")
        #expect(byURL.json["sessionToken"] == nil)
        let byBody = try await api.send("POST", "/verifyPassword", json: ["email": "alice@example.com", "password": "pw-alice-verify"])
        #expect(byBody.json["objectId"]?.stringValue == alice.id)

        expectError(try await api.send("GET", "/verifyPassword", query: ["username": "alice", "password": "wrong"]),
                    101, "Invalid username/password.")
        expectError(try await api.send("GET", "/verifyPassword", query: ["password": "pw-alice-verify"]), 200)
        expectError(try await api.send("GET", "/verifyPassword", query: ["username": "alice"]), 201)
        // No session was started.
        #expect(try await api.send("GET", "/sessions", master: true).json["results"]?.arrayValue?.count == sessionsBefore)
        api.expectNeverShown(["pw-alice-verify"])
    }

    @Test func logInAsStartsASessionForTheMasterKeyOnly() async throws {
        let api = try RecordingServer()
        let alice = try await api.signUp("alice", "pw-alice-loginas")
        let loggedIn = try await api.send("POST", "/loginAs", json: ["userId": .string(alice.id)], master: true)
        #expect(loggedIn.status == 200, "\(loggedIn.text)")
        #expect(loggedIn.json["username"] == "alice")
        let token = try #require(loggedIn.json["sessionToken"]?.stringValue)
        #expect(try await api.me(token).json["objectId"]?.stringValue == alice.id)
        let session = try await api.send("GET", "/sessions/me", token: token)
        #expect(session.json["createdWith"] == ["action": "login", "authProvider": "masterkey"])
        // The id may come in the URL too.
        #expect(try await api.send("POST", "/loginAs", master: true, query: ["userId": alice.id]).status == 200)

        expectError(try await api.send("POST", "/loginAs", json: ["userId": .string(alice.id)], token: alice.token),
                    119, "master key is required")
        expectError(try await api.send("POST", "/loginAs", json: [:], master: true), 162)
        expectError(try await api.send("POST", "/loginAs", json: ["userId": "nobodyHere"], master: true), 101, "user not found")
        api.expectNeverShown(["pw-alice-loginas"])
    }

    @Test func serverInfoDescribesWhatTheServerHas() async throws {
        let server = try TestServer()
        let info = try await server.request("GET", "/serverInfo", master: true)
        #expect(info.status == 200)
        #expect(info.json["parseServerVersion"]?.stringValue?.split(separator: ".").count == 3)
        #expect(info.json["features"]?["globalConfig"]?["read"] == true)
        #expect(info.json["features"]?["schemas"]?["clearAllDataFromClass"] == true)
        #expect(info.json["features"]?["push"]?["immediatePush"] == false)
        // `/hooks` works, so the dashboard may offer its webhooks screen; the keys are Parse's, all of them.
        #expect(info.json["features"]?["hooks"] == ["create": true, "read": true, "update": true, "delete": true])
        // `/scriptlog` and the (empty) jobs endpoints: Parse Dashboard shows its logs and jobs pages by these.
        #expect(info.json["features"]?["logs"] == ["level": true, "size": true, "order": true, "until": true, "from": true])
        #expect(info.json["features"]?["cloudCode"] == ["jobs": true])
        #expect(info.json["features"]?.objectValue?.keys.sorted()
                == ["cloudCode", "globalConfig", "hooks", "logs", "push", "schemas", "settings"])
        let refused = try await server.request("GET", "/serverInfo")
        #expect(refused.status == 403)
        #expect(refused.json == ["error": "unauthorized: master key is required"])
    }

    @Test func purgeEmptiesAClassAndKeepsItsSchema() async throws {
        let api = try RecordingServer()
        _ = try await api.server.createAll("Thing", [["n": 1], ["n": 2]])
        _ = try await api.server.create("Other", ["n": 3])
        let alice = try await api.signUp("alice", "pw-alice-purge")

        #expect(try await api.send("DELETE", "/purge/Thing").status == 403)
        #expect(try await api.server.results("Thing").count == 2)
        let purged = try await api.send("DELETE", "/purge/Thing", master: true)
        #expect(purged.status == 200)
        #expect(purged.json == [:])
        #expect(try await api.server.results("Thing").isEmpty)
        #expect(try await api.server.results("Other").count == 1)
        #expect(try await api.send("GET", "/schemas/Thing", master: true).json["fields"]?["n"] == ["type": "Number"])
        #expect(try await api.send("DELETE", "/purge/NeverWritten", master: true).status == 200)

        // Purging users ends their sessions and forgets their passwords.
        #expect(try await api.send("DELETE", "/purge/_User", master: true).status == 200)
        expectError(try await api.me(alice.token), 209)
        expectError(try await api.send("POST", "/login", json: ["username": "alice", "password": "pw-alice-purge"]), 101)
        #expect(try await api.signUp("alice", "pw-alice-purge-again").id != alice.id)
        api.expectNeverShown(["pw-alice-purge"])
    }

    @Test func jobsNeedTheMasterKeyAndAreUnknown() async throws {
        let server = try TestServer()
        let named = try await server.request("POST", "/jobs/cleanUp", json: [:], master: true)
        #expect(named.status == 400)
        #expect(named.json == ["code": 141, "error": "Invalid job."])
        #expect(try await server.request("POST", "/jobs", json: ["jobName": "cleanUp"], master: true).json["code"] == 141)
        #expect(try await server.request("POST", "/jobs/cleanUp", json: [:]).status == 403)
    }
}
