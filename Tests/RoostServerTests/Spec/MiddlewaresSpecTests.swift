import Foundation
import RoostCore
import Testing

/// Parse Server's spec/Middlewares.spec.js over HTTP: what `handleParseHeaders` and `allowCrossDomain` decide, seen
/// from a client (the spec calls them on fake requests). Not carried: `trustProxy`, `userFromJWT` and the maintenance
/// key (Express and Cloud Code internals). `allowOrigin` and `allowHeaders` are `--allow-origin` and `--allow-headers`.
@Suite struct MiddlewaresSpecTests {
    private func status(_ server: TestServer, headers: [String: String]) async throws -> Int {
        try await server.request("GET", "/classes/Thing", headers: headers).status
    }

    // spec: Middlewares.spec.js: should give invalid response when keys are configured but no key supplied
    // spec: Middlewares.spec.js: should give invalid response when keys are configured but supplied key is incorrect
    // spec: Middlewares.spec.js: should give invalid response when keys are configured but different key is supplied
    @Test func aConfiguredKeyMustBeSupplied() async throws {
        let server = try TestServer(arguments: ["--rest-api-key", "restAPIKey"])
        let refused = try await server.request("GET", "/classes/Thing")
        #expect(refused.status == 403 && refused.json == ["error": "unauthorized"], "\(refused.text)")
        #expect(try await status(server, headers: ["X-Parse-REST-API-Key": "wrongKey"]) == 403)
        #expect(try await status(server, headers: ["X-Parse-Client-Key": "clientKey"]) == 403)
    }

    // spec: Middlewares.spec.js: should succeed when any one of the configured keys supplied
    // spec: Middlewares.spec.js: should succeed when no keys are configured and none supplied
    @Test func anyConfiguredKeyLetsTheRequestIn() async throws {
        let server = try TestServer(arguments: ["--client-key", "clientKey", "--rest-api-key", "restAPIKey"])
        #expect(try await status(server, headers: ["X-Parse-REST-API-Key": "restAPIKey"]) == 200)
        #expect(try await status(server, headers: ["X-Parse-Client-Key": "clientKey"]) == 200)
        let open = try TestServer()
        #expect(try await status(open, headers: [:]) == 200)
    }

    // spec: Middlewares.spec.js: it should pull _SessionToken into req.info
    // spec: Middlewares.spec.js: it should pull _MasterKey into req.info
    // spec: Middlewares.spec.js: it should pull _InstallationId into req.info
    @Test func keysInTheBodyAreTheRequestsKeys() async throws {
        let server = try TestServer(arguments: fastHashing)
        let signUp = try await server.request("POST", "/users", json: ["_ApplicationId": .string(TestServer.applicationId),
                                                                      "_InstallationId": "install-1", "_method": "POST",
                                                                      "username": "bob", "password": "pw"], appId: false)
        let token = try #require(signUp.json["sessionToken"]?.stringValue, "\(signUp.text)")
        // The installation id went with the sign-up: its session carries it.
        let session = try await server.request("POST", "/sessions/me", json: ["_ApplicationId": .string(TestServer.applicationId),
                                                                              "_SessionToken": .string(token), "_method": "GET"],
                                               appId: false)
        #expect(session.json["installationId"] == "install-1", "\(session.text)")
        // The master key from the body: a master-only route answers.
        let schemas = try await server.request("POST", "/schemas", json: ["_ApplicationId": .string(TestServer.applicationId),
                                                                         "_MasterKey": .string(TestServer.masterKey), "_method": "GET"],
                                               appId: false)
        #expect(schemas.status == 200 && schemas.json["results"] != nil, "\(schemas.text)")
    }

