import Foundation
import RoostCore
import Testing

/// Parse Server's spec/DatabaseController.spec.js, its `convertEmailToLowercase` and `convertUsernameToLowercase`
/// blocks, over REST (`--convert-email-to-lowercase`, `--convert-username-to-lowercase`): the spec checks what reaches
/// the storage adapter; here, what the master key reads back.
@Suite struct DatabaseControllerRESTSpecTests {
    /// Signs up `EXAMPLE` with `EXAMPLE@EXAMPLE.COM`, then changes both to `OTHER`/`OTHER@EXAMPLE.COM`; returns what is
    /// stored after each step.
    private func storedAfterCreateAndUpdate(_ flags: [String], environment: [String: String] = [:]) async throws
        -> (created: JSON, updated: JSON) {
        let server = try RecordingServer(arguments: fastHashing + flags, environment: environment)
        let user = try await server.signUp("EXAMPLE", "password", ["email": "EXAMPLE@EXAMPLE.COM"])
        let created = try await server.send("GET", "/users/\(user.id)", master: true).json
        let update = try await server.send("PUT", "/users/\(user.id)", json: ["username": "OTHER", "email": "OTHER@EXAMPLE.COM"],
                                           token: user.token)
        #expect(update.status == 200, "\(update.text)")
        return (created, try await server.send("GET", "/users/\(user.id)", master: true).json)
    }

    // spec: DatabaseController.spec.js: should not transform email to lower case without convertEmailToLowercase option on create
    // spec: DatabaseController.spec.js: should not transform email to lower case without convertEmailToLowercase option on update
    // spec: DatabaseController.spec.js: should not transform username to lower case without convertUsernameToLowercase option on create
    // spec: DatabaseController.spec.js: should not transform username to lower case without convertUsernameToLowercase option on update
    @Test func withoutTheOptionsUsersAreStoredAsSpelled() async throws {
        let (created, updated) = try await storedAfterCreateAndUpdate([])
        #expect(created["username"] == "EXAMPLE" && created["email"] == "EXAMPLE@EXAMPLE.COM", "\(created)")
        #expect(updated["username"] == "OTHER" && updated["email"] == "OTHER@EXAMPLE.COM", "\(updated)")
    }

    // spec: DatabaseController.spec.js: should transform email to lower case with convertEmailToLowercase option on create
    // spec: DatabaseController.spec.js: should transform email to lower case with convertEmailToLowercase option on update
    // spec: DatabaseController.spec.js: should transform username to lower case with convertUsernameToLowercase option on create
    // spec: DatabaseController.spec.js: should transform username to lower case with convertUsernameToLowercase option on update
    /// Each option lowercases its own field only.
    @Test func eachOptionLowercasesItsField() async throws {
        let email = try await storedAfterCreateAndUpdate(["--convert-email-to-lowercase"])
        #expect(email.created["username"] == "EXAMPLE" && email.created["email"] == "example@example.com", "\(email.created)")
        #expect(email.updated["username"] == "OTHER" && email.updated["email"] == "other@example.com", "\(email.updated)")
        let username = try await storedAfterCreateAndUpdate([], environment: ["ROOST_CONVERT_USERNAME_TO_LOWERCASE": "true"])
        #expect(username.created["username"] == "example" && username.created["email"] == "EXAMPLE@EXAMPLE.COM", "\(username.created)")
        #expect(username.updated["username"] == "other" && username.updated["email"] == "OTHER@EXAMPLE.COM", "\(username.updated)")
    }

    // spec: DatabaseController.spec.js: should not find a case insensitive user by email with convertEmailToLowercase
    // spec: DatabaseController.spec.js: should not find a case insensitive user by username with convertUsernameToLowercase
    @Test func queriesMatchOnlyTheStoredLowercase() async throws {
        let server = try RecordingServer(arguments: fastHashing + ["--convert-email-to-lowercase", "--convert-username-to-lowercase"])
        _ = try await server.send("POST", "/classes/_User", json: ["username": "EXAMPLE", "email": "EXAMPLE@EXAMPLE.COM",
                                                                  "password": "password"])
        func count(_ where: JSON) async throws -> Int? {
            try await server.send("GET", "/classes/_User", master: true, query: ["where": `where`.jsonText]).json["results"]?.arrayValue?.count
        }
        #expect(try await count(["email": "EXAMPLE@EXAMPLE.COM"]) == 0)
        #expect(try await count(["email": "example@example.com"]) == 1)
        #expect(try await count(["username": "EXAMPLE"]) == 0)
        #expect(try await count(["username": "example"]) == 1)
    }
}
