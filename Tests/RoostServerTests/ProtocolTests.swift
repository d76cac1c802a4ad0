import Foundation
import RoostCore
import Testing

/// Wire-level behaviour: the JS SDK request form, CORS, health, client keys, Location, dates,
/// typed values, update responses, and what reaches the log.
@Suite struct ProtocolTests {
    /// A JS SDK call: a POST with a `text/plain` JSON body carrying the keys, and no app id header.
    func sdkCall(_ server: TestServer, _ path: String, _ body: JSON, contentType: String = "text/plain") async throws -> TestResponse {
        try await server.request("POST", path, json: body, headers: ["Content-Type": contentType], appId: false)
    }

    @Test func javaScriptSDKForm() async throws {
        let server = try TestServer()
        let app = JSON.string(TestServer.applicationId)
        let created = try await sdkCall(server, "/classes/Game", [
            "_ApplicationId": app, "_ClientVersion": "js5.0.0", "_InstallationId": "inst-1", "score": 1,
        ])
        #expect(created.status == 201)
        let id = try #require(created.json["objectId"]?.stringValue)
        let stored = try await server.fetch("Game", id)
        #expect(stored.objectValue?.keys.sorted() == ["createdAt", "objectId", "score", "updatedAt"])

        let found = try await sdkCall(server, "/classes/Game", [
            "_method": "GET", "_ApplicationId": app, "where": ["score": 1], "count": 1, "limit": 10,
        ])
        #expect(found.status == 200)
        #expect(found.json["count"] == 1)
        #expect(found.json["results"]?.arrayValue?.map { $0["objectId"] } == [.string(id)])

        let fetched = try await sdkCall(server, "/classes/Game/\(id)", ["_method": "GET", "_ApplicationId": app])
        #expect(fetched.json == stored)
        let updated = try await sdkCall(server, "/classes/Game/\(id)", [
            "_method": "PUT", "_ApplicationId": app, "score": ["__op": "Increment", "amount": 2],
        ], contentType: "application/octet-stream")
        #expect(updated.status == 200)
        #expect(updated.json["score"] == 3)
        let schemas = try await sdkCall(server, "/schemas", [
            "_method": "GET", "_ApplicationId": app, "_MasterKey": .string(TestServer.masterKey),
        ])
        #expect(schemas.status == 200)
        let classes = schemas.json["results"]?.arrayValue?.compactMap { $0["className"]?.stringValue }
        #expect(classes?.sorted() == ["Game", "_Role", "_User"])
        let notMaster = try await sdkCall(server, "/schemas", ["_method": "GET", "_ApplicationId": app])
        #expect(notMaster.json == ["error": "unauthorized: master key is required"])
        let wrongApp = try await sdkCall(server, "/classes/Game", ["_method": "GET", "_ApplicationId": "other"])
        #expect(wrongApp.status == 403)
        #expect(wrongApp.json == ["error": "unauthorized"])
        // The body's id beside a master key header: taken only when that key is right (Parse's `handleParseHeaders`).
        for (key, status) in [("wrong", 403), (TestServer.masterKey, 200)] {
            let beside = try await server.request("POST", "/classes/Game", json: ["_method": "GET", "_ApplicationId": app],
                                                  headers: ["Content-Type": "text/plain", "X-Parse-Master-Key": key], appId: false)
            #expect(beside.status == status, "\(key): \(beside.text)")
        }
        let deleted = try await sdkCall(server, "/classes/Game/\(id)", ["_method": "DELETE", "_ApplicationId": app])
        #expect(deleted.status == 200)
        #expect(deleted.json == [:])
        #expect(try await server.fetch("Game", id) == .null)
    }

    @Test func jsonBodiesAreReadWhateverTheContentType() async throws {
        let server = try TestServer()
        // The Unity SDK's `_noBody` marker is dropped from every body, with the keys in headers too (Parse's middleware).
        let marked = try await server.request("POST", "/classes/Marked", json: ["_noBody": true, "score": 3])
        #expect(marked.status == 201, "\(marked.text)")
        for type in ["text/plain", "application/x-www-form-urlencoded", "application/octet-stream", "text/html; charset=utf-8"] {
            let response = try await server.request("POST", "/classes/Game", json: ["score": 1], headers: ["Content-Type": type])
            #expect(response.status == 201, "\(type)")
        }
        #expect(try await server.results("Game").count == 4)
    }

