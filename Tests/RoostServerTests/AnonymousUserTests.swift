import Foundation
import RoostCore
import Testing

/// Anonymous users (`authData.anonymous`) and their conversion to registered accounts, as the Parse
/// SDKs do it: the anonymous session sends `PUT /users/<id>` with a username, a password and
/// `"authData": {"anonymous": null}`.
@Suite struct AnonymousUserTests {
    @Test func anonymousSignUpThenLogInToTheSameUser() async throws {
        let api = try RecordingServer()
        let anonymousId = newAnonymousId()
        let created = try await api.anonymous(anonymousId)
        #expect(created.status == 201)
        #expect(created.json.objectValue?.keys.sorted() == ["createdAt", "objectId", "sessionToken", "username"])
        let id = try #require(created.json["objectId"]?.stringValue)
        let username = try #require(created.json["username"]?.stringValue)
        #expect(username.range(of: #"^[A-Za-z0-9]{25}$"#, options: .regularExpression) != nil)
        #expect(isParseISODate(created.json["createdAt"]?.stringValue))
        let firstToken = try #require(created.json["sessionToken"]?.stringValue)
        #expect(isSessionToken(firstToken))
        #expect(created.headers["location"] == "http://127.0.0.1:\(api.server.port)/parse/users/\(id)")

        let me = try await api.me(firstToken)
        #expect(me.json["objectId"] == .string(id))
        #expect(me.json["username"] == .string(username))
        #expect(me.json["authData"] == ["anonymous": ["id": .string(anonymousId)]])
        #expect(me.json["ACL"] == .object([id: ["read": true, "write": true]]))
        let session = try await api.send("GET", "/sessions/me", token: firstToken)
        #expect(session.json["createdWith"] == ["action": "login", "authProvider": "anonymous"])

        // The same id again logs in to the same user: 200, the whole user, a new token.
        let again = try await api.anonymous(anonymousId)
        #expect(again.status == 200)
        #expect(again.json["objectId"] == .string(id))
        #expect(again.json["username"] == .string(username))
        #expect(again.json["authData"] == ["anonymous": ["id": .string(anonymousId)]])
        #expect(again.json["createdAt"] == created.json["createdAt"])
        let secondToken = try #require(again.json["sessionToken"]?.stringValue)
        #expect(isSessionToken(secondToken))
        #expect(secondToken != firstToken)
        #expect(again.headers["location"] == "http://127.0.0.1:\(api.server.port)/parse/users/\(id)")
        #expect(try await api.me(secondToken).json["objectId"] == .string(id))
        #expect(try await api.me(firstToken).status == 200)
        let againSession = try await api.send("GET", "/sessions/me", token: secondToken)
        #expect(againSession.json["createdWith"] == ["action": "login", "authProvider": "anonymous"])

        // Another id is another user.
        let other = try await api.anonymous(newAnonymousId())
        #expect(other.status == 201)
        #expect(other.json["objectId"] != .string(id))
        #expect(other.json["username"] != .string(username))
        let users = try await api.send("GET", "/users", master: true, query: ["count": "1", "limit": "0"])
        #expect(users.json["count"] == 2)
    }

    /// Parse's `handleAuthData`: one anonymous id belongs to one user.
    @Test func anAnonymousIdCannotBeLinkedToASecondUser() async throws {
        let api = try RecordingServer()
        let anonymousId = newAnonymousId()
        let first = try #require(try await api.anonymous(anonymousId).json["objectId"]?.stringValue)
        let other = try await api.signUp("other", "pw-other-link")
        let linked = try await api.send("PUT", "/users/\(other.id)", json: ["authData": ["anonymous": ["id": .string(anonymousId)]]],
                                        token: other.token)
        expectError(linked, 208, "this auth is already used")
        // Logging in with the id still reaches the first user only.
        #expect(try await api.anonymous(anonymousId).json["objectId"]?.stringValue == first)
        api.expectNeverShown(["pw-other-link"])
    }

