import Foundation
import RoostCore
import Testing

/// Small requests built to crash the server or make it do enormous work (found by reading the code): each is
/// refused or answered quickly, and the server keeps serving.
@Suite struct HostileRequestTests {
    func expectAlive(_ server: TestServer, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        #expect(try await server.request("GET", "/health").status == 200, sourceLocation: sourceLocation)
    }

    /// A year far outside what a date holds overflowed the date arithmetic.
    @Test func anAbsurdIfModifiedSinceIsIgnored() async throws {
        let s = try TestServer()
        let upload = try await s.request("POST", "/files/a.txt", body: Data("a".utf8), headers: ["Content-Type": "text/plain"], master: true)
        let url = try #require(upload.json["url"]?.stringValue)
        for date in ["Sun, 06 Nov -2147483648 08:49:37 GMT", "Sun, 06 Nov 2147483647 08:49:37 GMT", "Sun, 06 Nov 0 08:49:37 GMT"] {
            let reply = try await s.request("GET", String(url.dropFirst(s.baseURL.count)), headers: ["If-Modified-Since": date])
            #expect(reply.status == 200 && reply.text == "a", "\(date): \(reply.status)")
        }
        try await expectAlive(s)
    }

    /// Numbers past Int64 in class-level permissions are named in the refusal, not converted with a trap.
    @Test func hugeNumbersInPermissionsAreRefused() async throws {
        let s = try TestServer()
        for permissions: JSON in [["find": ["*": 1e20]], ["readUserFields": 1e20], ["protectedFields": ["*": [1e20]]]] {
            let reply = try await s.request("POST", "/schemas/C\(UUID().uuidString.prefix(6))", json: ["classLevelPermissions": permissions],
                                             master: true)
            expectError(reply, 107)
        }
        try await expectAlive(s)
    }

    /// `$limit`/`$skip` past Int's range mean "all" and "none", not a conversion trap.
    @Test func hugeAggregateCountsAreClamped() async throws {
        let s = try TestServer()
        _ = try await s.createAll("Agg", [["n": 1], ["n": 2]])
        let limited = try await s.request("GET", "/aggregate/Agg", master: true, query: ["pipeline": #"[{"$limit":1e300}]"#])
        #expect(limited.json["results"]?.arrayValue?.count == 2, "\(limited.text)")
        let skipped = try await s.request("GET", "/aggregate/Agg", master: true, query: ["pipeline": #"[{"$skip":1e300}]"#])
        #expect(skipped.json["results"]?.arrayValue?.count == 0, "\(skipped.text)")
        try await expectAlive(s)
    }

    /// A dotted update key reaches inside Object fields, never inside the fields the server manages (their checks
    /// would be skipped: a second user with the same anonymous id, an unchecked provider).
    @Test func dottedKeysDoNotReachManagedFields() async throws {
        let s = try RecordingServer()
        let ann = try await s.signUp(uniqueName("ann"), "pw")
        for key in ["authData.anonymous", "authData.facebook", "ACL.x", "emailVerified.x", "username.x", "notes.$where"] {
            let reply = try await s.send("PUT", "/users/\(ann.id)", json: .object([key: ["id": "X"]]), token: ann.token)
            expectError(reply, 105, "Invalid field name: \(key).")
        }
        let me = try await s.me(ann.token)
        #expect(me.json["authData"] == nil && me.json["ACL"] == [ann.id: ["read": true, "write": true]], "\(me.text)")
    }

    /// One index far past an array's end padded it with nulls; a thousand such keys built gigabytes.
    @Test func paddingAnArrayIsBounded() async throws {
        let s = try TestServer()
        let id = try await s.create("Pad", ["a": [[], []]])
        let near = try await s.request("PUT", "/classes/Pad/\(id)", json: ["a.0.3": 1])
        #expect(near.status == 200, "\(near.text)")
        #expect(try await s.fetch("Pad", id)["a"]?.arrayValue?.first == [.null, .null, .null, 1])
        let far = try await s.request("PUT", "/classes/Pad/\(id)", json: ["a.1.99999": 1, "a.0.5000": 1])
        #expect(far.status == 400, "\(far.text)")
        #expect(try await s.fetch("Pad", id)["a"]?.arrayValue?.last == [])
        try await expectAlive(s)
    }

    /// Numeric parts both index arrays and apply to their objects, so `{"0": [{"0": [...]}]}` nested deep branches
    /// exponentially along `a.0.0.0…`: the walk is bounded and the query answers.
    @Test func aBranchingDotPathAnswersQuickly() async throws {
        let s = try TestServer()
        var nested: JSON = 1
        for _ in 0..<30 { nested = .array([.object(["0": nested])]) }
        _ = try await s.create("Deep", ["a": nested])
        let path = "a" + String(repeating: ".0", count: 45)
        let started = Date()
        let reply = try await s.request("GET", "/classes/Deep", query: ["where": #"{"\#(path)":{"$exists":true}}"#])
        #expect(reply.status == 200, "\(reply.text)")
        #expect(Date().timeIntervalSince(started) < 20)
        try await expectAlive(s)
    }
}
