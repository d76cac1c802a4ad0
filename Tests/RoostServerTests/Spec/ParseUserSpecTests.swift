import Foundation
import RoostCore
import Testing

/// Parse Server's spec/ParseUser.spec.js, carried over REST: what the JS SDK sends for each case and what
/// the server answers. Cases about the SDK's local state, cloud code triggers, OAuth providers other than
/// `anonymous`, mail adapters and server options we do not have are not carried.
@Suite struct ParseUserSpecTests {
    private func addRelation(_ pointers: [JSON]) -> JSON { ["__op": "AddRelation", "objects": .array(pointers)] }

    private func sessionCount(_ api: RecordingServer, user: String? = nil) async throws -> Int? {
        var query: [String: String] = [:]
        if let user { query["where"] = JSON.object(["user": pointer("_User", user)]).jsonText }
        return try await api.send("GET", "/classes/_Session", master: true, query: query).json["results"]?.arrayValue?.count
    }

    // spec: ParseUser.spec.js: user sign up class method
    // spec: ParseUser.spec.js: user sign up instance method
    // spec: ParseUser.spec.js: user login wrong username
    // spec: ParseUser.spec.js: user login wrong password
    // spec: ParseUser.spec.js: user login with non-string username with REST API
    // spec: ParseUser.spec.js: user login with non-string username with REST API (again)
    // spec: ParseUser.spec.js: user login using POST with REST API
    // spec: ParseUser.spec.js: user login
    // spec: ParseUser.spec.js: user login with enforcePrivateUsers
    // spec: ParseUser.spec.js: support user/password signup with empty authData block
    // spec: ParseUser.spec.js: user sign up with container class
    // spec: ParseUser.spec.js: set password then change password
    @Test func signUpAndLogIn() async throws {
        let api = try RecordingServer()
        let signUp = try await api.send("POST", "/users", json: ["username": "asdf", "password": "zxcv"])
        #expect(signUp.status == 201)
        #expect(isSessionToken(signUp.json["sessionToken"]?.stringValue))
        let userId = try #require(signUp.json["objectId"]?.stringValue)

        expectError(try await api.send("POST", "/login", json: ["username": "non_existent_user", "password": "asdf3"]), 101)
        expectError(try await api.send("POST", "/login", json: ["username": "asdf", "password": "asdfWrong"]), 101)
        // The JS SDK's form: a POST whose body says `_method: GET`; operators are not strings.
        for body: JSON in [["_method": "GET", "username": ["$regex": "^asd"], "password": "zxcv"],
                           ["_method": "GET", "username": "asdf", "password": ["$regex": "^zx"]]] {
            let refused = try await api.send("POST", "/login", json: body)
            #expect(refused.status == 404)
            #expect(refused.text == #"{"code":101,"error":"Invalid username/password."}"#)
        }

        let login = try await api.send("POST", "/login", json: ["username": "asdf", "password": "zxcv"])
        #expect(login.status == 200)
        #expect(login.json["username"] == "asdf")
        // Users are private by default (`enforcePrivateUsers`): the ACL names only the user.
        #expect(login.json["ACL"] == .object([userId: ["read": true, "write": true]]))

        #expect(try await api.send("POST", "/users", json: ["username": "artof", "password": "thedeal", "authData": [:]]).status == 201)
        let ilya = try await api.send("POST", "/users", json: ["username": "ilya", "password": "mypass", "array": ["hello"]])
        #expect(ilya.status == 201)

        let bob = try await api.signUp("bob", "barker")
        #expect(try await api.send("PUT", "/users/\(bob.id)", json: ["password": "meower"], token: bob.token).status == 200)
        #expect(try await api.logIn("bob", "meower").id == bob.id)
        expectError(try await api.send("POST", "/login", json: ["username": "bob", "password": "barker"]), 101)
    }

