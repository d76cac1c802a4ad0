import Foundation
import RoostCore
import Testing

/// Parse Server's spec/ParseSession.spec.js over REST.
@Suite struct ParseSessionSpecTests {
    /// Three users readable by everyone, as the spec's `setupTestUsers`; returns them in order.
    private func setUpTestUsers(_ api: RecordingServer) async throws -> [Account] {
        var users: [Account] = []
        for i in 1...3 { users.append(try await api.signUp("testuser_\(i)", "password", ["ACL": ["*": ["read": true]]])) }
        return users
    }

    // spec-differs: ParseSession.spec.js: should retain original sessionTokens with masterKey & sessionToken set -- tokens are stored hashed, so only the session of the token presented shows its sessionToken; the others have none (never a duplicate)
    // spec: ParseSession.spec.js: should retain original sessionTokens with just sessionToken set
    // spec: ParseSession.spec.js: token on users should retain original sessionTokens with masterKey & sessionToken set
    // spec: ParseSession.spec.js: token on users should retain original sessionTokens with just sessionToken set
    @Test func tokensInQueries() async throws {
        let api = try RecordingServer()
        let users = try await setUpTestUsers(api)
        let last = users[2]

        let withMaster = try await api.send("GET", "/sessions", token: last.token, master: true)
        let sessions = try #require(withMaster.json["results"]?.arrayValue)
        #expect(sessions.count == 3)
        #expect(sessions.compactMap { $0["sessionToken"]?.stringValue } == [last.token])

        let own = try await api.send("GET", "/sessions", token: last.token)
        #expect(own.json["results"]?.arrayValue?.map { $0["sessionToken"] } == [.string(last.token)])

        for master in [true, false] {
            let found = try await api.send("GET", "/users", token: last.token, master: master)
            let results = try #require(found.json["results"]?.arrayValue)
            #expect(results.count == 3)
            let tokens = results.compactMap { $0["sessionToken"]?.stringValue }
            #expect(Set(tokens).count == tokens.count)
            #expect(tokens.allSatisfy { $0 == last.token })
        }
    }

    // spec: ParseSession.spec.js: cannot edit session with known ID
    @Test func cannotEditAnotherUsersSession() async throws {
        let api = try RecordingServer()
        _ = try await setUpTestUsers(api)
        let all = try #require(try await api.send("GET", "/sessions", master: true, query: ["order": "createdAt"]).json["results"]?.arrayValue)
        let first = try #require(all.first), second = try #require(all.dropFirst().first)
        let firstUser = try #require(first["user"]?["objectId"]?.stringValue)
        let secondUser = try #require(second["user"]?["objectId"]?.stringValue)
        let firstId = try #require(first["objectId"]?.stringValue), secondId = try #require(second["objectId"]?.stringValue)
        // The second user's token, as the spec reads it from the master-key query.
        let secondToken = try await api.logIn("testuser_2", "password").token

        let refused = try await api.send("PUT", "/sessions/\(firstId)", json: ["foo": "bar", "user": pointer("_User", secondUser)],
                                         token: secondToken)
        expectError(refused, 101, "Object not found.")
        #expect(try await api.send("GET", "/sessions/\(firstId)", master: true).json["user"]?["objectId"] == .string(firstUser))
        #expect(try await api.send("GET", "/sessions/\(secondId)", master: true).json["user"]?["objectId"] == .string(secondUser))
    }

    /// Parse's `RestWrite.handleSession` refuses these changes of a session with a bare `Parse.Error(105)`:
    /// the body is `{"code":105}`, with no `error`.
    @Test func refusedSessionChangesHaveNoMessage() async throws {
        let api = try RecordingServer()
        let users = try await setUpTestUsers(api)
        let session = try #require(try await api.send("GET", "/sessions/me", token: users[0].token).json["objectId"]?.stringValue)
        for body: JSON in [["installationId": "other"], ["sessionToken": "r:mine"], ["user": pointer("_User", users[1].id)]] {
            let refused = try await api.send("PUT", "/sessions/\(session)", json: body, token: users[0].token)
            #expect(refused.status == 400)
            #expect(refused.text == #"{"code":105}"#, "\(body): \(refused.text)")
        }
    }
}
