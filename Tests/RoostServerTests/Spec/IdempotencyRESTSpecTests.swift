import Foundation
import RoostCore
import RoostTestSupport
import Testing

/// Parse Server's spec/Idempotency.spec.js: a Cloud function called twice under one `X-Parse-Request-Id` (the
/// spec's `Parse.Cloud.define` counter is a function webhook here, its calls counted; `Idempotency.runClaimed`), and the TTL option refused
/// at start when it is not a number of seconds above 0. The spec's `paths: 1` has no Roost counterpart (Roost
/// chooses the deduplicated paths itself).
@Suite struct IdempotencyRESTSpecTests {
    // spec-differs: Idempotency.spec.js: should enforce idempotency for cloud code function -- the function runs once, as Parse's, but its repeat gets the first reply replayed (Roost's answer to every repeat of the same request, see IdempotencySpecTests), not 159
    /// A function called twice under one request id runs once; the repeat gets the reply replayed. A twin sent while
    /// the first is still running gets 159, and a function whose webhook failed gives the id back for a retry.
    /// Timed (TIMED_SUITES, run alone): the held call must be answered within the webhook's 30 s, which the parallel
    /// pass's load on the test's own requests could stretch past.
    @Test func aFunctionRunsOncePerRequestId() async throws {
        let server = try TestServer(arguments: fastHashing)
        let receiver = try WebhookReceiver(reply: #"{"success":"ok"}"#)
        let hook = try await server.request("POST", "/hooks/functions", json: ["functionName": "myFunction", "url": .string(receiver.url)],
                                            master: true)
        #expect(hook.status == 200, "\(hook.text)")
        let requestId = ["X-Parse-Request-Id": "abc-123"]
        let first = try await server.request("POST", "/functions/myFunction", headers: requestId, master: true)
        #expect(first.status == 200 && first.json == ["result": "ok"], "\(first.text)")
        let again = try await server.request("POST", "/functions/myFunction", headers: requestId, master: true)
        #expect(again.status == 200 && again.json == first.json, "\(again.text)")
        #expect(receiver.requests.count == 1)
        // The same id on another request (another body) is Parse's 159.
        expectParseError(try await server.request("POST", "/functions/myFunction", json: ["a": 1], headers: requestId, master: true),
                         159, "Duplicate request")

        // While the webhook holds its reply, a twin is refused at once and the webhook is not called again.
        receiver.holdReplies()
        let held = ["X-Parse-Request-Id": "held-1"]
        async let slow = server.request("POST", "/functions/myFunction", headers: held, master: true)
        // Under the whole suite the held request's task can wait many seconds for a thread: wait for its webhook call
        // (a twin sent before it would claim the id itself and wait on the held reply).
        let deadline = Date().addingTimeInterval(90)
        while receiver.requests.count < 2, Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        try #require(receiver.requests.count == 2, "the held call never reached the webhook")
        expectParseError(try await server.request("POST", "/functions/myFunction", headers: held, master: true), 159, "Duplicate request")
        receiver.releaseReplies()
        let answered = try await slow
        #expect(answered.json == ["result": "ok"], "\(answered.text)")
        #expect(receiver.requests.count == 2)

        // A failed call records nothing: the retry runs the function.
        receiver.reply(with: #"{"error":"not now"}"#)
        let failing = ["X-Parse-Request-Id": "fails-1"]
        let failed = try await server.request("POST", "/functions/myFunction", headers: failing, master: true)
        #expect(failed.status == 400 && failed.json["code"] == 141, "\(failed.text)")
        receiver.reply(with: #"{"success":"later"}"#)
        let retried = try await server.request("POST", "/functions/myFunction", headers: failing, master: true)
        #expect(retried.json == ["result": "later"], "\(retried.text)")
        #expect(receiver.requests.count == 4)
    }

    // spec: Idempotency.spec.js: should throw on invalid configuration
    @Test func aTTLThatIsNotAPositiveNumberStopsTheServerAtStart() throws {
        for value in ["a", "0", "-1"] {
            let attempt = try StartAttempt(["--idempotency-ttl=\(value)"])
            #expect(!attempt.started && attempt.status != 0, "\(value): \(attempt.log)")
            #expect(attempt.log.contains("--idempotency-ttl"), "\(value): \(attempt.log)")
        }
        #expect(try StartAttempt(["--idempotency-ttl=2"]).started)
    }
}