    // spec: ParseUser.spec.js: should respect ACL without locking user out
    // spec: ParseUser.spec.js: should let masterKey lockout user
    // spec: ParseUser.spec.js: never locks himself up
    // spec: ParseUser.spec.js: cannot save non-authed user
    // spec: ParseUser.spec.js: cannot delete non-authed user
    // spec: ParseUser.spec.js: cannot saveAll with non-authed user
    // spec: ParseUser.spec.js: should throw OBJECT_NOT_FOUND instead of SESSION_MISSING when using masterKey
    @Test func whoMayWriteAUser() async throws {
        let api = try RecordingServer()
        // A user who tries to lock themself out keeps read and write on their own record.
        let asdf = try await api.signUp("asdf", "zxcv", ["ACL": [:]])
        let own: JSON = [asdf.id: ["read": true, "write": true]]
        #expect(try await api.logIn("asdf", "zxcv").id == asdf.id)
        #expect(try await api.me(asdf.token).json["ACL"] == .object([asdf.id: ["read": true, "write": true]]))
        #expect(try await api.send("PUT", "/users/\(asdf.id)", json: ["ACL": [:]], token: asdf.token).status == 200)
        let again = try await api.send("POST", "/login", json: ["username": "asdf", "password": "zxcv"])
        #expect(again.json["ACL"] == own)

        // The master key may: an empty ACL then refuses the log-in as a wrong password.
        #expect(try await api.send("PUT", "/users/\(asdf.id)", json: ["ACL": [:]], master: true).status == 200)
        expectError(try await api.send("POST", "/login", json: ["username": "asdf", "password": "zxcv"]), 101, "Invalid username/password.")

        // Another user may write a user whose ACL grants it (through a role here); nobody else may.
        let user = try await api.signUp("username", "password")
        let admin = try await api.signUp("admin", "admin")
        let role = try await api.send("POST", "/roles", json: [
            "name": "admin", "ACL": ["*": ["read": true]], "users": addRelation([pointer("_User", admin.id)]),
        ], master: true)
        #expect(role.status == 201)
        let granted: JSON = [user.id: ["read": true, "write": true], "role:admin": ["read": true, "write": true]]
        #expect(try await api.send("PUT", "/users/\(user.id)", json: ["ACL": granted], master: true).status == 200)
        #expect(try await api.send("PUT", "/users/\(user.id)", json: ["key": "fromAdmin"], token: admin.token).status == 200)
        #expect(try await api.me(user.token).json["key"] == "fromAdmin")
        expectError(try await api.send("PUT", "/users/\(user.id)", json: ["key": "fromPublic"]), 206, "Cannot modify user \(user.id).")
        let anyUser = try await api.signUp("randomUser", "password")
        expectError(try await api.send("PUT", "/users/\(user.id)", json: ["key": "fromAnyUser"], token: anyUser.token), 206,
                    "Insufficient auth.")
        #expect(try await api.me(user.token).json["key"] == "fromAdmin")

        // Changing or deleting a user that is not yours, alone or inside a batch.
        let zxcv = try await api.signUp("zxcv", "asdf", ["email": "asdf@example.com"])
        let hacker = try await api.signUp("hacker", "password")
        expectError(try await api.send("PUT", "/users/\(zxcv.id)", json: ["username": "changed"], token: hacker.token), 206)
        expectError(try await api.send("DELETE", "/users/\(zxcv.id)", token: hacker.token), 206)
        let item = try await api.server.create("TestObject", ["number": 0])
        let batch = try await api.send("POST", "/batch", json: ["requests": [
            ["method": "PUT", "path": .string("/parse/classes/TestObject/\(item)"), "body": ["number": 1]],
            ["method": "POST", "path": "/parse/classes/TestObject", "body": ["number": 2]],
            ["method": "PUT", "path": .string("/parse/users/\(zxcv.id)"), "body": ["username": "changed"]],
        ]], token: hacker.token)
        #expect(batch.json.arrayValue?.last?["error"]?["code"] == 206)
        #expect(try await api.me(zxcv.token).json["username"] == "zxcv")

        // A user that does not exist: 101 for the master key, 206 for everyone else.
        expectError(try await api.send("DELETE", "/users/fake_id", master: true), 101)
        expectError(try await api.send("PUT", "/users/fake_id", json: [:], master: true), 101)
        expectError(try await api.send("PUT", "/users/fake_id", json: [:]), 206)
        expectError(try await api.send("DELETE", "/users/fake_id"), 206)
    }

