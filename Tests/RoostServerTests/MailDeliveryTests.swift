import Foundation
import RoostTestSupport
import RoostCore
import Testing

/// The outbox against a real SMTP server that is down, then back: a mail accepted while it is down is
/// delivered once it is back, exactly once, also when the server restarts meanwhile. No request waits
/// for SMTP. In TIMED_SUITES (Makefile): retries are waited for (capped at 500 ms apart here).
@Suite struct MailDeliveryTests {
    private let quickRetries = ["ROOST_TEST_MAIL_RETRY_CAP_MS": "500"]

    @Test func aMailWaitsForTheSMTPServer() async throws {
        let down = try SMTPSink()
        down.stop()  // Its port now refuses connections.
        let accounts = try AccountServer(sink: down, environment: quickRetries)
        _ = try await accounts.api.signUp("zxcv", "asdf", ["email": "user@parse.com"])
        let started = Date()
        let request = try await accounts.api.send("POST", "/requestPasswordReset", json: ["email": "user@parse.com"])
        #expect(request.status == 200 && Date().timeIntervalSince(started) < 2)  // Answered without the SMTP server.
        try await Task.sleep(nanoseconds: 1_500_000_000)
        #expect(down.mails().isEmpty)
        #expect(try await accounts.api.server.logShows("will retry"))

        let up = try SMTPSink(port: down.port, directory: down.directory)
        let mails = try await up.waitForMails(1)
        #expect(mails.count == 1 && mails.first?.recipient == "user@parse.com")
        try await Task.sleep(nanoseconds: 2_000_000_000)
        #expect(up.mails().count == 1)  // Exactly once.
        // The link works: the token was committed with the mail.
        #expect(try accounts.page(try #require(mails.first?.link)).location?.contains("choose_password") == true)
        accounts.api.expectNeverShown([try #require(token(in: mails.first?.link)), "asdf"])
    }

    @Test func aQueuedMailSurvivesARestart() async throws {
        let down = try SMTPSink()
        down.stop()
        let first = try AccountServer(sink: down, environment: quickRetries)
        _ = try await first.api.signUp("zxcv", "asdf", ["email": "user@parse.com"])
        #expect(try await first.api.send("POST", "/requestPasswordReset", json: ["email": "user@parse.com"]).status == 200)
        try await Task.sleep(nanoseconds: 700_000_000)
        #expect(first.api.server.stop() == 0)  // SIGTERM while the mail waits.
        #expect(down.mails().isEmpty)

        let up = try SMTPSink(port: down.port, directory: down.directory)
        let second = try AccountServer(sink: up, dataDirectory: first.api.server.dataDirectory, environment: quickRetries)
        let mails = try await up.waitForMails(1)
        #expect(mails.count == 1)
        try await Task.sleep(nanoseconds: 2_000_000_000)
        #expect(up.mails().count == 1)  // Exactly once, across the restart.
        // The link names the first server's URL; its token is good on the second (same database).
        let link = try #require(mails.first?.link)
        let resetToken = try #require(token(in: link))
        let reset = try second.page("/parse/apps/\(TestServer.applicationId)/request_password_reset",
                                    form: [("new_password", "fresh"), ("token", resetToken), ("username", "zxcv")])
        #expect(reset.location?.hasSuffix("/apps/password_reset_success.html?username=zxcv") == true)
        _ = try await second.api.logIn("zxcv", "fresh")
    }

    /// `roost export` → `roost import` carries what is in flight: the mail waiting for the SMTP server (sent once
    /// by the new server), its reset link's token, a half-counted lockout, and the reply kept for a request id (a
    /// `saveEventually` retried after the move is not applied twice).
    @Test func aMoveCarriesWhatIsInFlight() async throws {
        let down = try SMTPSink()
        down.stop()
        let lockout = ["--account-lockout-threshold", "3", "--account-lockout-duration", "10"]
        let old = try AccountServer(lockout, sink: down, environment: quickRetries)
        _ = try await old.api.signUp("zxcv", "asdf", ["email": "user@parse.com"])
        #expect(try await old.api.send("POST", "/requestPasswordReset", json: ["email": "user@parse.com"]).status == 200)
        let wrong = ["username": JSON.string("zxcv"), "password": "wrong"]
        expectError(try await old.api.send("POST", "/login", json: .object(wrong)), 101, "Invalid username/password.")
        let created = try await old.api.send("POST", "/classes/Item", json: ["n": 1], headers: ["X-Parse-Request-Id": "move-1"])
        let objectId = try #require(created.json["objectId"]?.stringValue)
        try await Task.sleep(nanoseconds: 700_000_000)  // The reset's lookup runs after its answer.
        #expect(old.api.server.stop() == 0)

        let exportPath = CommandLineTests.freshPath() + ".jsonl"
        let target = URL(fileURLWithPath: CommandLineTests.freshPath())
        defer { unlink(exportPath) }
        let exported = try CommandLineTests.run(["export", "--data-dir", old.api.server.dataDirectory.path, "--out", exportPath])
        #expect(exported.status == 0, "\(exported.output)")
        for type in ["1 requestRecord", "1 accountToken", "1 loginFailure", "1 mail"] {
            #expect(exported.output.contains(type), "\(exported.output)")
        }
        let imported = try CommandLineTests.run(["import", "--data-dir", target.path, exportPath])
        #expect(imported.status == 0, "\(imported.output)")

        let up = try SMTPSink(port: down.port, directory: down.directory)
        let moved = try AccountServer(lockout, sink: up, dataDirectory: target, environment: quickRetries)
        let mails = try await up.waitForMails(1)
        #expect(mails.count == 1 && mails.first?.recipient == "user@parse.com")
        // The retried request is answered as the first time, and nothing is created twice.
        let retried = try await moved.api.send("POST", "/classes/Item", json: ["n": 1], headers: ["X-Parse-Request-Id": "move-1"])
        #expect(retried.status == 201 && retried.json["objectId"]?.stringValue == objectId)
        #expect(try await moved.api.send("GET", "/classes/Item", master: true).json["results"]?.arrayValue?.count == 1)
        // One failure was counted before the move: two more lock the account.
        for _ in 0..<2 { expectError(try await moved.api.send("POST", "/login", json: .object(wrong)), 101, "Invalid username/password.") }
        let locked = try await moved.api.send("POST", "/login", json: .object(wrong))
        #expect(locked.json["error"]?.stringValue?.hasPrefix("Your account is locked") == true, "\(locked.text)")
        // The emailed link works on the new server.
        let resetToken = try #require(token(in: mails.first?.link))
        let reset = try moved.page("/parse/apps/\(TestServer.applicationId)/request_password_reset",
                                   form: [("new_password", "fresh"), ("token", resetToken), ("username", "zxcv")])
        #expect(reset.location?.hasSuffix("/apps/password_reset_success.html?username=zxcv") == true)
        try await Task.sleep(nanoseconds: 1_500_000_000)
        #expect(up.mails().count == 1)  // Exactly once.
    }

    /// A 5xx from the SMTP server (here: a recipient it refuses) drops the mail with a log line, and the
    /// next mail still goes.
    @Test func aRefusedRecipientIsDroppedAndLogged() async throws {
        let accounts = try AccountServer(environment: quickRetries)
        _ = try await accounts.api.signUp("refused", "asdf", ["email": "refuse@parse.com"])
        _ = try await accounts.api.signUp("fine", "asdf", ["email": "fine@parse.com"])
        _ = try await accounts.api.send("POST", "/requestPasswordReset", json: ["email": "refuse@parse.com"])
        _ = try await accounts.api.send("POST", "/requestPasswordReset", json: ["email": "fine@parse.com"])
        let mails = try await accounts.sink.waitForMails(1)
        #expect(mails.map(\.recipient) == ["fine@parse.com"])
        #expect(try await accounts.api.server.logShows("dropped"))
    }
}