    // spec: Middlewares.spec.js: should not succeed and log if the ip does not belong to masterKeyIps list
    // spec: Middlewares.spec.js: should succeed if the ip does belong to masterKeyIps list
    // spec: Middlewares.spec.js: should allow any ip to use masterKey if masterKeyIps is empty
    @Test func theMasterKeyOnlyFromListedAddresses() async throws {
        let outside = try TestServer(arguments: ["--master-key-ips", "10.0.0.1"])
        let refused = try await outside.request("GET", "/schemas", master: true)
        #expect(refused.status == 403 && refused.json == ["error": "unauthorized"], "\(refused.text)")
        #expect(try await outside.logShows(
            "Request using master key rejected as the request IP address '127.0.0.1' is not set in --master-key-ips."))
        #expect(!outside.log().contains(TestServer.masterKey))
        for listed in ["127.0.0.1", "0.0.0.0/0"] {
            let inside = try TestServer(arguments: ["--master-key-ips", listed])
            #expect(try await inside.request("GET", "/schemas", master: true).status == 200, "\(listed)")
        }
    }

    // spec: Middlewares.spec.js: should properly expose the headers
    // spec: Middlewares.spec.js: should set default Access-Control-Allow-Headers if allowHeaders are empty
    // spec: Middlewares.spec.js: should set default Access-Control-Allow-Origin if allowOrigin is empty
    @Test func corsHeadersAreParsesDefaults() async throws {
        let server = try TestServer()
        let response = try await server.request("GET", "/classes/Thing")
        let cors = response.headers.filter { $0.key.lowercased().hasPrefix("access-control-") }
        func header(_ name: String) -> String? { cors.first { $0.key.lowercased() == name.lowercased() }?.value }
        #expect(cors.count == 4, "\(cors)")
        #expect(header("Access-Control-Expose-Headers") == "X-Parse-Job-Status-Id, X-Parse-Push-Status-Id")
        #expect(header("Access-Control-Allow-Origin") == "*")
        #expect(header("Access-Control-Allow-Headers")?.contains(
            "X-Parse-Master-Key, X-Parse-REST-API-Key, X-Parse-Javascript-Key, X-Parse-Application-Id, X-Parse-Client-Version, "
            + "X-Parse-Session-Token, X-Requested-With, X-Parse-Revocable-Session, X-Parse-Request-Id, Content-Type, Pragma, "
            + "Cache-Control") == true)
    }

    private func corsHeader(_ response: TestResponse, _ name: String) -> String? {
        response.headers.first { $0.key.lowercased() == name.lowercased() }?.value
    }

    // spec: Middlewares.spec.js: should append custom headers to Access-Control-Allow-Headers if allowHeaders provided
    @Test func allowHeadersAreAddedToParsesList() async throws {
        let server = try TestServer(arguments: ["--allow-headers", "Header-1, Header-2"])
        for method in ["GET", "OPTIONS"] {
            let allowed = corsHeader(try await server.request(method, "/classes/Thing"), "Access-Control-Allow-Headers") ?? ""
            #expect(allowed.hasPrefix("X-Parse-Master-Key, ") && allowed.hasSuffix("Cache-Control, Header-1, Header-2"), "\(method): \(allowed)")
        }
    }

    // spec: Middlewares.spec.js: should set custom origin to Access-Control-Allow-Origin if allowOrigin is provided
    @Test func oneAllowedOriginIsAlwaysTheAnswer() async throws {
        let server = try TestServer(environment: ["ROOST_ALLOW_ORIGIN": "https://parseplatform.org/"])
        for origin in [nil, "https://parseplatform.org/", "https://elsewhere.example"] {
            let response = try await server.request("GET", "/classes/Thing", headers: origin.map { ["Origin": $0] } ?? [:])
            #expect(corsHeader(response, "Access-Control-Allow-Origin") == "https://parseplatform.org/", "\(String(describing: origin))")
            #expect(corsHeader(response, "Vary") == nil)
        }
    }

    // spec: Middlewares.spec.js: should support multiple origins if several are defined in allowOrigin as an array
    /// Several origins: the request's own when listed, else the first, on answers, preflights and errors alike; and
    /// `Vary: Origin` (not sent by Parse), so a shared cache does not hand one origin's answer to another.
    @Test func severalAllowedOriginsAnswerTheRequestsOwn() async throws {
        let server = try TestServer(arguments: ["--allow-origin", "https://a.com,https://b.com, https://c.com"])
        for (origin, expected) in [("https://a.com", "https://a.com"), ("https://b.com", "https://b.com"),
                                   ("https://c.com", "https://c.com"), ("https://unauthorized.com", "https://a.com")] {
            for (method, path) in [("GET", "/classes/Thing"), ("OPTIONS", "/classes/Thing"), ("GET", "/classes/_Nope")] {
                let response = try await server.request(method, path, headers: ["Origin": origin])
                #expect(corsHeader(response, "Access-Control-Allow-Origin") == expected, "\(origin) \(method) \(path)")
                #expect(corsHeader(response, "Vary") == "Origin")
            }
        }
        #expect(corsHeader(try await server.request("GET", "/classes/Thing"), "Access-Control-Allow-Origin") == "https://a.com")
    }

    /// A value that could not be sent as a header (a line break would start a header of the client's choosing) or is no
    /// header name stops the start, naming the flag or variable and the entry.
    @Test func anOriginOrHeaderThatIsNoHeaderValueStopsTheStart() throws {
        let badOrigin = try StartAttempt(["--allow-origin", "https://a.com,https://b.com\r\nSet-Cookie: x=1"])
        #expect(!badOrigin.started && badOrigin.log.contains("--allow-origin"), "\(badOrigin.log)")
        let badHeader = try StartAttempt([], environment: ["ROOST_ALLOW_HEADERS": "X-Good, Bad Header"])
        #expect(!badHeader.started && badHeader.log.contains("ROOST_ALLOW_HEADERS") && badHeader.log.contains("'Bad Header'"),
                "\(badHeader.log)")
    }

    // spec: Middlewares.spec.js: should give invalid response when upload file without x-parse-application-id in header
    @Test func aFileUploadWithoutTheApplicationIdIsRefused() async throws {
        let server = try TestServer()
        let upload = try await server.request("POST", "/files/fake.txt", body: Data("fake-file".utf8),
                                              headers: ["Content-Type": "text/plain"], appId: false)
        #expect(upload.status == 403, "\(upload.text)")
    }
}
