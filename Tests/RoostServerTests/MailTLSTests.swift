import Foundation
import RoostCore
import RoostTestSupport
import Testing

/// Mail over TLS to a real SMTP server (aiosmtpd) with a certificate made for the test: STARTTLS with a login,
/// TLS from the start (`smtps://`), and the refusals: a password is never sent without TLS, and a certificate
/// that does not verify is not trusted.
@Suite struct MailTLSTests {
    /// The directory of a test's certificate (each test has its own suite value), removed at the test's end.
    private let directory = FileManager.default.temporaryDirectory.appendingPathComponent("roost-tls-\(UUID().uuidString)")

    /// A self-signed certificate for 127.0.0.1 (it is its own certificate authority), as PEM files.
    private func certificate() throws -> (cert: String, key: String) {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let cert = directory.appendingPathComponent("cert.pem").path, key = directory.appendingPathComponent("key.pem").path
        let made = try ChildProcess.run("/usr/bin/openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                                                            "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"])
        #expect(made.status == 0, "\(made.output)")
        return (cert, key)
    }

    private func requestReset(_ accounts: AccountServer) async throws {
        _ = try await accounts.api.signUp("zxcv", "asdf", ["email": "user@parse.com"])
        #expect(try await accounts.api.send("POST", "/requestPasswordReset", json: ["email": "user@parse.com"]).text == "{}")
    }

    @Test func startTLSWithALogin() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let (cert, key) = try certificate()
        let sink = try SMTPSink(options: ["--starttls", cert, key, "--login", "roost:s3cret pass"])
        let accounts = try AccountServer(["--smtp-ca-file", cert], sink: sink,
                                         environment: ["ROOST_SMTP_URL": "smtp://roost:s3cret%20pass@127.0.0.1:\(sink.port)"],
                                         smtpURLFromEnvironment: true)
        try await requestReset(accounts)
        let mails = try await sink.waitForMails(1)
        #expect(mails.count == 1 && mails.first?.recipient == "user@parse.com")
        #expect(!accounts.api.server.log().contains("s3cret"))
    }

    @Test func tlsFromTheStart() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let (cert, key) = try certificate()
        let sink = try SMTPSink(options: ["--tls", cert, key])
        let accounts = try AccountServer(["--smtp-ca-file", cert], sink: sink,
                                         environment: ["ROOST_SMTP_URL": "smtps://127.0.0.1:\(sink.port)"], smtpURLFromEnvironment: true)
        try await requestReset(accounts)
        #expect(try await sink.waitForMails(1).count == 1)
    }

    /// A URL with a password requires TLS: against a server without STARTTLS the mail waits, the password unsent.
    @Test func noPasswordWithoutTLS() async throws {
        let sink = try SMTPSink(options: ["--login", "roost:s3cret"])
        let accounts = try AccountServer(sink: sink, environment: ["ROOST_SMTP_URL": "smtp://roost:s3cret@127.0.0.1:\(sink.port)",
                                                                   "ROOST_TEST_MAIL_RETRY_CAP_MS": "500"],
                                         smtpURLFromEnvironment: true)
        try await requestReset(accounts)
        try await Task.sleep(nanoseconds: 1_500_000_000)
        #expect(sink.mails().isEmpty)
        let log = accounts.api.server.log()
        #expect(log.contains("will retry: Requested SSL level failed") && !log.contains("s3cret"), "\(log)")
    }

    /// A certificate that does not chain to a trusted authority is refused: the mail waits.
    @Test func unverifiedCertificateIsRefused() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let (cert, key) = try certificate()
        let sink = try SMTPSink(options: ["--tls", cert, key])
        let accounts = try AccountServer(sink: sink, environment: ["ROOST_SMTP_URL": "smtps://127.0.0.1:\(sink.port)",
                                                                   "ROOST_TEST_MAIL_RETRY_CAP_MS": "500"],
                                         smtpURLFromEnvironment: true)
        try await requestReset(accounts)
        try await Task.sleep(nanoseconds: 1_500_000_000)
        #expect(sink.mails().isEmpty)
        #expect(try await accounts.api.server.logShows("will retry: SSL peer certificate"), "\(accounts.api.server.log())")
    }
    /// A refused login (535) is the configuration's fault: the mail waits for it to be fixed, it is not dropped.
    @Test func aRefusedLoginKeepsTheMail() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let (cert, key) = try certificate()
        let sink = try SMTPSink(options: ["--starttls", cert, key, "--login", "roost:right"])
        let accounts = try AccountServer(["--smtp-ca-file", cert], sink: sink,
                                         environment: ["ROOST_SMTP_URL": "smtp://roost:wrong@127.0.0.1:\(sink.port)",
                                                       "ROOST_TEST_MAIL_RETRY_CAP_MS": "500"],
                                         smtpURLFromEnvironment: true)
        try await requestReset(accounts)
        try await Task.sleep(nanoseconds: 1_500_000_000)
        let log = accounts.api.server.log()
        #expect(sink.mails().isEmpty && log.contains("will retry: Login denied") && !log.contains("dropped"), "\(log)")
    }
}
