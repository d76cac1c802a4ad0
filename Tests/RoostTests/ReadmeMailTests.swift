import Foundation
import RoostTestSupport
import Testing

/// The README's password reset example (the Parse REST guide's `requestPasswordReset`), run as written against a
/// real server started with the variables its first line sets, and a real SMTP server in place of port 2525.
@Suite struct ReadmeMailTests {
    @Test func thePasswordResetExampleSendsTheMail() async throws {
        let block = try #require(try ReadmeTests.blocks("sh").first { $0.hasPrefix("ROOST_SMTP_URL=") })
        var lines = block.replacing("\\\n", with: " ").split(separator: "\n").map(String.init)
        let serve = lines.removeFirst()
        #expect(serve.hasSuffix("make serve"))
        let sink = try SMTPSink()
        let port = try ServerProcess.freePort()
        var environment: [String: String] = ["ROOST_EXIT_WITH_PARENT": "1"]
        for match in serve.matches(of: /(ROOST_[A-Z_]+)=("[^"]*"|\S+)/) {
            environment[String(match.output.1)] = String(match.output.2).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                .replacing("smtp://127.0.0.1:2525", with: sink.url).replacing("127.0.0.1:1337", with: "127.0.0.1:\(port)")
        }
        #expect(Set(environment.keys) == ["ROOST_SMTP_URL", "ROOST_APP_NAME", "ROOST_PUBLIC_SERVER_URL", "ROOST_EXIT_WITH_PARENT"])

        let server = try ReadmeServer(port: port, arguments: ["--password-iterations", "1000"], environment: environment)

        var commands: [(command: String, shown: String?)] = []
        for line in lines {
            if line.hasPrefix("# ") { commands[commands.count - 1].shown = String(line.dropFirst(2)) } else { commands.append((line, nil)) }
        }
        #expect(commands.count == 2)
        let curl = try #require(ReadmeTests.executable("curl"))
        for (command, shown) in commands {
            let script = command.replacing("127.0.0.1:1337", with: "127.0.0.1:\(port)").replacing("curl ", with: "'\(curl)' -sS ")
            let run = try ChildProcess.run("/bin/sh", ["-c", script])
            #expect(run.status == 0 && run.output.hasPrefix("{"), "\(command): \(run.output)")
            if let shown { #expect(run.output == shown, "\(command): \(run.output)") }
        }
        let mails = try await sink.waitForMails(1)
        withExtendedLifetime(server) {}
        #expect(mails.count == 1)
        #expect(mails.first?.recipient == "coolguy@iloveapps.com")
        #expect(mails.first?.subject == "Password Reset for My App")
        #expect(mails.first?.link?.hasPrefix("http://127.0.0.1:\(port)/parse/apps/roost/request_password_reset?token=") == true)
    }
}
