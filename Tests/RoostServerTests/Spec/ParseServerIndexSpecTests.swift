import Foundation
import RoostCore
import Testing

/// Parse Server's spec/index.spec.js: what a running server shows of its options (Basic auth, `/serverInfo`,
/// `/health`, the master key's addresses), and the options it refuses to start with (flags here, where Parse's are
/// JavaScript options: the refusal is the same, its message the command line's). Not carried: adapters, middlewares
/// and the Express app (JavaScript's), push adapters (Roost has none).
@Suite struct ParseServerIndexSpecTests {
    private func basic(_ credentials: String) -> [String: String] {
        ["Authorization": "Basic " + Data(credentials.utf8).base64EncodedString()]
    }

    // spec: index.spec.js: support http basic authentication with masterkey
    // spec: index.spec.js: support http basic authentication with javascriptKey
    @Test func basicAuthenticationCarriesTheKeys() async throws {
        let server = try TestServer(arguments: ["--javascript-key", "js-key"])
        let master = try await server.request("GET", "/schemas", headers: basic("\(TestServer.applicationId):\(TestServer.masterKey)"),
                                              appId: false)
        #expect(master.status == 200, "\(master.text)")
        let javascript = try await server.request("GET", "/classes/TestObject",
                                                  headers: basic("\(TestServer.applicationId):javascript-key=js-key"), appId: false)
        #expect(javascript.status == 200, "\(javascript.text)")
        let wrong = try await server.request("GET", "/classes/TestObject",
                                             headers: basic("\(TestServer.applicationId):javascript-key=other"), appId: false)
        #expect(wrong.status == 403)
    }

    // spec-differs: index.spec.js: can report the server version -- the version of Parse Server whose REST API Roost speaks, not a package's
    // spec: index.spec.js: can properly sets the push support when not configured
    // spec: index.spec.js: can respond 200 on path health
    @Test func serverInfoAndHealth() async throws {
        let server = try TestServer()
        let info = try await server.request("GET", "/serverInfo", master: true)
        #expect(info.json["parseServerVersion"]?.stringValue == "8.0.0", "\(info.text)")
        #expect(info.json["features"]?["push"]?["immediatePush"] == false)
        #expect(info.json["features"]?["push"]?["scheduledPush"] == false)
        #expect(try await server.request("GET", "/health", appId: false).status == 200)
    }

    // spec: index.spec.js: should succeed if you provide valid ip in masterKeyIps
    // spec: index.spec.js: should set default masterKeyIps for IPv4 and IPv6 localhost
    @Test func masterKeyAddresses() async throws {
        let byDefault = try TestServer()
        #expect(try await byDefault.request("GET", "/schemas", master: true).status == 200)
        let listed = try TestServer(arguments: ["--master-key-ips", "127.0.0.1,::1,10.0.0.0/8,fd00::/8"])
        #expect(try await listed.request("GET", "/schemas", master: true).status == 200)
    }

    // spec-differs: index.spec.js: requires a master key and app id -- zero configuration: without them Roost uses the app id `roost` and makes a master key, kept in the data dir
    @Test func noKeysNeededToStart() throws {
        #expect(try StartAttempt([]).started)
    }

    // spec: index.spec.js: ignores the session length when expireInactiveSessions set to false
    @Test(arguments: ["-33", "0"])
    func aSessionLengthIsNotCheckedWhenSessionsDoNotExpire(length: String) throws {
        let attempt = try StartAttempt(["--session-length", length, "--no-expire-inactive-sessions"])
        #expect(attempt.started, "\(attempt.log)")
    }

    // spec-differs: index.spec.js: fails if the session length is not a number -- refused at start, with the command line's message
    // spec-differs: index.spec.js: fails if the session length is less than or equal to 0 -- refused at start, with the command line's message
    // spec-differs: index.spec.js: fails if default limit is negative -- refused at start, with the command line's message
    // spec-differs: index.spec.js: fails if default limit is wrong type -- refused at start, with the command line's message
    // spec-differs: index.spec.js: fails if default limit is zero -- refused at start, with the command line's message
    // spec-differs: index.spec.js: fails if maxLimit is negative -- refused at start, with the command line's message
    // spec-differs: index.spec.js: fails if you provides invalid ip in masterKeyIps -- refused at start, with the command line's message
    @Test(arguments: [["--session-length", "abc"], ["--session-length", "0"], ["--default-limit", "-1"], ["--default-limit", "abc"],
                      ["--default-limit", "0"], ["--max-limit", "-1"], ["--master-key-ips", "1.2.3.256"]])
    func badOptionsStopTheServer(arguments: [String]) throws {
        let attempt = try StartAttempt(arguments)
        #expect(!attempt.started, "the server started with \(arguments)")
        #expect(attempt.status != 0)
        // The flag and the value at fault named (a negative number too: not taken for a flag of its own).
        #expect(attempt.log.contains(arguments[0]) && attempt.log.contains(arguments[1]), "\(attempt.log)")
    }

    // spec-differs: index.spec.js: fails if you try to set revokeSessionOnPasswordReset to non-boolean -- a switch on the command line (`--no-revoke-session-on-password-reset`); its variable set to what is not a boolean stops the start, naming the variable and the value
    // spec-differs: index.spec.js: should throw when revokeSessionOnPasswordReset is invalid -- as above
    // spec-differs: index.spec.js: should throw when extendSessionOnUse is invalid -- as above (`--extend-session-on-use`)
    @Test(arguments: [("ROOST_REVOKE_SESSION_ON_PASSWORD_RESET", "non-bool"), ("ROOST_EXTEND_SESSION_ON_USE", "yolo")])
    func aSwitchVariableThatIsNoBooleanStopsTheServer(variable: String, value: String) throws {
        let attempt = try StartAttempt([], environment: [variable: value])
        #expect(!attempt.started)
        #expect(attempt.status != 0)
        #expect(attempt.log.contains(variable) && attempt.log.contains(value), "\(attempt.log)")
    }
}
