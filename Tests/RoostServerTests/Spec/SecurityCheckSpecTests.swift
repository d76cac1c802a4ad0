@testable import RoostServer
import Foundation
import RoostCore
import Testing

/// Parse Server's spec/SecurityCheck.spec.js over REST: `GET /security` and the report, with `--security-check` and
/// `--security-check-log` for Parse's `security.enableCheck` and `enableCheckLog`. The cases about the check classes
/// (`Check`, `CheckGroup`, `CheckRunner` built with custom groups) test Parse's JavaScript API, which Roost has not.
@Suite struct SecurityCheckSpecTests {
    private static let weakKey = ["--master-key", "weak"]

    // spec: SecurityCheck.spec.js: responds with 403 without masterkey
    // spec: SecurityCheck.spec.js: responds with 409 with masterkey and security check disabled
    // spec: SecurityCheck.spec.js: responds with 200 with masterkey and security check enabled
    // spec: SecurityCheck.spec.js: uses default configuration when none is set
    @Test func theEndpointNeedsTheMasterKeyAndTheOption() async throws {
        let off = try TestServer()
        let anonymous = try await off.request("GET", "/security")
        #expect(anonymous.status == 403, "\(anonymous.text)")
        let disabled = try await off.request("GET", "/security", master: true)
        #expect(disabled.status == 409 && disabled.json == ["error": "Enable Parse Server option `security.enableCheck` to run security check."],
                "\(disabled.text)")
        let on = try TestServer(arguments: ["--security-check"])
        #expect(try await on.request("GET", "/security", master: true).status == 200)
        #expect(try await on.request("GET", "/security").status == 403)
    }

    // spec: SecurityCheck.spec.js: reports correct default syntax version 1.0.0
    /// Parse's report for Parse's checks: the test server's master key passes, client class creation (on by default)
    /// fails, with Parse's warning and solution.
    @Test func theReportHasParsesShape() async throws {
        let server = try TestServer(arguments: ["--security-check"])
        let report = try await server.request("GET", "/security", master: true).json
        #expect(report == [
            "report": [
                "version": "1.0.0", "state": "fail",
                "groups": [
                    ["name": "Parse Server Configuration", "state": "fail", "checks": [
                        ["title": "Secure master key", "state": "success"],
                        ["title": "Security log disabled", "state": "success"],
                        ["title": "Client class creation disabled", "state": "fail",
                         "warning": "Attackers are allowed to create new classes without restriction and flood the database.",
                         "solution": "Change Parse Server configuration to 'allowClientClassCreation: false'."],
                        ["title": "Users are created without public access", "state": "success"],
                    ]],
                    ["name": "Database", "state": "success", "checks": [["title": "Secure database password", "state": "success"]]],
                ],
            ],
        ], "\(report)")
        let strict = try TestServer(arguments: ["--security-check", "--no-allow-client-class-creation"])
        #expect(try await strict.request("GET", "/security", master: true).json["report"]?["state"] == "success")
    }

    // spec: SecurityCheck.spec.js: runs security checks on server start if enabled
    // spec: SecurityCheck.spec.js: does not run security checks on server start if disabled
    // spec: SecurityCheck.spec.js: logs report
    @Test func theReportIsLoggedAtStartOnlyWhenAsked() async throws {
        let logged = try TestServer(arguments: Self.weakKey + ["--security-check", "--security-check-log"])
        #expect(try await logged.logShows("check(s) skipped"))  // Log lines are written a moment later.
        let log = logged.log()
        #expect(log.contains("Parse Server Security Check") && log.contains("Warning: 3 weak security setting(s) found!"), "\(log)")
        for title in ["Secure master key", "Security log disabled", "Client class creation disabled"] {
            #expect(log.contains("❌ \(title)"), "\(title): \(log)")
        }
        for arguments in [["--security-check", "--no-security-check-log"], ["--no-security-check", "--no-security-check-log"],
                          ["--security-check-log"], []] {
            let quiet = try TestServer(arguments: arguments)
            _ = try await quiet.request("GET", "/health")
            #expect(try await quiet.logShows("GET /parse/health"))  // Logged after anything from the start.
            #expect(!quiet.log().contains("Security Check"), "\(arguments)")
        }
    }

    // spec: SecurityCheck.spec.js: throws on invalid configuration
    @Test func invalidSettingsAreRefused() throws {
        for value in ["a", "0.5", "[]"] {
            let attempt = try StartAttempt([], environment: ["ROOST_SECURITY_CHECK": value])
            #expect(!attempt.started && attempt.log.contains("invalid value for ROOST_SECURITY_CHECK"), "\(value): \(attempt.log)")
        }
    }

    // spec: SecurityCheck.spec.js: does update featuresRouter
    @Test func serverInfoTellsTheDashboard() async throws {
        let on = try TestServer(arguments: ["--security-check"])
        #expect(try await on.request("GET", "/serverInfo", master: true).json["features"]?["settings"]?["securityCheck"] == true)
        let off = try TestServer()
        #expect(try await off.request("GET", "/serverInfo", master: true).json["features"]?["settings"]?["securityCheck"] == false)
    }

    /// Parse's rule for secrets: 14 characters or more, and three kinds of characters of four.
    @Test func secretStrength() {
        #expect(!SecurityCheck.isComplex("Short1!"))
        #expect(!SecurityCheck.isComplex("alllowercaseletters"))
        #expect(!SecurityCheck.isComplex("lowercase123456"))
        #expect(SecurityCheck.isComplex("Lowercase123456"))
        #expect(SecurityCheck.isComplex("lowercase-12345"))
        #expect(SecurityCheck.isComplex(TestServer.masterKey))
        #expect(SecurityCheck.isComplex(String(repeating: "a1", count: 24)))  // A generated key: 48 hex digits.
        #expect(!SecurityCheck.isComplex(String(repeating: "a1", count: 15)))
    }
}
