import Foundation
import RoostCore
import Testing

/// More of Parse Server's spec/vulnerabilities.spec.js (see `VulnerabilitiesSpecTests`).
///
/// - A user whose objectId is `role:<name>` cannot be made over REST (`VulnerabilitiesSpecTests`); the spec writes one
///   straight into the database. Here `roost import` loads one from an edited export, as a crafted or corrupted
///   export would; its session must then be refused as Parse refuses it (500, code 1 "Invalid object ID."), or it
///   would hold the role `<name>`'s read and write access. SQLite only (an import into a data directory).
/// - The custom `requestKeywordDenylist` cases start the server with `--request-keyword-denylist <JSON array>`
///   (Parse's option, whole, replacing the default list); a string is matched as an unanchored regular expression.
/// - "sanitizes the regex correctly to prevent Injection" sends `where` in Express's bracket notation
///   (`where[username][$regex]=...`), which Parse's query-string parser (`qs`) turns into the `where` object.
@Suite struct VulnerabilitiesRESTSpecTests {
    private func refused(_ keyword: String) -> String { "Prohibited keyword in request data: \(keyword)." }

    /// A server with Parse's `requestKeywordDenylist` set to `denylist`.
    private func server(denylist: JSON) throws -> TestServer {
        try TestServer(arguments: ["--request-keyword-denylist", denylist.jsonText])
    }


    // spec: vulnerabilities.spec.js: refuses session token of user with poisoned object ID
    @Test func aSessionOfAUserWithARoleLikeObjectIdIsRefused() async throws {
        let source = try TestServer(arguments: fastHashing, onPostgres: false)
        let poisoned = try await source.signUpAccount("poisoned")
        let innocent = try await source.signUpAccount("innocent")
        let exported = CommandLineTests.freshPath() + ".jsonl"
        let edited = CommandLineTests.freshPath() + ".jsonl"
        defer { unlink(exported); unlink(edited) }
        let exporting = try TransferCommandTests.roost(["export", "--data-dir", source.dataDirectory.path, "--out", exported])
        #expect(exporting.status == 0, "\(exporting.output)")
        // The user's id everywhere it appears (its object, its ACL, its password and session records) becomes `role:abc`.
        let text = try String(contentsOfFile: exported, encoding: .utf8)
        try text.replacingOccurrences(of: poisoned.id, with: "role:abc").write(toFile: edited, atomically: true, encoding: .utf8)
        let target = URL(fileURLWithPath: CommandLineTests.freshPath())
        let imported = try TransferCommandTests.roost(["import", "--data-dir", target.path, edited])
        try #require(imported.status == 0, "\(imported.output)")
        let copy = try TestServer(arguments: fastHashing, dataDirectory: target, onPostgres: false)
        let asPoisoned = try await copy.query("_User", token: poisoned.token)
        #expect(asPoisoned.status == 500, "\(asPoisoned.status) \(asPoisoned.text)")
        #expect(asPoisoned.json == ["code": 1, "error": "Invalid object ID."], "\(asPoisoned.text)")
        let served = try await copy.query("_User", token: innocent.token)
        #expect(served.status == 200, "\(served.text)")
    }

    // spec: vulnerabilities.spec.js: denies write request with custom denylist of key/value
    // spec: vulnerabilities.spec.js: denies write request with custom denylist of nested key/value
    // spec: vulnerabilities.spec.js: denies write request with custom denylist of key/value in array
    @Test func aCustomKeyValueEntryIsMatchedAsPatternsAtAnyDepth() async throws {
        let s = try server(denylist: [["key": "a[K]ey", "value": "aValue[123]*"]])
        let entry = #"{"key":"a[K]ey","value":"aValue[123]*"}"#
        let data: JSON = ["aKey": "aValue321", "code": "delete Object.prototype.evalFunctions"]
        for body: JSON in [["obj": data], ["obj": ["nested": data]], ["obj": [data]]] {
            expectError(try await s.request("POST", "/classes/RCE", json: body, headers: ["X-Parse-REST-API-Key": "rest"]), 105, refused(entry))
        }
        // The list replaces Parse's default one.
        #expect(try await s.request("POST", "/classes/RCE", json: ["obj": ["constructor": 1]]).status == 201)
    }

    // spec: vulnerabilities.spec.js: denies write request with custom denylist of key
    @Test func aCustomKeyEntryIsMatchedAsAPattern() async throws {
        let s = try server(denylist: [["key": "a[K]ey"]])
        let body: JSON = ["obj": ["aKey": "aValue321", "code": "delete Object.prototype.evalFunctions"]]
        expectError(try await s.request("POST", "/classes/RCE", json: body), 105, refused(#"{"key":"a[K]ey"}"#))
    }

    // spec: vulnerabilities.spec.js: denies write request with custom denylist of value
    @Test func aCustomValueEntryIsMatchedAsAPattern() async throws {
        let s = try server(denylist: [["value": "aValue[123]*"]])
        let body: JSON = ["obj": ["aKey": "aValue321", "code": "delete Object.prototype.evalFunctions"]]
        expectError(try await s.request("POST", "/classes/RCE", json: body), 105, refused(#"{"value":"aValue[123]*"}"#))
    }

    // spec: vulnerabilities.spec.js: ignores write request that contains only fraction of denied keyword
    /// (`VulnerabilitiesSpecTests` does the same writes under the default list.)
    @Test func aKeyPathIsNotMatchedAsItsJoinedLetters() async throws {
        let s = try server(denylist: [["key": "abc"]])
        let id = try await s.create("TestObject", ["a": ["b": ["c": 0]]])
        let incremented = try await s.request("PUT", "/classes/TestObject/\(id)", json: ["a.b.c": ["__op": "Increment", "amount": 1]])
        #expect(incremented.status == 200, "\(incremented.text)")
        #expect(try await s.fetch("TestObject", id)["a"] == ["b": ["c": 1]])
    }


    // spec: vulnerabilities.spec.js: sanitizes the regex correctly to prevent Injection
    @Test func aBracketNotationRegexIsAQueryLikeAnother() async throws {
        let s = try TestServer(arguments: fastHashing)
        let signedUp = try await s.request("POST", "/users", json: ["username": "username", "password": "password", "email": "email@example.com"])
        #expect(signedUp.status == 201, "\(signedUp.text)")
        // Written out by hand: the target must reach the server byte for byte (`[`, `]`, `'` and `+` as they are).
        let started = Date()
        let (head, body) = try RawConnection(port: s.port).exchange(
            "GET /parse/classes/_User?where[username][$regex]=A'B'%3BSELECT+PG_SLEEP(3)%3B-- HTTP/1.1\r\nHost: roost\r\n"
            + "X-Parse-Application-Id: \(TestServer.applicationId)\r\nX-Parse-REST-API-Key: rest\r\n"
            + "Content-Type: application/json\r\nConnection: close\r\n\r\n")
        #expect(head.hasPrefix("HTTP/1.1 200"), "\(head)\n\(body)")
        #expect(try JSONParser.parse(body) == ["results": []], "\(body)")
        #expect(Date().timeIntervalSince(started) < 3, "the injected sleep did not run")
    }
}
