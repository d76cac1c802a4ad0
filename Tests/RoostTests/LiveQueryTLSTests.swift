import Foundation
import Roost
import RoostTestSupport
import Testing

/// The SDK against an `https://` server URL: REST (URLSession, libcurl) and LiveQuery (`wss://`, the SDK's OpenSSL
/// client) through Debian's nginx terminating TLS in front of the real server, with a throwaway CA. A device that
/// trusts the CA has it in its system store (see `TestCertificateAuthority.trusting`): the one store both read. nginx
/// serves the right certificate only to clients that send SNI.
@Suite struct LiveQueryTLSTests {
    /// Runs `todo arguments` as `device`, in a process whose system store trusts `authority`.
    private func todo(_ device: ExampleTests.Device, trusting authority: TestCertificateAuthority, _ arguments: String...,
                      input: String = "") throws -> (status: Int32, output: String) {
        let command = authority.trusting(try ExampleTests.program("todo"), arguments)
        return try ChildProcess.run(command.executable, command.arguments, environment: device.environment, input: input)
    }

    private func watch(_ device: ExampleTests.Device, trusting authority: TestCertificateAuthority, _ arguments: String...) throws
        -> LiveExampleTests.Running {
        let command = authority.trusting(try ExampleTests.program("todo"), ["watch"] + arguments)
        return try LiveExampleTests.Running(device, executable: command.executable, arguments: command.arguments)
    }

    @Test func aDeviceTrustingTheCASavesOverHTTPSAndGetsLiveEventsOverWSS() async throws {
        let server = try ServerProcess()
        let authority = try TestCertificateAuthority()
        let proxy = try TLSProxy(upstreamPort: server.port, authority: authority, name: "localhost")
        let phone = ExampleTests.Device(server: server, serverURL: proxy.url())
        let laptop = ExampleTests.Device(server: server, serverURL: proxy.url())
        #expect(try todo(phone, trusting: authority, "signup", "ann", input: "a long passphrase\n").output.contains("Signed up as ann"))
        #expect(try todo(laptop, trusting: authority, "login", "ann", input: "a long passphrase\n").output.contains("Logged in as ann"))

        let watcher = try watch(laptop, trusting: authority, "--count", "2")
        #expect(await watcher.wait(for: "Watching ann"), "\(watcher.output)")
        let added = try todo(phone, trusting: authority, "add", "Buy milk")
        #expect(added.status == 0 && !added.output.contains("will sync"), "\(added.output)")  // Saved over https at once.
        #expect(await watcher.wait(for: "+ Buy milk"), "\(watcher.output)")

        // The server restarts behind nginx, which closes the TLS connection: the watcher reconnects over wss and resumes.
        server.stop()
        try server.start()
        #expect(try todo(phone, trusting: authority, "done", "1").status == 0)
        guard await watcher.wait(for: "✓ Buy milk", timeout: 30) else {
            Issue.record("\(watcher.output)")
            return
        }
        #expect(watcher.process.waitUntilExit() == 0)
        #expect(watcher.output.contains("(reconnected)"))
        #expect(watcher.occurrences(of: "+ Buy milk") == 1)
    }

    @Test func aClientThatDoesNotTrustTheCAGetsAVerificationErrorAndNoEvents() async throws {
        let server = try ServerProcess()
        let authority = try TestCertificateAuthority()
        let proxy = try TLSProxy(upstreamPort: server.port, authority: authority, name: "localhost")
        let client = try RoostClient(.init(serverURL: proxy.url(), applicationId: ServerProcess.applicationId,
                                           storageDirectory: temporaryStorage(), requestTimeout: 5))
        let recorder = LiveQueryTests.Recorder(client.query("Todo"))
        defer { recorder.subscription.cancel() }
        let writer = try server.makeClient()  // Plain HTTP, straight to the server: a change the subscriber must not get.
        try await writer.object("Todo").save()

        let deadline = Date().addingTimeInterval(10)
        while recorder.failure == nil, Date() < deadline { try await Task.sleep(nanoseconds: 20_000_000) }
        let failure = try #require(recorder.failure as? RoostError, "no error: \(String(describing: recorder.failure))")
        #expect(failure.isMisconfiguration)
        #expect("\(failure)".contains("not trusted: unable to get local issuer certificate"), "\(failure)")
        #expect(recorder.all.isEmpty)
        // REST (libcurl) refuses the same certificate.
        await #expect(throws: RoostError.self) { try await client.object("Todo").save() }
    }

    @Test func aCertificateForAnotherNameIsRefused() async throws {
        let server = try ServerProcess()
        let authority = try TestCertificateAuthority()
        let good = try TLSProxy(upstreamPort: server.port, authority: authority, name: "localhost")
        let elsewhere = try TLSProxy(upstreamPort: server.port, authority: authority, name: "elsewhere.example")
        let device = ExampleTests.Device(server: server, serverURL: good.url())
        #expect(try todo(device, trusting: authority, "signup", "bo", input: "a long passphrase\n").output.contains("Signed up as bo"))

        // A trusted CA, but the certificate names another host (DNS name), or no IP address (a URL with 127.0.0.1 sends
        // no SNI and gets the default certificate).
        for (url, reason) in [(elsewhere.url(), "hostname mismatch"), (good.url(host: "127.0.0.1"), "IP address mismatch")] {
            var mismatched = device
            mismatched.serverURL = url
            let watcher = try watch(mismatched, trusting: authority)
            guard await watcher.wait(for: reason) else {
                Issue.record("\(url): no \"\(reason)\": \(watcher.output)")
                continue  // Still running, perhaps watching: ended by `Running`.
            }
            #expect(watcher.process.waitUntilExit() == 1, "\(watcher.output)")  // Ends with the error, no crash.
            #expect(!watcher.output.contains("Watching"), "\(watcher.output)")
        }
    }
}