    @Test func anonymousUsersHaveNoPasswordToLogInWith() async throws {
        let api = try RecordingServer()
        let created = try await api.anonymous(newAnonymousId())
        let username = try #require(created.json["username"]?.stringValue)
        expectError(try await api.send("POST", "/login", json: ["username": .string(username), "password": "anything"]), 101,
                    "Invalid username/password.")
        // Others cannot read it (owner-only ACL), nor see its auth data.
        let bob = try await api.signUp("bob", "pw-bob-anon")
        let id = try #require(created.json["objectId"]?.stringValue)
        expectError(try await api.send("GET", "/users/\(id)", token: bob.token), 101)
        let found = try await api.send("GET", "/users", token: bob.token, query: ["where": #"{"authData.anonymous.id":{"$exists":true}}"#])
        #expect(found.json["results"]?.arrayValue?.isEmpty ?? true)
    }

    /// The flow of issue 4: objects owned by the anonymous user stay its own after conversion.
    @Test func conversionKeepsTheAccountAndItsObjects() async throws {
        let api = try RecordingServer()
        let anonymousId = newAnonymousId()
        let created = try await api.anonymous(anonymousId)
        let id = try #require(created.json["objectId"]?.stringValue)
        let anonymousToken = try #require(created.json["sessionToken"]?.stringValue)
        let otherDevice = try #require(try await api.anonymous(anonymousId).json["sessionToken"]?.stringValue)
        let bob = try await api.signUp("bob", "pw-bob-convert")

        let ownerOnly: JSON = .object(["ACL": .object([id: ["read": true, "write": true]])])
        var noteIds: [String] = []
        for n in 0..<3 {
            var body = ownerOnly.objectValue!
            body["n"] = .number(Double(n))
            body["author"] = pointer("_User", id)
            let response = try await api.send("POST", "/classes/Note", json: .object(body), token: anonymousToken)
            #expect(response.status == 201)
            noteIds.append(try #require(response.json["objectId"]?.stringValue))
        }
        #expect(try await api.send("GET", "/classes/Note", token: anonymousToken).json["results"]?.arrayValue?.count == 3)

        let converted = try await api.send("PUT", "/users/\(id)", json: [
            "username": "carol", "password": "pw-carol-convert", "email": "carol@example.com", "authData": ["anonymous": nil],
        ], token: anonymousToken)
        #expect(converted.status == 200)
        #expect(isParseISODate(converted.json["updatedAt"]?.stringValue))
        let newToken = try #require(converted.json["sessionToken"]?.stringValue)
        #expect(isSessionToken(newToken))
        #expect(newToken != anonymousToken)
        // As Parse's `createSessionToken`: a log-in with the provider the body's authData names.
        let converting = try await api.send("GET", "/sessions/me", token: newToken)
        #expect(converting.json["createdWith"] == ["action": "login", "authProvider": "anonymous"])

        // Old sessions are gone; the new one is the same user, no longer anonymous.
        expectError(try await api.me(anonymousToken), 209)
        expectError(try await api.me(otherDevice), 209)
        let me = try await api.me(newToken)
        #expect(me.json["objectId"] == .string(id))
        #expect(me.json["username"] == "carol")
        #expect(me.json["email"] == "carol@example.com")
        #expect(me.json["createdAt"] == created.json["createdAt"])
        #expect(me.json["authData"]?["anonymous"] == nil)
        let stored = try await api.send("GET", "/users/\(id)", master: true)
        #expect(stored.json["authData"]?["anonymous"] == nil)

        // Its objects are still its own: readable and writable with the new token, hidden from others.
        let mine = try await api.send("GET", "/classes/Note", token: newToken, query: ["count": "1"])
        #expect(mine.json["count"] == 3)
        #expect(Set(mine.json["results"]?.arrayValue?.compactMap { $0["objectId"]?.stringValue } ?? []) == Set(noteIds))
        #expect(try await api.send("GET", "/classes/Note/\(noteIds[0])", token: newToken).status == 200)
        let updated = try await api.send("PUT", "/classes/Note/\(noteIds[0])", json: ["n": 10], token: newToken)
        #expect(updated.status == 200)
        #expect(try await api.send("DELETE", "/classes/Note/\(noteIds[1])", token: newToken).status == 200)
        expectError(try await api.send("GET", "/classes/Note/\(noteIds[2])", token: bob.token), 101)
        expectError(try await api.send("GET", "/classes/Note/\(noteIds[2])", token: anonymousToken), 209)
        #expect(try await api.send("GET", "/classes/Note", token: bob.token).json["results"] == [])
        // Pointers to the user still point at it.
        let note = try await api.send("GET", "/classes/Note/\(noteIds[0])", token: newToken)
        #expect(note.json["author"] == pointer("_User", id))
        #expect(note.json["n"] == 10)

        // The account now logs in with its password, and the anonymous id no longer leads to it.
        #expect(try await api.logIn("carol", "pw-carol-convert").id == id)
        let sameAnonymousId = try await api.anonymous(anonymousId)
        #expect(sameAnonymousId.status == 201)
        #expect(sameAnonymousId.json["objectId"] != .string(id))
        api.expectNeverShown(["pw-carol-convert", "pw-bob-convert"])
    }

    /// Parallel conversions of one anonymous user: the first to commit wins; the others find their
    /// session revoked (209) inside the write and change nothing (before, all succeeded, the last
    /// renaming the account and revoking the winner's new session).
    @Test func parallelConversionsHaveOneWinner() async throws {
        let api = try RecordingServer()
        let created = try await api.anonymous(newAnonymousId())
        let id = try #require(created.json["objectId"]?.stringValue)
        let token = try #require(created.json["sessionToken"]?.stringValue)
        let attempts = 6
        let replies = try await withThrowingTaskGroup(of: (Int, TestResponse).self) { group in
            for index in 0..<attempts {
                group.addTask {
                    (index, try await api.send("PUT", "/users/\(id)", json: [
                        "username": .string("racer\(index)"), "password": .string("pw-racer-\(index)"), "authData": ["anonymous": nil],
                    ], token: token))
                }
            }
            return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
        }
        let winners = replies.filter { $0.value.status == 200 }
        #expect(winners.count == 1, "\(replies.values.map(\.text))")
        for (_, reply) in replies where reply.status != 200 {
            #expect([209, 202].contains(reply.code), "\(reply.status) \(reply.text)")
            #expect(reply.status == 400)
        }
        let (winner, reply) = try #require(winners.first)
        let newToken = try #require(reply.json["sessionToken"]?.stringValue)
        let me = try await api.me(newToken)
        #expect(me.status == 200)
        #expect(me.json["username"] == .string("racer\(winner)"))
        #expect(try await api.logIn("racer\(winner)", "pw-racer-\(winner)").id == id)
    }

    @Test func conversionToATakenUsernameChangesNothing() async throws {
        let api = try RecordingServer()
        _ = try await api.signUp("Dave", "pw-dave-taken", ["email": "dave@example.com"])
        let anonymousId = newAnonymousId()
        let created = try await api.anonymous(anonymousId)
        let id = try #require(created.json["objectId"]?.stringValue)
        let token = try #require(created.json["sessionToken"]?.stringValue)
        let before = try await api.me(token)

        let takenName = try await api.send("PUT", "/users/\(id)", json: [
            "username": "dave", "password": "pw-would-be", "authData": ["anonymous": nil],
        ], token: token)
        expectError(takenName, 202, "Account already exists for this username.")
        let takenEmail = try await api.send("PUT", "/users/\(id)", json: [
            "username": "erin", "password": "pw-would-be", "email": "DAVE@example.com", "authData": ["anonymous": nil],
        ], token: token)
        expectError(takenEmail, 203, "Account already exists for this email address.")

        // Still anonymous, same session, same fields; the password was not set.
        let after = try await api.me(token)
        #expect(after.status == 200)
        #expect(after.json == before.json)
        #expect(after.json["authData"] == ["anonymous": ["id": .string(anonymousId)]])
        expectError(try await api.send("POST", "/login", json: ["username": "erin", "password": "pw-would-be"]), 101)
        let again = try await api.anonymous(anonymousId)
        #expect(again.status == 200)
        #expect(again.json["objectId"] == .string(id))
        api.expectNeverShown(["pw-dave-taken", "pw-would-be"])
    }

    @Test func conversionNeedsTheUsersOwnSession() async throws {
        let api = try RecordingServer()
        let created = try await api.anonymous(newAnonymousId())
        let id = try #require(created.json["objectId"]?.stringValue)
        let token = try #require(created.json["sessionToken"]?.stringValue)
        let bob = try await api.signUp("bob", "pw-bob-own")
        let body: JSON = ["username": "frank", "password": "pw-frank", "authData": ["anonymous": nil]]
        expectError(try await api.send("PUT", "/users/\(id)", json: body), 206)
        expectError(try await api.send("PUT", "/users/\(id)", json: body, token: bob.token), 206)
        #expect(try await api.me(token).json["authData"]?["anonymous"] != nil)
        #expect(try await api.me(bob.token).json["username"] == "bob")
        api.expectNeverShown(["pw-bob-own", "pw-frank"])
    }

    /// Without `authData: {anonymous: null}` the account keeps its anonymous link, as in Parse.
    @Test func settingAUsernameAloneKeepsTheAnonymousLink() async throws {
        let api = try RecordingServer()
        let anonymousId = newAnonymousId()
        let created = try await api.anonymous(anonymousId)
        let id = try #require(created.json["objectId"]?.stringValue)
        let token = try #require(created.json["sessionToken"]?.stringValue)
        let renamed = try await api.send("PUT", "/users/\(id)", json: ["username": "gina", "password": "pw-gina"], token: token)
        #expect(renamed.status == 200)
        let newToken = try #require(renamed.json["sessionToken"]?.stringValue)
        let session = try await api.send("GET", "/sessions/me", token: newToken)
        #expect(session.json["createdWith"] == ["action": "signup", "authProvider": "password"])  // No authData sent.
        let me = try await api.me(newToken)
        #expect(me.json["username"] == "gina")
        #expect(me.json["authData"] == ["anonymous": ["id": .string(anonymousId)]])
        #expect(try await api.logIn("gina", "pw-gina").id == id)
        api.expectNeverShown(["pw-gina"])
    }

    /// Roost (issue 4): a sign-up with a username and password from an anonymous user's session converts
    /// that user instead of creating another.
    @Test func signUpFromAnAnonymousSessionConvertsThatUser() async throws {
        let api = try RecordingServer()
        let anonymousId = newAnonymousId()
        let created = try await api.anonymous(anonymousId)
        let id = try #require(created.json["objectId"]?.stringValue)
        let token = try #require(created.json["sessionToken"]?.stringValue)
        let noteId = try #require(try await api.send("POST", "/classes/Note", json: [
            "ACL": .object([id: ["read": true, "write": true]]),
        ], token: token).json["objectId"]?.stringValue)

        let signUp = try await api.send("POST", "/users", json: ["username": "hank", "password": "pw-hank-signup"], token: token)
        #expect(signUp.status == 201)
        #expect(signUp.json["objectId"] == .string(id))
        #expect(signUp.json["createdAt"] == created.json["createdAt"])
        let newToken = try #require(signUp.json["sessionToken"]?.stringValue)
        #expect(isSessionToken(newToken))
        #expect(signUp.headers["location"] == "http://127.0.0.1:\(api.server.port)/parse/users/\(id)")

        let converted = try await api.send("GET", "/sessions/me", token: newToken)
        #expect(converted.json["createdWith"] == ["action": "signup", "authProvider": "password"])  // As a sign-up's.
        let me = try await api.me(newToken)
        #expect(me.json["objectId"] == .string(id))
        #expect(me.json["username"] == "hank")
        #expect(me.json["authData"]?["anonymous"] == nil)
        expectError(try await api.me(token), 209)
        #expect(try await api.logIn("hank", "pw-hank-signup").id == id)
        #expect(try await api.send("GET", "/classes/Note/\(noteId)", token: newToken).status == 200)
        let users = try await api.send("GET", "/users", master: true, query: ["count": "1", "limit": "0"])
        #expect(users.json["count"] == 1)
        api.expectNeverShown(["pw-hank-signup"])
    }

