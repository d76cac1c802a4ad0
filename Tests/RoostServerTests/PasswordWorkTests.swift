import Foundation
import Testing
import RoostCore

/// Password hashing (PBKDF2) runs on threads of its own, with the connection parked: the HTTP thread
/// goes on serving its other connections meanwhile.
@Suite struct PasswordWorkTests {
    @Test func aSignUpDoesNotHoldUpOtherConnectionsOfItsThread() throws {
        // One HTTP thread, and a hash slow enough (seconds) to be surely still running below.
        let server = try TestServer(arguments: ["--threads", "1", "--password-iterations", "3000000"])
        let signUp = try RawConnection(port: server.port)
        let body = #"{"username":"slow","password":"a password"}"#
        try signUp.send("POST /parse/users HTTP/1.1\r\nHost: roost\r\nX-Parse-Application-Id: \(TestServer.applicationId)\r\n"
            + "Content-Length: \(body.utf8.count)\r\n\r\n" + body)
        let other = try RawConnection(port: server.port)
        for _ in 0..<5 {
            #expect(try other.exchange("GET /parse/health HTTP/1.1\r\nHost: roost\r\n\r\n").head.hasPrefix("HTTP/1.1 200"))
        }
        #expect(!signUp.hasAnswer, "the sign-up was answered before five health checks on its HTTP thread")
        let created = try signUp.receive()
        #expect(created.head.hasPrefix("HTTP/1.1 201"))
        // Logging in checks the password on the same threads.
        let logIn = try other.exchange("GET /parse/login?username=slow&password=a%20password HTTP/1.1\r\nHost: roost\r\n"
            + "X-Parse-Application-Id: \(TestServer.applicationId)\r\n\r\n")
        #expect(logIn.head.hasPrefix("HTTP/1.1 200"))
        #expect(logIn.body.contains("\"sessionToken\":\"r:"))
    }

    /// A batch of log-ins checks its passwords before taking the writer: creates sent meanwhile are
    /// answered while the batch is still hashing (before, each waited for the whole batch, ~28 s for 50).
    @Test func aBatchOfLogInsDoesNotHoldUpWrites() async throws {
        // Eight different checks of ~0.3 s or more each: the batch lasts seconds.
        let server = try TestServer(arguments: ["--password-iterations", "1000000"])
        let signUp = try await server.request("POST", "/users", json: ["username": "ann", "password": "pw"])
        #expect(signUp.status == 201)
        _ = try await server.create("Plain", ["index": -1])  // The class exists before.
        let items = ["pw"] + (1...7).map { "wrong \($0)" }
        let requests = items.map { password -> JSON in
            ["method": "POST", "path": "/parse/login", "body": ["username": "ann", "password": .string(password)]]
        }
        let sent = Date()
        let batch = Task { () throws -> (TestResponse, Date) in
            (try await server.request("POST", "/batch", json: ["requests": .array(requests)]), Date())
        }
        try await Task.sleep(for: .milliseconds(300))  // The batch is under way.
        var lastCreate = Date()
        for index in 0..<3 {
            _ = try await server.create("Plain", ["index": .number(Double(index))])
            lastCreate = Date()
        }
        let (reply, batchAnswered) = try await batch.value
        let times = "creates done after \(lastCreate.timeIntervalSince(sent)) s, the batch after \(batchAnswered.timeIntervalSince(sent)) s"
        #expect(lastCreate < batchAnswered, "the creates waited for the batch of log-ins: \(times)")
        let results = reply.json.arrayValue ?? []
        #expect(results.count == 8)
        #expect(results.first?["success"]?["sessionToken"]?.stringValue?.hasPrefix("r:") == true)
        #expect(results.dropFirst().allSatisfy { $0["error"]?["code"] == 101 })
    }