    @Test func corsHeadersOnEveryResponseAndPreflight() async throws {
        let server = try TestServer()
        let responses = [
            try await server.request("POST", "/classes/Game", json: ["score": 1]),
            try await server.request("GET", "/classes/Game"),
            try await server.request("GET", "/classes/Game/missing000"),
            try await server.request("GET", "/classes/Game", appId: false),
            try await server.request("GET", "/schemas"),
            try await server.request("POST", "/classes/Game", body: Data("{".utf8)),
            try await server.request("GET", "/health", appId: false),
            try await server.request("OPTIONS", "/classes/Game", appId: false),
            try await server.request("OPTIONS", "/classes/Game/abc", headers: [
                "Origin": "http://example.com", "Access-Control-Request-Method": "PUT",
                "Access-Control-Request-Headers": "X-Parse-Application-Id, Content-Type",
            ], appId: false),
        ]
        #expect(responses.map(\.status) == [201, 200, 404, 403, 403, 400, 200, 200, 200])
        #expect(responses[7].text == "OK" && responses[7].headers["content-type"] == "text/plain; charset=utf-8")
        for response in responses {
            #expect(response.headers["access-control-allow-origin"] == "*")
            #expect(response.headers["access-control-allow-methods"] == "GET,PUT,POST,DELETE,OPTIONS")
            // Parse Server's `DEFAULT_ALLOWED_HEADERS`, word for word.
            #expect(response.headers["access-control-allow-headers"] == """
                X-Parse-Master-Key, X-Parse-REST-API-Key, X-Parse-Javascript-Key, X-Parse-Application-Id, \
                X-Parse-Client-Version, X-Parse-Session-Token, X-Requested-With, X-Parse-Revocable-Session, \
                X-Parse-Request-Id, Content-Type, Pragma, Cache-Control
                """)
            #expect(response.headers["access-control-expose-headers"] == "X-Parse-Job-Status-Id, X-Parse-Push-Status-Id")
        }
    }

    /// A client can tell its own reply from one a middlebox substituted: the request id comes back,
    /// on a first reply, on a replayed one and on an error.
    @Test func requestIdIsEchoedOnReplies() async throws {
        let server = try TestServer()
        let first = try await server.request("POST", "/classes/Echo", json: ["n": 1], headers: ["X-Parse-Request-Id": "echo-1"])
        let replay = try await server.request("POST", "/classes/Echo", json: ["n": 1], headers: ["X-Parse-Request-Id": "echo-1"])
        let refused = try await server.request("POST", "/classes/Echo", json: ["n": "text"], headers: ["X-Parse-Request-Id": "echo-2"])
        #expect(first.status == 201 && first.headers["x-parse-request-id"] == "echo-1")
        #expect(replay.json == first.json && replay.headers["x-parse-request-id"] == "echo-1")
        #expect(refused.status == 400 && refused.headers["x-parse-request-id"] == "echo-2")
        #expect(try await server.request("GET", "/classes/Echo").headers["x-parse-request-id"] == nil)
    }

    @Test func healthNeedsNoKeys() async throws {
        let server = try TestServer(arguments: ["--rest-api-key", "rest-key-123"])
        for appId in [false, true] {
            let health = try await server.request("GET", "/health", appId: appId)
            #expect(health.status == 200)
            #expect(health.json == ["status": "ok"])
            #expect(health.headers["content-type"]?.hasPrefix("application/json") == true)
        }
    }

    /// The Users guide: "master-level authentication using HTTP Basic Auth, passing the application id
    /// as the username and the master key as the password".
    @Test func basicAuthCarriesTheAppIdAndMasterKey() async throws {
        let server = try TestServer()
        func basic(_ text: String) -> [String: String] { ["Authorization": "Basic " + Base64.encode(Array(text.utf8))] }
        let asMaster = try await server.request("GET", "/schemas", headers: basic("\(TestServer.applicationId):\(TestServer.masterKey)"), appId: false)
        #expect(asMaster.status == 200, "\(asMaster.text)")
        #expect(asMaster.json["results"] != nil)
        let wrongKey = try await server.request("GET", "/schemas", headers: basic("\(TestServer.applicationId):not-the-key"), appId: false)
        #expect(wrongKey.status == 403)
        #expect(wrongKey.json == ["error": "unauthorized: master key is required"])
        let wrongApp = try await server.request("GET", "/classes/Game", headers: basic("other-app:\(TestServer.masterKey)"), appId: false)
        #expect(wrongApp.status == 403)
        #expect(wrongApp.json == ["error": "unauthorized"])
        let jsKey = try await server.request("GET", "/classes/Game", headers: basic("\(TestServer.applicationId):javascript-key=js"), appId: false)
        #expect(jsKey.status == 200)
    }

    @Test func restAPIKeyIsEnforcedWhenConfigured() async throws {
        let server = try TestServer(arguments: ["--rest-api-key", "rest-key-123"])
        let missing = try await server.request("POST", "/classes/Game", json: ["score": 1])
        #expect(missing.status == 403)
        #expect(missing.json == ["error": "unauthorized"])
        let wrong = try await server.request("GET", "/classes/Game", headers: ["X-Parse-REST-API-Key": "nope"])
        #expect(wrong.status == 403)
        #expect(wrong.json == ["error": "unauthorized"])
        let right = try await server.request("POST", "/classes/Game", json: ["score": 1], headers: ["X-Parse-REST-API-Key": "rest-key-123"])
        #expect(right.status == 201)
        // The master key works without the client key.
        let master = try await server.request("GET", "/classes/Game", master: true)
        #expect(master.status == 200)
        #expect(master.json["results"]?.arrayValue?.count == 1)

        // Without the option, no client key is needed and a stray one is ignored.
        let open = try TestServer()
        #expect(try await open.request("POST", "/classes/Game", json: ["a": 1]).status == 201)
        #expect(try await open.request("GET", "/classes/Game", headers: ["X-Parse-REST-API-Key": "anything"]).status == 200)
    }

    /// Parse's other client keys: any one configured key, in its own header (the JS SDK's `_JavaScriptKey` in the body,
    /// or Basic auth's `javascript-key=`), lets a request in; so Parse Dashboard's SDK calls work with a JavaScript key.
    @Test func clientJavaScriptAndDotNetKeysAreEachEnforcedInTheirOwnHeader() async throws {
        let server = try TestServer(arguments: ["--rest-api-key", "rest-key", "--client-key", "client-key", "--javascript-key", "js-key",
                                                "--dotnet-key", "dotnet-key"])
        for (header, key) in [("X-Parse-REST-API-Key", "rest-key"), ("X-Parse-Client-Key", "client-key"),
                              ("X-Parse-Javascript-Key", "js-key"), ("X-Parse-Windows-Key", "dotnet-key")] {
            #expect(try await server.request("GET", "/classes/Game", headers: [header: key]).status == 200, "\(header)")
            #expect(try await server.request("GET", "/classes/Game", headers: [header: "wrong"]).status == 403, "\(header)")
        }
        #expect(try await server.request("GET", "/classes/Game", headers: ["X-Parse-Client-Key": "js-key"]).status == 403)
        // The JS SDK: keys in a text/plain body.
        let sdk = try await server.request("POST", "/classes/Game", json: ["_method": "GET", "_ApplicationId": .string(TestServer.applicationId),
                                                                        "_JavaScriptKey": "js-key"],
                                           headers: ["Content-Type": "text/plain"], appId: false)
        #expect(sdk.status == 200 && sdk.json == ["results": []], "\(sdk.text)")
        let basic = ["Authorization": "Basic " + Base64.encode(Array("\(TestServer.applicationId):javascript-key=js-key".utf8))]
        #expect(try await server.request("GET", "/classes/Game", headers: basic, appId: false).status == 200)
        let onlyJavaScript = try TestServer(arguments: ["--javascript-key", "js-key"])
        #expect(try await onlyJavaScript.request("GET", "/classes/Game").status == 403)
        #expect(try await onlyJavaScript.request("GET", "/classes/Game", headers: ["X-Parse-Javascript-Key": "js-key"]).status == 200)
    }

    /// Parse compares each key header with its own option: the REST API key travels only in `X-Parse-REST-API-Key`.
    @Test func restAPIKeyIsNotAcceptedInOtherKeyHeaders() async throws {
        let server = try TestServer(arguments: ["--rest-api-key", "rest-key-123"])
        for header in ["X-Parse-Client-Key", "X-Parse-Javascript-Key", "X-Parse-Windows-Key"] {
            let response = try await server.request("GET", "/classes/Game", headers: [header: "rest-key-123"])
            #expect(response.status == 403, "\(header)")
        }
    }

    @Test func createAnswersWithLocationAndParseDates() async throws {
        let server = try TestServer()
        let created = try await server.request("POST", "/classes/Game", json: ["score": 1])
        #expect(created.status == 201)
        let id = try #require(created.json["objectId"]?.stringValue)
        #expect(created.headers["location"] == "http://127.0.0.1:\(server.port)/parse/classes/Game/\(id)")
        let createdAt = try #require(created.json["createdAt"]?.stringValue)
        #expect(isParseISODate(createdAt))
        let fetched = try await server.fetch("Game", id)
        #expect(fetched["createdAt"] == .string(createdAt))
        #expect(fetched["updatedAt"] == .string(createdAt))

        let updated = try await server.request("PUT", "/classes/Game/\(id)", json: ["score": 2])
        let updatedAt = try #require(updated.json["updatedAt"]?.stringValue)
        #expect(isParseISODate(updatedAt))
        #expect(updatedAt >= createdAt)
        #expect(updated.headers["location"] == nil)
        let refetched = try await server.fetch("Game", id)
        #expect(refetched["updatedAt"] == .string(updatedAt))
        #expect(refetched["createdAt"] == .string(createdAt))

        // Client Dates for the built-in dates are ignored (any other type is refused: `RestSpecTests`).
        let spoofed = try await server.request("POST", "/classes/Game", json: [
            "score": 3, "createdAt": ["__type": "Date", "iso": "2000-01-01T00:00:00.000Z"],
            "updatedAt": ["__type": "Date", "iso": "2000-01-01T00:00:00.000Z"],
        ])
        #expect(spoofed.status == 201, "\(spoofed.text)")
        #expect(spoofed.json["createdAt"] != "2000-01-01T00:00:00.000Z")
    }

    @Test func objectIdsAreTenRandomAlphanumerics() async throws {
        let server = try TestServer()
        let ids = try await server.createAll("Game", (0..<200).map { ["n": .number(Double($0))] })
        #expect(Set(ids).count == 200)
        for id in ids {
            #expect(id.count == 10)
            #expect(id.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) })
        }
    }

    @Test func typedValuesRoundTrip() async throws {
        let server = try TestServer()
        let values: [String: JSON] = [
            "when": date("2026-11-22T10:00:00.123Z"), "old": date("1901-02-03T04:05:06.789Z"),
            "blob": ["__type": "Bytes", "base64": "aGVsbG8gd29ybGQ="],
            "place": ["__type": "GeoPoint", "latitude": 40.7128, "longitude": -74.006],
            "owner": pointer("Player", "p000000001"),
            "list": [date("2026-01-01T00:00:00.000Z"), pointer("Player", "p000000002"), 1, "x", nil],
            "nested": ["at": date("2026-02-02T00:00:00.000Z"), "deep": ["n": 1.25]],
            "big": 9_007_199_254_740_991, "fraction": 0.1, "negative": -42, "flag": false, "text": "é \" \\ 😀",
        ]
        let id = try await server.create("Typed", .object(values))
        let fetched = try await server.fetch("Typed", id)
        for (key, value) in values { #expect(fetched[key] == value, "\(key)") }
        // Exact digits in the body (PostgreSQL's jsonb writes a space after the colon).
        let body = try await server.request("GET", "/classes/Typed/\(id)").text
        #expect(body.contains(#""big":9007199254740991"#) || (TestServer.onPostgres && body.contains(#""big": 9007199254740991"#)))

        // Dates are normalised to UTC with three fraction digits.
        let offset = try await server.create("Typed", ["when": date("2026-11-22T12:00:00+02:00")])
        #expect(try await server.fetch("Typed", offset)["when"] == date("2026-11-22T10:00:00.000Z"))
        let bad = try await server.request("POST", "/classes/Typed", json: ["place": ["__type": "GeoPoint", "latitude": 91, "longitude": 0]])
        #expect(bad.status == 400)
    }

    /// Cloud Code's context must be an object, as Parse's `handleParseHeaders` checks, even with no Cloud Code to read it.
    @Test func aCloudContextMustBeAnObject() async throws {
        let server = try TestServer()
        let malformed: JSON = ["code": 107, "error": "Invalid object for context."]
        let good = try await server.request("GET", "/classes/Game", headers: ["X-Parse-Cloud-Context": #"{"source":"cli"}"#])
        #expect(good.status == 200)
        for header in ["[1]", "not json", "null", "5"] {
            let bad = try await server.request("GET", "/classes/Game", headers: ["X-Parse-Cloud-Context": header])
            #expect(bad.status == 400 && bad.json == malformed, "\(header)")
        }
        let app = JSON.string(TestServer.applicationId)
        for context: JSON in [["source": "js"], #"{"source":"js"}"#, [1], nil, ""] {
            let call = try await sdkCall(server, "/classes/Game", ["_method": "GET", "_ApplicationId": app, "_context": context])
            #expect(call.status == 200, "\(context.jsonText)")
        }
        for context: JSON in ["[1]", "text", 5, true] {
            let call = try await sdkCall(server, "/classes/Game", ["_method": "GET", "_ApplicationId": app, "_context": context])
            #expect(call.status == 400 && call.json == malformed, "\(context.jsonText)")
        }
    }

    @Test func updateResponseEchoesOperationResultsOnly() async throws {
        let server = try TestServer()
        let id = try await server.create("Game", [
            "n": 1, "tags": ["a", "b", "a"], "uniq": [1], "rm": ["a", "b", "a"], "title": "t", "gone": "x",
        ])
        let updated = try await server.request("PUT", "/classes/Game/\(id)", json: [
            "n": ["__op": "Increment", "amount": 2], "tags": ["__op": "Add", "objects": ["c"]],
            "uniq": ["__op": "AddUnique", "objects": [1, 2, 2]], "rm": ["__op": "Remove", "objects": ["a"]],
            "title": "plain set", "gone": ["__op": "Delete"],
        ])
        #expect(updated.status == 200)
        #expect(updated.json.objectValue?.keys.sorted() == ["n", "rm", "tags", "uniq", "updatedAt"])
        #expect(updated.json["n"] == 3)
        #expect(updated.json["tags"] == ["a", "b", "a", "c"])
        #expect(updated.json["uniq"] == [1, 2])
        #expect(updated.json["rm"] == ["b"])
        let fetched = try await server.fetch("Game", id)
        #expect(fetched["title"] == "plain set")
        #expect(fetched["gone"] == nil)
        #expect(fetched["n"] == 3)

        // On create, operations are flattened and their results answered, as Parse's `_sanitizeDatabaseResult` answers
        // them (not a Delete's).
        let created = try await server.request("POST", "/classes/Game", json: [
            "n": ["__op": "Increment", "amount": 5], "tags": ["__op": "Add", "objects": ["x"]],
            "rm": ["__op": "Remove", "objects": ["x"]], "gone": ["__op": "Delete"],
            "uniq": ["__op": "AddUnique", "objects": [1, 1]],
        ])
        #expect(created.json.objectValue?.keys.sorted() == ["createdAt", "n", "objectId", "rm", "tags", "uniq"], "\(created.text)")
        #expect(created.json["n"] == 5 && created.json["tags"] == ["x"] && created.json["rm"] == [] && created.json["uniq"] == [1, 1])
        let flat = try await server.fetch("Game", try #require(created.json["objectId"]?.stringValue))
        #expect(flat["n"] == 5)
        #expect(flat["tags"] == ["x"])
        #expect(flat["rm"] == [])
        #expect(flat["gone"] == nil)
        #expect(flat["uniq"] == [1, 1])  // Flattened as given, as Parse does: AddUnique de-duplicates only against stored values.
    }

    @Test func secretsNeverReachTheLog() async throws {
        let server = try TestServer(arguments: ["--rest-api-key", "rest-key-secret-456"])
        let rest = ["X-Parse-REST-API-Key": "rest-key-secret-456"]
        _ = try await server.request("POST", "/classes/Game", json: ["score": 1], headers: rest, master: true)
        // An unknown session token fails the request (209); it must not be logged either.
        var withToken = rest
        withToken["X-Parse-Session-Token"] = "r:session-token-secret-789"
        let refused = try await server.request("GET", "/classes/Game", headers: withToken)
        #expect(refused.code == 209)
        _ = try await server.request("GET", "/schemas", headers: rest, master: true)
        _ = try await server.request("GET", "/classes/Game", headers: rest, master: true,
                                     query: ["where": #"{"password":"hunter2-secret"}"#])
        _ = try await server.request("GET", "/login", headers: rest, query: ["username": "u", "password": "hunter2-secret"])
        _ = try await server.request("POST", "/classes/Game", json: [
            "_method": "GET", "_ApplicationId": .string(TestServer.applicationId), "_MasterKey": .string(TestServer.masterKey),
            "_JavaScriptKey": "rest-key-secret-456",
        ], headers: ["Content-Type": "text/plain"], appId: false)
        _ = try await server.request("GET", "/classes/Game", headers: ["X-Parse-Master-Key": TestServer.masterKey + "x"])
        _ = try await server.request("POST", "/classes/Game", body: Data(#"{"oops":"# .utf8), headers: rest, master: true)
        #expect(server.stop() == 0)
        let log = server.log()
        #expect(log.contains("POST /parse/classes/Game 201"))
        for secret in [TestServer.masterKey, "rest-key-secret-456", "session-token-secret-789", "hunter2-secret"] {
            #expect(!log.contains(secret), "\(secret) appears in the log")
        }
    }
}
