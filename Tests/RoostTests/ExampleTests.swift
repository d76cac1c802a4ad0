import Foundation
import Roost
import RoostTestSupport
import Testing

/// The two example programs, run as a user would: separate processes, a password typed on stdin,
/// the server stopped and started between steps.
@Suite struct ExampleTests {
    static func program(_ name: String) throws -> String {
        try ServerProcess.binary().deletingLastPathComponent().appendingPathComponent(name).path
    }

    /// One "device": a storage directory of its own.
    struct Device {
        let server: ServerProcess
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("roost-example-\(UUID().uuidString)").path

        func run(_ program: String, _ arguments: String..., input: String = "") throws -> (status: Int32, output: String) {
            try ChildProcess.run(try ExampleTests.program(program), arguments, environment: [
                "ROOST_SERVER_URL": server.url.absoluteString, "ROOST_APP_ID": ServerProcess.applicationId, "ROOST_STORAGE_DIR": storage,
            ], input: input)
        }
    }

    @Test func todoWorksOfflineCatchesUpAndKeepsItsListThroughSignUp() async throws {
        let server = try ServerProcess(start: false)
        let phone = Device(server: server)

        // Offline: the list is kept locally and the changes wait.
        #expect(try phone.run("todo", "add", "Buy 100 tons of cat litter").output.contains("will sync when the server is reachable"))
        #expect(try phone.run("todo", "add", "Water the plants").status == 0)
        #expect(try phone.run("todo", "done", "2").status == 0)
        let offline = try phone.run("todo", "list").output
        #expect(offline.contains("1. [ ] Buy 100 tons of cat litter  (not synced yet)"))
        #expect(offline.contains("2. [x] Water the plants  (not synced yet)"))
        #expect(try phone.run("todo", "sync").output.contains("change(s) waiting for the server"))
        #expect(try phone.run("todo", "whoami").output.contains("anonymous user (not on the server yet)"))

        // Back online: everything lands once.
        try server.start()
        #expect(try phone.run("todo", "sync").output.contains("All changes are on the server."))
        let online = try phone.run("todo", "list").output
        #expect(online.contains("1. [ ] Buy 100 tons of cat litter\n"))
        #expect(online.contains("2. [x] Water the plants\n"))

        // Sign-up converts the anonymous account: same list.
        let signup = try phone.run("todo", "signup", "ann", input: "a long passphrase\n")
        #expect(signup.output.contains("Signed up as ann"))
        #expect(try phone.run("todo", "whoami").output.contains("ann ("))
        #expect(try phone.run("todo", "list").output.contains("2. [x] Water the plants"))

        // A second device logs in and sees the same to-dos; an edit there shows up on the first.
        let laptop = Device(server: server)
        #expect(try laptop.run("todo", "login", "ann", input: "a long passphrase\n").output.contains("Logged in as ann"))
        let laptopList = try laptop.run("todo", "list").output
        #expect(laptopList.contains("Buy 100 tons of cat litter") && laptopList.contains("Water the plants"))
        #expect(try laptop.run("todo", "rm", "1").status == 0)
        let phoneList = try phone.run("todo", "list").output
        #expect(!phoneList.contains("cat litter"))
        #expect(phoneList.contains("1. [x] Water the plants"))

        let client = try server.makeClient()
        try await client.logIn(username: "ann", password: "a long passphrase")
        #expect(try await client.query("Todo").count() == 1)  // Exactly once: no duplicates from retries.
    }

    @Test func sonnetsAreReadFromTheCacheAndRefreshedWhenTheServerChangesThem() async throws {
        let server = try ServerProcess()
        let reader = Device(server: server)
        #expect(try reader.run("sonnets", "import").output.contains("Imported 154 sonnets."))
        let first = try reader.run("sonnets", "list").output
        #expect(first.contains("   1  From fairest creatures we desire increase,"))
        #expect(first.contains(" 154  "))
        #expect(first.contains("Fetched from the server"))

        let second = try reader.run("sonnets", "list").output
        #expect(second.contains("From the cache"))
        #expect(second.contains("No changes on the server"))

        // A correction on the server (as curl would make it) reaches the reader, which says so.
        let client = try server.makeClient()
        let sonnet = try #require(try await client.query("Sonnet").whereKey("number", equalTo: 22).first())
        var lines: [String] = sonnet["lines"] ?? []
        lines[0] = "My glass shall not persuade me I am old, (corrected)"
        sonnet["lines"] = lines
        try await sonnet.save()
        let third = try reader.run("sonnets", "list").output
        #expect(third.contains("The sonnets changed on the server"))
        #expect(third.contains("(corrected)"))
        #expect(try reader.run("sonnets", "show", "22").output.contains("(corrected)"))

        // Offline, the reader still shows its copy.
        server.stop()
        let offline = try reader.run("sonnets", "list").output
        #expect(offline.contains("From the cache"))
        #expect(offline.contains("cannot be reached"))
        #expect(try reader.run("sonnets", "show", "18").output.contains("Shall I compare thee to a summer's day?"))
    }
}