    // spec: ParseUser.spec.js: user associations
    // spec: ParseUser.spec.js: user queries
    // spec: ParseUser.spec.js: contained in user array queries
    // spec: ParseUser.spec.js: user updates
    // spec: ParseUser.spec.js: count users
    // spec: ParseUser.spec.js: querying for users doesn't get session tokens
    // spec: ParseUser.spec.js: querying for users only gets the expected fields
    // spec: ParseUser.spec.js: retrieve user data from fetch, make sure the session token hasn't changed
    // spec: ParseUser.spec.js: should not fail querying non existing relations
    @Test func readingUsers() async throws {
        let api = try RecordingServer()
        let child = try await api.server.create("TestObject", [:])
        let zxcv = try await api.signUp("zxcv", "asdf", ["email": "asdf@example.com", "child": pointer("TestObject", child)])
        let object = try await api.server.create("TestObject", ["user": pointer("_User", zxcv.id)])
        #expect(try await api.server.fetch("TestObject", object)["user"]?["objectId"] == .string(zxcv.id))
        let fetched = try await api.send("GET", "/users/\(zxcv.id)", token: zxcv.token)
        #expect(fetched.json["child"]?["objectId"] == .string(child))
        #expect(fetched.json["email"] == "asdf@example.com")
        #expect(fetched.json["sessionToken"] == .string(zxcv.token))
        let found = try await api.send("GET", "/users", token: zxcv.token)
        #expect(found.json["results"]?.arrayValue?.map { $0["objectId"] } == [.string(zxcv.id)])

        // Four users, five messages: `$in` over pointers to users (a duplicate is harmless).
        var users: [Account] = []
        for i in 0..<4 { users.append(try await api.signUp("xinglblog_num_\(i)", "user_num_\(i)", ["email": .string("user_num_\(i)@example.com")])) }
        for i in 0..<5 {
            _ = try await api.server.create("Message", ["to": pointer("_User", users[(i + 1) % 4].id), "from": pointer("_User", users[i % 4].id)])
        }
        let inList: JSON = .array([users[0], users[3], users[3]].map { pointer("_User", $0.id) })
        #expect(try await api.server.results("Message", ["where": ["from": ["$in": inList]]]).count == 3)

        // Renaming, then deleting: the user is gone.
        #expect(try await api.send("PUT", "/users/\(zxcv.id)", json: ["username": "test"], token: zxcv.token).status == 200)
        let renamed = try await api.me(zxcv.token)
        #expect(renamed.json["username"] == "test")
        #expect(renamed.json["email"] == "asdf@example.com")
        #expect(try await api.send("DELETE", "/users/\(zxcv.id)", token: zxcv.token).status == 200)
        expectError(try await api.send("GET", "/users/\(zxcv.id)", master: true), 101)

        #expect(try await api.send("GET", "/users", master: true).json["results"]?.arrayValue?.count == 4)

        // Public users, read by nobody in particular: no session tokens, and only the six fields.
        let finn = try await api.signUp("finn", "human", ["foo": "bar", "ACL": ["*": ["read": true]]])
        _ = try await api.signUp("jake", "dog", ["foo": "baz", "ACL": ["*": ["read": true]]])
        let publicUsers = try await api.server.results("_User")
        #expect(publicUsers.count == 2)
        for user in publicUsers {
            #expect(user["sessionToken"] == nil)
            #expect(user.objectValue?.keys.sorted() == ["ACL", "createdAt", "foo", "objectId", "updatedAt", "username"])
        }

        // A relation the user never had: no results, no error.
        let relation = try await api.send("GET", "/users", token: finn.token, query: [
            "where": JSON.object(["$relatedTo": ["object": pointer("_User", finn.id), "key": "relation"]]).jsonText,
            "redirectClassNameForKey": "relation",
        ])
        #expect(relation.status == 200)
        #expect(relation.json["results"]?.arrayValue?.isEmpty == true)
    }

