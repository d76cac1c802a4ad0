import Foundation
import RoostCore
import Testing

/// Parse Server's spec/ParseUser.spec.js, its `allowClientClassCreation option` block: Parse's option is
/// `--allow-client-class-creation` / `--no-allow-client-class-creation` here (variable `ROOST_ALLOW_CLIENT_CLASS_CREATION`).
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
}