    /// Parse: a sign-up carrying a registered user's session still creates a new user.
    @Test func signUpFromARegisteredSessionCreatesAnotherUser() async throws {
        let api = try RecordingServer()
        let ivy = try await api.signUp("ivy", "pw-ivy-reg")
        let jack = try await api.signUp("jack", "pw-jack-reg", headers: ["X-Parse-Session-Token": ivy.token])
        #expect(jack.id != ivy.id)
        #expect(try await api.me(ivy.token).json["username"] == "ivy")
        #expect(try await api.me(jack.token).json["username"] == "jack")
        #expect(try await api.logIn("ivy", "pw-ivy-reg").id == ivy.id)
        api.expectNeverShown(["pw-ivy-reg", "pw-jack-reg"])
    }

    @Test func anonymousSignUpKeepsOtherFieldsAndAddsTheOwnerToAGivenACL() async throws {
        let api = try RecordingServer()
        let created = try await api.send("POST", "/users", json: [
            "authData": ["anonymous": ["id": .string(newAnonymousId())]], "nickname": "kit", "ACL": ["*": ["read": true]],
        ])
        #expect(created.status == 201)
        let id = try #require(created.json["objectId"]?.stringValue)
        let stored = try await api.send("GET", "/users/\(id)", master: true)
        #expect(stored.json["nickname"] == "kit")
        #expect(stored.json["ACL"] == .object(["*": ["read": true], id: ["read": true, "write": true]]))
        // Public read, but others still see no auth data.
        let seen = try await api.send("GET", "/users/\(id)")
        #expect(seen.status == 200)
        #expect(seen.json["authData"] == nil)
        #expect(seen.json["nickname"] == "kit")
    }

