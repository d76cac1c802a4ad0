import Foundation
import RoostCore
import Testing

/// Parse Server's spec/RestQuery.spec.js: "query internal field". The `_User` fields Parse keeps for itself
/// (tokens, lockout and password history) may not be queried by clients (105); Parse lets the master key query them,
/// Roost, which keeps them apart from the user, does not.
@Suite struct RestQueryRESTSpecTests {
    private static let internalFields = [
        "_email_verify_token", "_perishable_token", "_tombstone", "_email_verify_token_expires_at",
        "_failed_login_count", "_account_lockout_expires_at", "_password_changed_at", "_password_history",
    ]

    // spec-differs: RestQuery.spec.js: query internal field -- Roost keeps these in tables of its own (tokens hashed), not on the user: the master key's query on them is 105 as a client's, where Parse's succeeds
    @Test func internalUserFieldsAreNotQueried() async throws {
        let server = try TestServer(arguments: fastHashing)
        _ = try await server.signUpAccount("username1", password: "password")
        for field in Self.internalFields {
            let constraint: JSON = .object([field: ["$exists": true]])
            expectParseError(try await server.query("_User", ["where": constraint]), 105, "Invalid key name: \(field)")
            expectParseError(try await server.query("_User", ["where": constraint], master: true), 105, "Invalid key name: \(field)")
        }
    }
}