    /// A sign-up with `X-Parse-Request-Id` hashes before its write (which records the request id with it).
    @Test func anIdempotentSignUpDoesNotHoldUpWrites() async throws {
        let server = try TestServer(arguments: ["--password-iterations", "3000000"])
        let signUp = Task { () throws -> (TestResponse, Date) in
            (try await server.request("POST", "/users", json: ["username": "bob", "password": "pw"],
                                      headers: ["X-Parse-Request-Id": "sign-up-1"]), Date())
        }
        try await Task.sleep(for: .milliseconds(300))
        _ = try await server.create("Plain", ["index": 1])
        let createAnswered = Date()
        let (reply, signUpAnswered) = try await signUp.value
        #expect(reply.status == 201)
        #expect(createAnswered < signUpAnswered, "the create waited for the sign-up's hash")
        let again = try await server.request("POST", "/users", json: ["username": "bob", "password": "pw"],
                                             headers: ["X-Parse-Request-Id": "sign-up-1"])
        // Its reply started a session, so it is not kept: the repeat is Parse's 159, and bob signed up once.
        expectError(again, 159, "Duplicate request")
        let users = try await server.request("GET", "/users", master: true, query: ["where": #"{"username":"bob"}"#])
        #expect(users.json["results"]?.arrayValue?.count == 1)
    }

    /// Items of one batch see each other's passwords: a sign-up then log-ins with the new password
    /// (right and wrong), in one transaction, without hashing inside it.
    @Test func aTransactionalBatchSignsUpAndLogsIn() async throws {
        let server = try TestServer(arguments: fastHashing)
        let requests: [JSON] = [
            ["method": "POST", "path": "/parse/users", "body": ["username": "cy", "password": "first"]],
            ["method": "POST", "path": "/parse/login", "body": ["username": "cy", "password": "first"]],
            ["method": "GET", "path": "/parse/verifyPassword?username=cy&password=first"],
        ]
        let reply = try await server.request("POST", "/batch", json: ["requests": .array(requests), "transaction": true])
        #expect(reply.status == 200, "\(reply.text)")
        let results = reply.json.arrayValue ?? []
        #expect(results.count == 3)
        #expect(results.allSatisfy { $0["success"] != nil }, "\(reply.text)")
        let wrong: JSON = ["method": "POST", "path": "/parse/login", "body": ["username": "cy", "password": "second"]]
        let unknown: JSON = ["method": "POST", "path": "/parse/login", "body": ["username": "nobody", "password": "x"]]
        let failed = try await server.request("POST", "/batch", json: ["requests": [wrong, unknown]])
        #expect(failed.json.arrayValue?.map { $0["error"]?["code"] } == [101, 101])
        // A password changed in a batch: the log-in after it needs the new one.
        let token = results[1]["success"]?["sessionToken"]?.stringValue ?? ""
        let userId = results[0]["success"]?["objectId"]?.stringValue ?? ""
        let change: [JSON] = [
            ["method": "PUT", "path": .string("/parse/users/\(userId)"), "body": ["password": "second"]],
            ["method": "POST", "path": "/parse/login", "body": ["username": "cy", "password": "first"]],
            ["method": "POST", "path": "/parse/login", "body": ["username": "cy", "password": "second"]],
        ]
        let changed = try await server.request("POST", "/batch", json: ["requests": .array(change)],
                                               headers: ["X-Parse-Session-Token": token])
        let outcomes = changed.json.arrayValue ?? []
        #expect(outcomes.count == 3)
        #expect(outcomes.first?["success"]?["updatedAt"] != nil, "\(changed.text)")
        #expect(outcomes.dropFirst().first?["error"]?["code"] == 101)
        #expect(outcomes.last?["success"]?["sessionToken"] != nil)
    }

    /// A batch's password checks take turns with other requests' on the password workers: a log-in
    /// sent while every worker has a batch of log-ins is answered before those batches.
    @Test func aBatchOfLogInsTakesTurnsWithOtherLogIns() async throws {
        let server = try TestServer(arguments: ["--password-iterations", "600000"])
        #expect(try await server.request("POST", "/users", json: ["username": "dee", "password": "pw"]).status == 201)
        let sent = Date()
        // One batch per password worker (one per CPU), so that every worker has one; six different
        // (wrong) passwords each, six checks.
        let batches = (0..<ProcessInfo.processInfo.activeProcessorCount).map { batch in
            let requests = (0..<6).map { item -> JSON in
                ["method": "POST", "path": "/parse/login", "body": ["username": "dee", "password": .string("wrong \(batch).\(item)")]]
            }
            return Task { () throws -> Date in
                let reply = try await server.request("POST", "/batch", json: ["requests": .array(requests)])
                #expect(reply.json.arrayValue?.count == 6)
                return Date()
            }
        }
        try await Task.sleep(for: .milliseconds(300))
        let single = try await server.request("POST", "/login", json: ["username": "dee", "password": "pw"])
        let singleAnswered = Date()
        #expect(single.status == 200)
        var firstBatchAnswered = Date.distantFuture
        for batch in batches { firstBatchAnswered = min(firstBatchAnswered, try await batch.value) }
        let waited = "answered after \(singleAnswered.timeIntervalSince(sent)) s, the first batch after \(firstBatchAnswered.timeIntervalSince(sent)) s"
        #expect(singleAnswered < firstBatchAnswered, "the log-in waited for a whole batch of log-ins: \(waited)")
    }
}