    // spec: AuthenticationAdapters.spec.js: should fail to link if session token don't match user
    /// Auth data sent with a session (Parse's `RestWrite.handleAuthData`): another user's id is refused, the caller's
    /// own logs in without a new session, a new id makes a user without one; with no session, the id logs in as always.
    @Test func authDataWithASessionStartsNoSessionAndTakesNoOtherUser() async throws {
        let api = try RecordingServer()
        let taken = newAnonymousId()
        let owner = try await api.anonymous(taken)
        let ownerId = try #require(owner.json["objectId"]?.stringValue)
        let ownerToken = try #require(owner.json["sessionToken"]?.stringValue)
        let bob = try await api.signUp("bob", "pw-bob-linked")
        let session = ["X-Parse-Session-Token": bob.token]
        expectError(try await api.anonymous(taken, headers: session), 208, "this auth is already used")

        let own = try await api.anonymous(taken, headers: ["X-Parse-Session-Token": ownerToken])
        #expect(own.status == 200 && own.json["objectId"] == .string(ownerId), "\(own.text)")
        #expect(own.json["sessionToken"] == nil && own.json["authData"] != nil)

        let fresh = try await api.anonymous(newAnonymousId(), headers: session)
        #expect(fresh.status == 201, "\(fresh.text)")
        #expect(fresh.json.objectValue?.keys.sorted() == ["createdAt", "objectId", "username"])
        #expect(try await api.me(bob.token).json["objectId"] == .string(bob.id))  // Bob stays who he was.
        // A provider's id alone is not a field an update may set, even with the master key.
        expectError(try await api.send("PUT", "/users/\(ownerId)", json: ["authData.anonymous.id": "zzz"], master: true),
                    105, "Invalid field name for update: authData.anonymous.id")

        let again = try await api.anonymous(taken)
        #expect(again.status == 200 && again.json["objectId"] == .string(ownerId) && again.json["sessionToken"] != nil)
        api.expectNeverShown(["pw-bob-linked"])
    }
}