    // spec: ParseUser.spec.js: user save should fail with invalid email
    // spec: ParseUser.spec.js: user signup should error if email taken
    // spec: ParseUser.spec.js: signup should fail with duplicate case insensitive username with basic setter
    // spec: ParseUser.spec.js: signup should fail with duplicate case insensitive username with field specific setter
    // spec: ParseUser.spec.js: signup should fail with duplicate case insensitive email
    // spec: ParseUser.spec.js: edit should fail with duplicate case insensitive email
    // spec: ParseUser.spec.js: user cannot update email to existing user
    // spec: ParseUser.spec.js: unset user email
    // spec: ParseUser.spec.js: should not allow updates to emailVerified
    // spec: ParseUser.spec.js: should not allow updates to hidden fields
    @Test func usernamesAndEmails() async throws {
        let api = try RecordingServer()
        expectError(try await api.send("POST", "/users", json: ["username": "teste", "password": "test", "email": "invalid"]), 125)
        let test1 = try await api.signUp("test1", "test", ["email": "test@example.com"])
        expectError(try await api.send("POST", "/users", json: ["username": "test2", "password": "test", "email": "test@example.com"]), 203)
        expectError(try await api.send("POST", "/users", json: ["username": "Test1", "password": "test"]), 202,
                    "Account already exists for this username.")
        expectError(try await api.send("POST", "/users", json: ["username": "test2", "password": "test", "email": "Test@Example.Com"]), 203,
                    "Account already exists for this email address.")
        let test2 = try await api.signUp("test2", "test", ["email": "Foo@Example.Com"])
        expectError(try await api.send("PUT", "/users/\(test2.id)", json: ["email": "Test@Example.Com"], token: test2.token), 203,
                    "Account already exists for this email address.")
        let test3 = try await api.signUp("test3", "test")
        expectError(try await api.send("PUT", "/users/\(test3.id)", json: ["email": "test@example.com"], token: test3.token), 203)

        // Unsetting the email (the SDK's `unset`): it is gone, also from the next log-in.
        let unset = try await api.send("PUT", "/users/\(test1.id)", json: ["email": ["__op": "Delete"]], token: test1.token)
        #expect(unset.status == 200)
        let login = try await api.send("POST", "/login", json: ["username": "test1", "password": "test"])
        #expect(login.status == 200)
        #expect(login.json["email"] == nil)
        #expect(login.json["emailVerified"] == nil)
        // The address is free again.
        #expect(try await api.send("PUT", "/users/\(test3.id)", json: ["email": "test@example.com"], token: test3.token).status == 200)
        // An email of another type is the schema's type error, not a malformed address.
        expectError(try await api.send("PUT", "/users/\(test3.id)", json: ["email": 5], token: test3.token), 111,
                    "schema mismatch for _User.email; expected String but got Number")

        expectError(try await api.send("PUT", "/users/\(test2.id)", json: ["emailVerified": true], token: test2.token), 119,
                    "Clients aren't allowed to manually update email verification.")
        expectError(try await api.send("PUT", "/users/\(test2.id)", json: ["_email_verify_token": "bad"], token: test2.token), 105,
                    "Invalid field name: _email_verify_token.")
    }

