import Foundation
import RoostCore
import Testing

/// Parse Server's spec/ParseUser.spec.js, its option cases: `allowClientClassCreation` is `--allow-client-class-creation`
/// / `--no-allow-client-class-creation` here (variable `ROOST_ALLOW_CLIENT_CLASS_CREATION`), `enforcePrivateUsers`
/// `--enforce-private-users` / `--no-enforce-private-users`.
@Suite struct ParseUserOptionsSpecTests {
    // spec: ParseUser.spec.js: should accept true value
    // spec: ParseUser.spec.js: should accept false value
    /// On, a client's write makes a new class; off, Parse's 119, by the flag or by its variable.
    @Test func theOptionTurnsClientClassCreationOnAndOff() async throws {
        for (arguments, environment) in [(["--allow-client-class-creation"], [:]), ([], ["ROOST_ALLOW_CLIENT_CLASS_CREATION": "true"])] {
            let server = try TestServer(arguments: arguments, environment: environment)
            #expect(try await server.request("POST", "/classes/MadeByAClient", json: ["a": 1]).status == 201)
        }
        for (arguments, environment) in [(["--no-allow-client-class-creation"], [:]), ([], ["ROOST_ALLOW_CLIENT_CLASS_CREATION": "false"])] {
            let server = try TestServer(arguments: arguments, environment: environment)
            expectError(try await server.request("POST", "/classes/MadeByAClient", json: ["a": 1]), 119,
                        "This user is not allowed to access non-existent class: MadeByAClient")
        }
    }

    // spec-differs: ParseUser.spec.js: should enforce boolean values -- a switch: of Parse's list ([], 'a', '', 0, 1, {}, 'true', 'false') its variable refuses [], a, '' and {} at start, naming the variable; 0, 1, true and false are the usual boolean words of an environment variable, read as off and on
    @Test func aVariableThatIsNoBooleanStopsTheStart() throws {
        for value in ["[]", "a", "", "{}"] {
            let attempt = try StartAttempt([], environment: ["ROOST_ALLOW_CLIENT_CLASS_CREATION": value])
            #expect(!attempt.started && attempt.log.contains("ROOST_ALLOW_CLIENT_CLASS_CREATION"), "'\(value)': \(attempt.log)")
        }
    }

    // spec-differs: ParseUser.spec.js: should default false -- on by default (Parse Server 7 turned it off; its own test suite and the REST guide's examples create classes from clients): see the README's option table
    @Test func onByDefault() async throws {
        let server = try TestServer()
        #expect(try await server.request("POST", "/classes/MadeByAClient", json: ["a": 1]).status == 201)
    }

    // spec-differs: ParseUser.spec.js: should throw when enforcePrivateUsers is invalid -- a switch: its variable set to a value that is no boolean ('a', '', '[]', '{}') stops the start naming the variable; 0, 1, true and false are read as off and on
    /// On (the default), a new user is its own reader only; off, everyone may read (not write) one that names no ACL,
    /// and one that names an ACL keeps it. A variable that is no boolean stops the start.
    @Test func enforcePrivateUsersDecidesWhoReadsANewUser() async throws {
        for (flags, publicRead) in [([String](), false), (["--no-enforce-private-users"], true)] {
            let server = try TestServer(arguments: fastHashing + flags)
            let user = try await server.signUpAccount("private"), other = try await server.signUpAccount("other")
            let seen = try await server.request("GET", "/users/\(user.id)", headers: ["X-Parse-Session-Token": other.token])
            #expect(seen.status == (publicRead ? 200 : 404), "\(flags): \(seen.text)")
            let acl = try await server.request("GET", "/users/\(user.id)", master: true).json["ACL"]
            let expected: JSON = publicRead ? ["*": ["read": true, "write": false], .init(user.id): ["read": true, "write": true]]
                : [.init(user.id): ["read": true, "write": true]]
            #expect(acl == expected, "\(flags): \(acl?.jsonText ?? "")")
            let edited = try await server.request("PUT", "/users/\(user.id)", json: ["a": 1], headers: ["X-Parse-Session-Token": other.token])
            #expect(edited.status != 200, "\(edited.text)")
            let named = try await server.request("POST", "/users", json: ["username": "named", "password": "pw", "ACL": [:]])
            let namedId = try #require(named.json["objectId"]?.stringValue)
            #expect(try await server.request("GET", "/users/\(namedId)", master: true).json["ACL"] == .object([namedId: ["read": true, "write": true]]))
        }
        let attempt = try StartAttempt([], environment: ["ROOST_ENFORCE_PRIVATE_USERS": "a"])
        #expect(!attempt.started && attempt.log.contains("ROOST_ENFORCE_PRIVATE_USERS"), "\(attempt.log)")
    }
}
