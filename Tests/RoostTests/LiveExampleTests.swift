import Foundation
import Roost
import RoostTestSupport
import Testing

/// `todo watch` and `sonnets follow`, run as a user would: a long-running process printing live changes made by
/// another device, with the server stopped and started again (same port, same data) in between.
@Suite struct LiveExampleTests {
    /// An example program left running, its output in a file the test polls (a pipe read could block forever).
    final class Running {
        let process: ChildProcess
        let outputPath = FileManager.default.temporaryDirectory.appendingPathComponent("roost-live-\(UUID().uuidString).out").path

        convenience init(_ device: ExampleTests.Device, _ program: String, _ arguments: String...) throws {
            try self.init(device, executable: try ExampleTests.program(program), arguments: arguments)
        }

        init(_ device: ExampleTests.Device, executable: String, arguments: [String]) throws {
            let descriptor = open(outputPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            defer { close(descriptor) }
            process = try ChildProcess(executable: executable, arguments: arguments, environment: device.environment,
                                       stdout: descriptor, stderrPath: outputPath)
        }

        deinit {
            process.terminate(grace: 5)
            unlink(outputPath)
        }

        var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }

        /// Waits until the output contains `marker` (at most `timeout` seconds).
        func wait(for marker: String, timeout: TimeInterval = 15) async -> Bool {
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                if output.contains(marker) { return true }
                try? await Task.sleep(nanoseconds: 50_000_000)
            }
            return output.contains(marker)
        }

        func occurrences(of text: String) -> Int { output.components(separatedBy: text).count - 1 }
    }

    @Test func todoWatchPrintsAnotherDevicesChangesAndMissesNoneAcrossAServerRestart() async throws {
        let server = try ServerProcess()
        let phone = ExampleTests.Device(server: server), laptop = ExampleTests.Device(server: server)
        #expect(try phone.run("todo", "signup", "ann", input: "a long passphrase\n").output.contains("Signed up as ann"))
        #expect(try laptop.run("todo", "login", "ann", input: "a long passphrase\n").output.contains("Logged in as ann"))

        let watch = try Running(laptop, "todo", "watch", "--count", "4")
        #expect(await watch.wait(for: "Watching ann"))
        #expect(try phone.run("todo", "add", "Buy milk").status == 0)
        #expect(await watch.wait(for: "+ Buy milk"))

        // The server goes down and comes back; the phone changes the list at once, while the watcher reconnects.
        server.stop()
        try server.start()
        #expect(try phone.run("todo", "add", "Water the plants").status == 0)
        #expect(try phone.run("todo", "done", "1").status == 0)
        #expect(try phone.run("todo", "rm", "2").status == 0)
        #expect(await watch.wait(for: "- Water the plants", timeout: 30))
        #expect(watch.process.waitUntilExit() == 0)  // Exactly four changes: it stopped by itself.
        let output = watch.output
        #expect(watch.occurrences(of: "+ Buy milk") == 1)
        #expect(watch.occurrences(of: "+ Water the plants") == 1)
        #expect(watch.occurrences(of: "✓ Buy milk") == 1)
        #expect(watch.occurrences(of: "- Water the plants") == 1)
        #expect(output.contains("(reconnected)"))

        // The watcher's device lists the changes offline: the events updated its pinned list.
        server.stop()
        let offline = try laptop.run("todo", "list").output
        #expect(offline.contains("1. [x] Buy milk"))
        #expect(!offline.contains("Water the plants"))
    }

    @Test func todoWatchCatchesUpAfterANetworkCutWithoutRepeatingAChange() async throws {
        let server = try ServerProcess()
        let relay = try TCPRelay(upstreamPort: server.port)
        let phone = ExampleTests.Device(server: server), laptop = ExampleTests.Device(server: server, serverURL: relay.url)
        #expect(try phone.run("todo", "signup", "bea", input: "a long passphrase\n").output.contains("Signed up as bea"))
        #expect(try laptop.run("todo", "login", "bea", input: "a long passphrase\n").output.contains("Logged in as bea"))
        #expect(try phone.run("todo", "add", "Feed the cat").status == 0)

        let watch = try Running(laptop, "todo", "watch", "--count", "3")
        #expect(await watch.wait(for: "Watching bea"))
        #expect(try phone.run("todo", "add", "Call mum").status == 0)
        #expect(await watch.wait(for: "+ Call mum"))
        relay.cut()  // The laptop is offline while the phone changes the list.
        #expect(try phone.run("todo", "done", "1").status == 0)
        #expect(try phone.run("todo", "rm", "2").status == 0)
        try await Task.sleep(nanoseconds: 300_000_000)
        #expect(!watch.output.contains("Feed the cat"))
        relay.restore()
        #expect(await watch.wait(for: "- Call mum", timeout: 30))
        #expect(watch.process.waitUntilExit() == 0)
        #expect(watch.occurrences(of: "+ Call mum") == 1)
        #expect(watch.occurrences(of: "✓ Feed the cat") == 1)
        #expect(watch.occurrences(of: "- Call mum") == 1)
        #expect(watch.output.contains("(reconnected)"))
    }

    @Test func sonnetsFollowShowsACorrectionTheMomentItIsMade() async throws {
        let server = try ServerProcess()
        let reader = ExampleTests.Device(server: server)
        #expect(try reader.run("sonnets", "import").output.contains("Imported 154 sonnets."))
        let follow = try Running(reader, "sonnets", "follow", "18", "--count", "1")
        #expect(await follow.wait(for: "Shall I compare thee to a summer's day?"))

        let editor = try server.makeClient()
        let sonnet = try #require(try await editor.query("Sonnet").whereKey("number", equalTo: 18).first())
        var lines: [String] = sonnet["lines"] ?? []
        lines[1] = "Thou art more lovely and more temperate: (corrected)"
        sonnet["lines"] = lines
        let saved = Date()
        try await sonnet.save()
        #expect(await follow.wait(for: "(corrected)"))
        #expect(Date().timeIntervalSince(saved) < 2)  // The moment it changes, not at the next poll.
        #expect(follow.process.waitUntilExit() == 0)
        #expect(follow.output.contains("Corrected at"))
    }
}