    // spec: ParseUser.spec.js: can login with email
    // spec: ParseUser.spec.js: cannot login with email and invalid password
    // spec: ParseUser.spec.js: can login with email through query string
    // spec: ParseUser.spec.js: can login when both email and username are passed
    // spec: ParseUser.spec.js: fails to login when username doesn't match email
    // spec: ParseUser.spec.js: fails to login when email doesn't match username
    // spec: ParseUser.spec.js: fails to login when email and username are not provided
    // spec: ParseUser.spec.js: allows login when providing email as username
    // spec: ParseUser.spec.js: handles properly when 2 users share username / email pairs
    // spec: ParseUser.spec.js: handles properly when 2 users share username / email pairs, counterpart
    // spec: ParseUser.spec.js: fails to login when password is not provided
    // spec: ParseUser.spec.js: does not duplicate session when logging in multiple times #3451
    @Test func logInWithEmail() async throws {
        let api = try RecordingServer()
        let yolo = try await api.signUp("yolo", "yolopass", ["email": "yo@lo.com"])
        let byEmail = try await api.send("GET", "/login", query: ["email": "yo@lo.com", "password": "yolopass"])
        #expect(byEmail.json["objectId"] == .string(yolo.id))
        #expect(try await api.send("POST", "/login", json: ["email": "yo@lo.com", "password": "yolopass2"]).status == 404)
        let both = try await api.send("GET", "/login", query: ["email": "yo@lo.com", "username": "yolo", "password": "yolopass"])
        #expect(both.json["objectId"] == .string(yolo.id))
        expectError(try await api.send("GET", "/login", query: ["email": "yo@lo.com", "username": "yolo2", "password": "yolopass"]), 101,
                    "Invalid username/password.")
        expectError(try await api.send("GET", "/login", query: ["email": "yo@lo2.com", "username": "yolo", "password": "yolopass"]), 101,
                    "Invalid username/password.")
        expectError(try await api.send("GET", "/login", query: ["password": "yolopass"]), 200, "username/email is required.")
        expectError(try await api.send("GET", "/login", query: ["username": "yolo"]), 201, "password is required.")
        #expect(try await api.logIn("yo@lo.com", "yolopass").id == yolo.id)

        // The username takes precedence over another user's email.
        let first = try await api.signUp("yo@loname.com", "yolopass", ["email": "yo@lo2.com"])
        _ = try await api.signUp("yo@lo2.com", "yolopass2", ["email": "yo@loname.com"])
        #expect(try await api.logIn("yo@loname.com", "yolopass").id == first.id)
        expectError(try await api.send("POST", "/login", json: ["username": "yo@loname.com", "password": "yolopass2"]), 101,
                    "Invalid username/password.")

        // Each log-in is a new session, and the SDK's log-ins from one installation keep only the last.
        let installation = ["X-Parse-Installation-Id": "yolo-device"]
        var tokens: Set<String> = [yolo.token]
        for _ in 0..<5 { tokens.insert(try await api.logIn("yolo", "yolopass", headers: installation).token) }
        #expect(tokens.count == 6)
        let sessions = try await api.send("GET", "/sessions", master: true, query: [
            "where": JSON.object(["user": pointer("_User", yolo.id), "installationId": "yolo-device"]).jsonText,
        ])
        #expect(sessions.json["results"]?.arrayValue?.count == 1)
    }

