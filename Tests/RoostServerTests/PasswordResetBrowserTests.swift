import Foundation
import RoostCore
import RoostTestSupport
import Testing

/// The whole password reset as a person goes through it: the mail from a real SMTP server, its link opened
/// in headless Chromium with JavaScript off (`scripts/browser-reset.py` over the DevTools protocol), the new
/// password typed into the form and its button clicked. Screenshots of the filled form and of the page it
/// ends on are kept in `.build/test-artifacts/`.
@Suite struct PasswordResetBrowserTests {
    @Test func resetInABrowserWithoutJavaScript() async throws {
        let accounts = try AccountServer(["--password-validator-pattern", "[0-9]"])
        let api = accounts.api
        _ = try await api.signUp("ann", "first password 1", ["email": "ann@example.com"])
        let old = try await api.logIn("ann", "first password 1")
        #expect(try await api.send("POST", "/requestPasswordReset", json: ["email": "ann@example.com"]).text == "{}")
        let link = try #require(try await accounts.sink.waitForMails(1).first?.link)

        let artifacts = SMTPSink.packageRoot.appendingPathComponent(".build/test-artifacts")
        let prefix = artifacts.appendingPathComponent("password-reset").path
        let run = try ChildProcess.run(try SMTPSink.python(), [SMTPSink.packageRoot.appendingPathComponent("scripts/browser-reset.py").path,
                                                               link, "second password 2", prefix])
        #expect(run.status == 0, "\(run.output)")
        let result = (try? JSONParser.parse(Array(run.output.split(separator: "\n").last { $0.hasPrefix("{") }.map { Array($0.utf8) } ?? []))) ?? .null
        #expect(result["formURL"]?.stringValue?.contains("/apps/choose_password?token=") == true, "\(run.output)")
        #expect(result["finalURL"]?.stringValue == "\(accounts.publicURL)/apps/password_reset_success.html?username=ann")
        #expect(result["finalText"]?.stringValue?.contains("Successfully updated your password!") == true)
        for name in ["password-reset-form.png", "password-reset-done.png"] {
            let size = (try? FileManager.default.attributesOfItem(atPath: artifacts.appendingPathComponent(name).path)[.size] as? Int) ?? 0
            #expect(size > 1000, "\(name): \(size) bytes")
        }

        expectError(try await api.me(old.token), 209)  // Every earlier session ends with the reset.
        expectError(try await api.send("POST", "/login", json: ["username": "ann", "password": "first password 1"]), 101)
        _ = try await api.logIn("ann", "second password 2")
        api.expectNeverShown([try #require(token(in: link)), "second password 2", "first password 1"])
    }

    /// A password the policy refuses sends the browser back to the form with Parse's message on it.
    @Test func refusedPasswordShowsTheMessage() async throws {
        let accounts = try AccountServer(["--password-validator-pattern", "[0-9]"])
        _ = try await accounts.api.signUp("bob", "first password 1", ["email": "bob@example.com"])
        _ = try await accounts.api.send("POST", "/requestPasswordReset", json: ["email": "bob@example.com"])
        let link = try #require(try await accounts.sink.waitForMails(1).first?.link)
        let prefix = SMTPSink.packageRoot.appendingPathComponent(".build/test-artifacts/password-reset-refused").path
        let run = try ChildProcess.run(try SMTPSink.python(), [SMTPSink.packageRoot.appendingPathComponent("scripts/browser-reset.py").path,
                                                               link, "no digits", prefix])
        let result = (try? JSONParser.parse(Array(run.output.split(separator: "\n").last { $0.hasPrefix("{") }.map { Array($0.utf8) } ?? []))) ?? .null
        #expect(result["finalURL"]?.stringValue?.contains("/apps/choose_password?username=bob") == true, "\(run.output)")
        #expect(result["finalText"]?.stringValue?.contains("Password does not meet the Password Policy requirements.") == true)
        _ = try await accounts.api.logIn("bob", "first password 1")
    }
}
