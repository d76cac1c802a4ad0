import Foundation
import RoostCore
import RoostTestSupport
import Testing

/// What a flood of link requests may cost: one mail per user and kind per resend interval (60 s), an outbox
/// of at most `outboxCapacity` mails, and a bounded queue of deferred reset lookups. In TIMED_SUITES
/// (Makefile): mails are waited for, and the flood is timed.
@Suite struct AccountMailLimitTests {
    /// 100 reset requests (and 20 resend requests) for one user: one mail of each kind, whose link works.
    @Test func manyRequestsForOneUserMailOnce() async throws {
        let accounts = try AccountServer(["--verify-user-emails"])
        _ = try await accounts.api.signUp("flooded", "asdf", ["email": "flooded@parse.com"])
        _ = try await accounts.sink.waitForMails(1)  // The sign-up's verification mail.
        for _ in 0..<100 {
            #expect(try await accounts.api.send("POST", "/requestPasswordReset", json: ["email": "flooded@parse.com"]).status == 200)
        }
        for _ in 0..<20 {
            #expect(try await accounts.api.send("POST", "/verificationEmailRequest", json: ["email": "flooded@parse.com"]).status == 200)
        }
        let mails = try await accounts.sink.waitForMails(2)
        try await Task.sleep(nanoseconds: 1_500_000_000)  // The deferred lookups have all run by now.
        #expect(accounts.sink.mails().count == 2, "\(accounts.sink.mails().map(\.subject))")
        let reset = try #require(mails.last?.link)
        #expect(try accounts.page(reset).location?.contains("choose_password") == true)
        #expect(try accounts.page(try #require(mails.first?.link)).location?.contains("verify_email_success") == true)
    }

    /// With the SMTP server down and the outbox full, new mails are not queued (a log line says so); those
    /// waiting are sent once it is back.
    @Test func aFullOutboxTakesNoMore() async throws {
        let down = try SMTPSink()
        down.stop()
        let accounts = try AccountServer(sink: down, environment: ["ROOST_TEST_MAIL_OUTBOX_CAPACITY": "3",
                                                                   "ROOST_TEST_MAIL_RETRY_CAP_MS": "500"])
        for index in 0..<6 {
            _ = try await accounts.api.signUp("user\(index)", "asdf", ["email": .string("user\(index)@parse.com")])
            #expect(try await accounts.api.send("POST", "/requestPasswordReset", json: .object(["email": .string("user\(index)@parse.com")])).status == 200)
        }
        try await Task.sleep(nanoseconds: 700_000_000)
        #expect(accounts.api.server.log().components(separatedBy: "mail outbox full").count - 1 == 3)
        let up = try SMTPSink(port: down.port, directory: down.directory)
        let mails = try await up.waitForMails(3)
        try await Task.sleep(nanoseconds: 1_500_000_000)
        #expect(up.mails().count == 3)
        #expect(Set(mails.map(\.recipient)) == ["user0@parse.com", "user1@parse.com", "user2@parse.com"])
    }

    /// 3,000 reset requests at once, for unknown emails: all answered `{}`, the deferred lookups stay bounded
    /// (past `Storage.maxDeferredWrites` the work is done before answering), and memory stays bounded.
    @Test func aFloodOfResetRequestsStaysBounded() async throws {
        let accounts = try AccountServer()
        let before = MemoryBoundTests.residentMegabytes(accounts.api.server)
        let started = Date()
        try await withThrowingTaskGroup(of: Int.self) { group in
            for worker in 0..<30 {
                group.addTask {
                    var answered = 0
                    for index in 0..<100 {
                        let response = try await accounts.api.server.request(
                            "POST", "/requestPasswordReset", json: ["email": .string("nobody\(worker)-\(index)@parse.com")])
                        if response.status == 200, response.text == "{}" { answered += 1 }
                    }
                    return answered
                }
            }
            var answered = 0
            for try await count in group { answered += count }
            #expect(answered == 3_000)
        }
        let after = MemoryBoundTests.residentMegabytes(accounts.api.server)
        #expect(after - before < 64, "resident \(before) MB before, \(after) MB after")
        #expect(Date().timeIntervalSince(started) < 120)
        #expect(accounts.api.server.stop() == 0)  // Shutdown waits for the deferred lookups: bounded.
        #expect(!accounts.api.server.log().contains("password reset request failed"))
    }
}