    // spec: ParseUser.spec.js: create session from user
    // spec: ParseUser.spec.js: user get session from token on signup
    // spec: ParseUser.spec.js: user get session from token on username/password login
    // spec: ParseUser.spec.js: user get session from token on anonymous login
    // spec: ParseUser.spec.js: user update session with other field
    // spec: ParseUser.spec.js: cannot update session if invalid or no session token
    // spec: ParseUser.spec.js: get session only for current user
    // spec: ParseUser.spec.js: delete session by object
    // spec: ParseUser.spec.js: cannot delete session if no sessionToken
    // spec: ParseUser.spec.js: session expiresAt correct format
    // spec: ParseUser.spec.js: Invalid session tokens are rejected
    @Test func sessionsOfAUser() async throws {
        let api = try RecordingServer()
        let test1 = try await api.signUp("test1", "test", ["foo": "bar"])
        let finn = try await api.signUp("finn", "human", ["foo": "bar"])
        let created = try await api.send("POST", "/sessions", token: finn.token)
        #expect(created.json["sessionToken"]?.stringValue != nil)
        #expect(created.json["createdWith"]?["action"] == "create")
        #expect(created.json["user"]?["objectId"] == .string(finn.id))

        let onSignUp = try await api.send("GET", "/sessions/me", token: finn.token)
        #expect(onSignUp.json["sessionToken"] == .string(finn.token))
        #expect(onSignUp.json["createdWith"] == ["action": "signup", "authProvider": "password"])
        #expect(onSignUp.json["user"]?["objectId"] == .string(finn.id))
        let login = try await api.logIn("finn", "human")
        let onLogIn = try await api.send("GET", "/sessions/me", token: login.token)
        #expect(onLogIn.json["createdWith"] == ["action": "login", "authProvider": "password"])
        #expect(onLogIn.json["user"]?["objectId"] == .string(finn.id))
        let anonymous = try await api.anonymous(newAnonymousId())
        let anonymousToken = try #require(anonymous.json["sessionToken"]?.stringValue)
        let onAnonymous = try await api.send("GET", "/sessions/me", token: anonymousToken)
        #expect(onAnonymous.json["createdWith"] == ["action": "login", "authProvider": "anonymous"])
        #expect(onAnonymous.json["user"]?["objectId"] == anonymous.json["objectId"])

        let sessionId = try #require(onSignUp.json["objectId"]?.stringValue)
        #expect(try await api.send("PUT", "/sessions/\(sessionId)", json: ["foo": "bar"], token: finn.token).status == 200)
        expectError(try await api.send("PUT", "/sessions/\(sessionId)", json: ["foo": "bar"], token: "foo"), 209, "Invalid session token")
        expectError(try await api.send("PUT", "/sessions/\(sessionId)", json: ["foo": "bar"]), 209, "Session token required.")

        // Each user lists only their own sessions; deleting the one in use ends it.
        let test2 = try await api.signUp("test2", "test", ["foo": "bar"])
        let own = try await api.send("GET", "/sessions", token: test2.token)
        let listed = try #require(own.json["results"]?.arrayValue)
        #expect(listed.count == 1)
        #expect(listed.first?["user"]?["objectId"] == .string(test2.id))
        let test2Session = try #require(listed.first?["objectId"]?.stringValue)
        expectError(try await api.send("DELETE", "/sessions/\(test2Session)"), 209, "Invalid session token")
        #expect(try await api.send("DELETE", "/sessions/\(test2Session)", token: test2.token).status == 200)
        expectError(try await api.send("GET", "/sessions", token: test2.token), 209, "Invalid session token")
        #expect(try await api.send("GET", "/sessions", token: test1.token).json["results"]?.arrayValue?.count == 1)

        let all = try await api.send("GET", "/classes/_Session", master: true)
        #expect(all.json["results"]?.arrayValue?.first?["expiresAt"]?["__type"] == "Date")
        expectError(try await api.send("GET", "/classes/AClass", token: "text"), 209, "Invalid session token")
    }

    // spec: ParseUser.spec.js: become sends token back
    // spec: ParseUser.spec.js: become
    // spec: ParseUser.spec.js: test parse user become
    // spec: ParseUser.spec.js: changing password clears sessions
    // spec: ParseUser.spec.js: ensure logout works
    // spec: ParseUser.spec.js: should revoke sessions when setting paswword with masterKey (#3289)
    // spec: ParseUser.spec.js: should fail to become user with expired token
    // spec: ParseUser.spec.js: should return current session with expired expiration date
    // spec: ParseUser.spec.js: should not create extraneous session tokens
    @Test func sessionLifetimes() async throws {
        let api = try RecordingServer()
        // `become` is GET /users/me with the token.
        let jason = try await api.signUp("Jason", "Parse", ["code": "red"])
        let become = try await api.me(jason.token)
        #expect(become.json["objectId"] == .string(jason.id))
        #expect(become.json["code"] == "red")
        #expect(become.json["sessionToken"] == .string(jason.token))
        expectError(try await api.me("somegarbage"), 209)
        #expect(try await api.send("PUT", "/users/\(jason.id)", json: ["foo": 2], token: jason.token).status == 200)
        #expect(try await api.me(jason.token).json["foo"] == 2)

        let fosco = try await api.signUp("fosco", "parse")
        let changed = try await api.send("PUT", "/users/\(fosco.id)", json: ["password": "facebook"], token: fosco.token)
        #expect(isSessionToken(changed.json["sessionToken"]?.stringValue))
        expectError(try await api.me(fosco.token), 209, "Invalid session token")

        let log = try await api.signUp("log", "out")
        #expect(try await api.send("POST", "/logout", token: log.token).status == 200)
        expectError(try await api.send("PUT", "/users/\(log.id)", json: ["foo": "bar"], token: log.token), 209)

        let username = try await api.signUp("username", "password")
        #expect(try await api.send("PUT", "/users/\(username.id)", json: ["password": "newPassword"], master: true).status == 200)
        #expect(try await sessionCount(api, user: username.id) == 0)

        // A session the master key made expire: refused everywhere but on /sessions/me, which still shows it.
        let auser = try await api.signUp("auser", "somepass")
        let session = try #require(try await api.send("GET", "/sessions/me", token: auser.token).json["objectId"]?.stringValue)
        let expiresAt = date("2015-06-01T10:00:00.000Z")
        #expect(try await api.send("PUT", "/classes/_Session/\(session)", json: ["expiresAt": expiresAt], master: true).status == 200)
        expectError(try await api.me(auser.token), 209, "Session token is expired.")
        let current = try await api.send("GET", "/sessions/me", token: auser.token)
        #expect(current.status == 200)
        #expect(current.json["expiresAt"] == expiresAt)

        // A sign-up the class-level permissions refuse starts no session.
        let before = try await sessionCount(api)
        let locked = try await api.send("PUT", "/schemas/_User", json: ["classLevelPermissions": ["create": [:]]], master: true)
        #expect(locked.status == 200)
        expectError(try await api.send("POST", "/users", json: ["username": "user", "password": "pass"]), 119,
                    "Permission denied for action create on class _User.")
        #expect(try await sessionCount(api) == before)
    }

    // spec: ParseUser.spec.js: should cleanup null authData keys ParseUser update (regression test for #1198, #2252)
    // spec: ParseUser.spec.js: should revoke sessions when converting anonymous user to "normal" user
    // spec: ParseUser.spec.js: should be able to update user with authData passed
    // spec: ParseUser.spec.js: should be let masterKey lock user out with authData
    @Test func anonymousUsers() async throws {
        let api = try RecordingServer()
        let anonymous = try await api.send("POST", "/classes/_User", json: ["authData": ["anonymous": ["id": "00000000-0000-0000-0000-000000000001"]]])
        let userId = try #require(anonymous.json["objectId"]?.stringValue)
        let original = try #require(anonymous.json["sessionToken"]?.stringValue)
        let mine = try await api.send("POST", "/classes/TestObject", json: ["ACL": [userId: ["read": true, "write": true]]], token: original)
        let objectId = try #require(mine.json["objectId"]?.stringValue)

        let converted = try await api.send("PUT", "/classes/_User/\(userId)", json: [
            "authData": ["anonymous": nil], "username": "user", "password": "password",
        ], token: original)
        #expect(converted.status == 200)
        #expect(converted.json["authData"] == nil)
        let token = try #require(converted.json["sessionToken"]?.stringValue)
        #expect(token != original)
        let me = try await api.me(token)
        #expect(me.json["username"] == "user")
        #expect(me.json["objectId"] == .string(userId))
        expectError(try await api.me(original), 209)
        #expect(try await api.send("GET", "/classes/TestObject/\(objectId)", token: token).status == 200)

        // Updating with the same anonymous authData keeps the user.
        let second = try await api.send("POST", "/classes/_User", json: [
            "key": "value", "authData": ["anonymous": ["id": "00000000-0000-0000-0000-000000000002"]],
        ])
        let secondId = try #require(second.json["objectId"]?.stringValue)
        let secondToken = try #require(second.json["sessionToken"]?.stringValue)
        #expect(try await api.send("GET", "/classes/_User/\(secondId)", token: secondToken).json["key"] == "value")
        let update = try await api.send("PUT", "/classes/_User/\(secondId)", json: [
            "key": "otherValue", "authData": ["anonymous": ["id": "00000000-0000-0000-0000-000000000002"]],
        ], token: secondToken)
        #expect(update.status == 200)
        #expect(try await api.send("GET", "/classes/_User/\(secondId)", token: secondToken).json["key"] == "otherValue")

        // Locked out by the master key, the anonymous id signs up a new user.
        #expect(try await api.send("PUT", "/classes/_User/\(secondId)", json: ["ACL": [:]], master: true).status == 200)
        let again = try await api.send("POST", "/classes/_User", json: [
            "key": "otherValue", "authData": ["anonymous": ["id": "00000000-0000-0000-0000-000000000002"]],
        ])
        #expect(again.status == 201)
        #expect(again.json["objectId"] != nil)
        #expect(again.json["objectId"] != .string(secondId))
    }

    // spec: ParseUser.spec.js: allows creating a session for another user with the master key
    // spec: ParseUser.spec.js: rejects creating a session for another user if the user does not exist
    // spec: ParseUser.spec.js: rejects creating a session for another user with invalid parameters
    // spec: ParseUser.spec.js: rejects creating a session for another user without the master key
    @Test func logInAsAnotherUser() async throws {
        let api = try RecordingServer()
        let user = try await api.signUp("some_user", "some_password")
        #expect(try await api.send("POST", "/logout", token: user.token).status == 200)
        #expect(try await sessionCount(api) == 0)

        expectError(try await api.send("POST", "/loginAs", json: ["userId": "bogus-user"], master: true), 101, "user not found")
        for invalid: JSON in [[:], ["userId": nil], ["userId": ""]] {
            expectError(try await api.send("POST", "/loginAs", json: invalid, master: true), 162,
                        "userId must not be empty, null, or undefined")
        }
        expectError(try await api.send("POST", "/loginAs", json: ["userId": .string(user.id)]), 119, "master key is required")
        #expect(try await sessionCount(api) == 0)

        let response = try await api.send("POST", "/loginAs", json: ["userId": .string(user.id)], master: true)
        #expect(isSessionToken(response.json["sessionToken"]?.stringValue))
        #expect(try await sessionCount(api) == 1)
    }

    // spec: ParseUser.spec.js: user login with files
    @Test func logInWithAFile() async throws {
        let api = try RecordingServer()
        // Uploads need a registered user (Parse's default); the spec's test server allows public ones.
        let uploader = try await api.signUp("uploader", "password")
        let upload = try await api.server.request("POST", "/files/yolo.txt", body: Data([1, 2, 3]),
                                                  headers: ["Content-Type": "text/plain", "X-Parse-Session-Token": uploader.token])
        #expect(upload.status == 201, "\(upload.text)")
        let name = try #require(upload.json["name"]?.stringValue)
        _ = try await api.signUp("asdf", "zxcv", ["file": ["__type": "File", "name": .string(name)]])
        let login = try await api.send("POST", "/login", json: ["username": "asdf", "password": "zxcv"])
        #expect(login.json["file"]?["name"] == .string(name))
        #expect(login.json["file"]?["url"]?.stringValue?.hasSuffix(name) == true)
    }
}
