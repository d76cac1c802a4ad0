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
        /// Where it reaches the server (through a relay that can cut its network), when not directly.
        var serverURL: URL?

        init(server: ServerProcess, serverURL: URL? = nil) {
            self.server = server
            self.serverURL = serverURL
        }

        var environment: [String: String] {
            ["ROOST_SERVER_URL": (serverURL ?? server.url).absoluteString, "ROOST_APP_ID": ServerProcess.applicationId,
             "ROOST_STORAGE_DIR": storage]
        }

        func run(_ program: String, _ arguments: String..., input: String = "") throws -> (status: Int32, output: String) {
            try ChildProcess.run(try ExampleTests.program(program), arguments, environment: environment, input: input)
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

    @Test func helpAndVersionListTheCommandsAndTouchNoStorage() throws {
        let server = try ServerProcess(start: false)
        let device = Device(server: server)
        for (program, commands) in [("todo", ["add", "list", "done", "rm", "sync", "whoami", "signup", "login", "logout"]),
                                    ("sonnets", ["import", "list", "show"])] {
            let help = try device.run(program, "--help")
            #expect(help.status == 0, "\(help.output)")
            for command in commands { #expect(help.output.contains("  \(command)"), "\(program): \(command) in \(help.output)") }
            for variable in ["ROOST_SERVER_URL", "ROOST_APP_ID", "ROOST_STORAGE_DIR"] { #expect(help.output.contains(variable)) }
            let version = try device.run(program, "--version")
            #expect(version.status == 0)
            #expect(version.output.hasPrefix("\(program) "))
        }
        #expect(try device.run("todo", "help", "login").output.contains("--move"))
        #expect(!FileManager.default.fileExists(atPath: device.storage))
    }

    @Test func todoRefusesNumbersItDoesNotHave() throws {
        let server = try ServerProcess()
        let device = Device(server: server)
        for command in ["done", "rm"] {
            let empty = try device.run("todo", command, "1")
            #expect(empty.status == 1, "\(empty.output)")  // It trapped (132) on an empty list.
            #expect(empty.output.contains("There are no to-dos yet"))
        }
        #expect(try device.run("todo", "add", "Water the plants").status == 0)
        let beyond = try device.run("todo", "done", "99")
        #expect(beyond.status == 1)
        #expect(beyond.output.contains("There is no to-do 99; `todo list` shows them (1 to 1)."))
        #expect(try device.run("todo", "done", "1").output.contains("Done: Water the plants"))
    }

    @Test func todoSignUpWhileLoggedInIsRefused() async throws {
        let server = try ServerProcess()
        let device = Device(server: server)
        #expect(try device.run("todo", "signup", "ann", input: "a long passphrase\n").output.contains("Signed up as ann"))
        let second = try device.run("todo", "signup", "frank", input: "another passphrase\n")
        #expect(second.status == 1)
        #expect(second.output.contains("You are logged in as ann. Log out first"), "\(second.output)")
        #expect(try device.run("todo", "whoami").output.contains("ann ("))
        let client = try server.makeClient()
        await #expect(throws: RoostError.self) { try await client.logIn(username: "frank", password: "another passphrase") }
    }

    @Test func todoLoginWarnsAboutAnonymousTodosAndCanMoveThem() throws {
        let server = try ServerProcess()
        let phone = Device(server: server)
        #expect(try phone.run("todo", "add", "Buy 100 tons of cat litter").status == 0)
        #expect(try phone.run("todo", "signup", "ann", input: "a long passphrase\n").status == 0)

        let laptop = Device(server: server)
        #expect(try laptop.run("todo", "add", "Call the vet").status == 0)
        let warned = try laptop.run("todo", "login", "ann", input: "a long passphrase\n")
        #expect(warned.status == 1)
        #expect(warned.output.contains("You have 1 to-do(s) as an anonymous user; logging in as ann would leave them behind."))
        #expect(warned.output.contains("todo signup <new username>") && warned.output.contains("todo login ann --move"))
        #expect(try laptop.run("todo", "whoami").output.contains("anonymous user"))

        let moved = try laptop.run("todo", "login", "ann", "--move", input: "a long passphrase\n")
        #expect(moved.output.contains("Logged in as ann") && moved.output.contains("Moved 1 to-do(s) into your list."), "\(moved.output)")
        let list = try laptop.run("todo", "list").output
        #expect(list.contains("1. [ ] Buy 100 tons of cat litter\n") && list.contains("2. [ ] Call the vet\n"), "\(list)")
        #expect(try phone.run("todo", "list").output.contains("2. [ ] Call the vet\n"))
    }

    /// On a terminal the password is read with echo off: what was typed never shows on the screen.
    @Test func todoReadsThePasswordWithoutEchoOnATerminal() throws {
        let server = try ServerProcess()
        let device = Device(server: server)
        let terminal = try PseudoTerminal()
        let outputPath = device.storage + ".out"
        defer { unlink(outputPath) }
        let output = open(outputPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        defer { close(output) }
        let process = try ChildProcess(
            executable: try ExampleTests.program("todo"), arguments: ["signup", "ann"],
            environment: ["ROOST_SERVER_URL": server.url.absoluteString, "ROOST_APP_ID": ServerProcess.applicationId,
                          "ROOST_STORAGE_DIR": device.storage],
            stdin: terminal.follower, stdout: output, stderrPath: outputPath)
        defer { process.terminate() }
        // Typed only once the prompt is out (echo is switched off before it is printed).
        let deadline = Date().addingTimeInterval(30)
        while !((try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "").contains("Password:"), Date() < deadline {
            usleep(20_000)
        }
        terminal.type("secret passphrase\n")
        while process.isRunning, Date() < deadline { usleep(20_000) }
        #expect(!process.isRunning)
        let printed = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        #expect(printed.contains("Signed up as ann"), "\(printed)")
        #expect(!terminal.readEcho().contains("secret passphrase"))
    }

    /// A storage path that cannot be a directory (a file is in the way) ends `sonnets` with a one-line
    /// `sonnets: …` message; an empty server URL is the default one, not a trap.
    @Test func sonnetsSaysWhatIsWrongWithItsStorage() throws {
        let server = try ServerProcess(start: false)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("roost-example-\(UUID().uuidString)")
        try Data("a file".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let blocked = try ChildProcess.run(try ExampleTests.program("sonnets"), ["list"], environment: [
            "ROOST_SERVER_URL": server.url.absoluteString, "ROOST_APP_ID": ServerProcess.applicationId,
            "ROOST_STORAGE_DIR": file.appendingPathComponent("sub").path,
        ])
        #expect(blocked.status == 1 && blocked.output.hasPrefix("sonnets: "), "\(blocked)")
        // The default URL's port may or may not have a server on this machine: either way an answer (0 or 1), not a trap.
        let emptyURL = try ChildProcess.run(try ExampleTests.program("sonnets"), ["show", "1"], environment: [
            "ROOST_SERVER_URL": "", "ROOST_APP_ID": ServerProcess.applicationId, "ROOST_STORAGE_DIR": Device(server: server).storage,
        ])
        #expect(emptyURL.status == 0 || emptyURL.status == 1, "\(emptyURL)")
    }

    @Test func sonnetsShowIsFreshAndListSaysWhatChangedAndWhen() async throws {
        let server = try ServerProcess()
        let reader = Device(server: server)
        let before = try reader.run("sonnets", "list")
        #expect(before.output.contains("There are no sonnets on the server yet: run `sonnets import` to load them."), "\(before.output)")
        #expect(try reader.run("sonnets", "import").status == 0)
        #expect(try reader.run("sonnets", "list").output.contains("Fetched from the server"))
        #expect(try reader.run("sonnets", "show", "5").output.contains("Those hours, that with gentle work did frame"))

        let client = try server.makeClient()
        let sonnet = try #require(try await client.query("Sonnet").whereKey("number", equalTo: 5).first())
        sonnet["lines"] = ["Those hours, that with gentle work did frame (corrected)"]
        try await sonnet.save()
        let changedAt = try #require(sonnet.updatedAt)

        // `show` reads the server first: the correction, without a `list` in between.
        #expect(try reader.run("sonnets", "show", "5").output.contains("(corrected)"))
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        let list = try reader.run("sonnets", "list").output
        #expect(list.contains("sonnet 5 changed on \(formatter.string(from: changedAt)): Those hours, that with gentle work did frame (corrected)"),
                "\(list)")
        #expect(!list.contains("sonnet 6 changed"))
        #expect(try reader.run("sonnets", "show", "200").output.contains("There is no sonnet 200"))
    }
}

/// A pseudo-terminal for a child's stdin: what the terminal echoes is read from the leader side.
/// The test keeps its follower open, so the echo stays readable after the child has exited.
final class PseudoTerminal {
    let leader: Int32
    let follower: Int32

    init() throws {
        // posix_openpt and friends are not visible from Swift's Glibc; these are their ioctls (linux/tty: TIOCSPTLCK, TIOCGPTN).
        leader = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)
        var unlocked: CInt = 0
        var number: CInt = 0
        guard leader >= 0, ioctl(leader, 0x4004_5431, &unlocked) == 0, ioctl(leader, 0x8004_5430, &number) == 0 else {
            throw ChildProcessError.pipeFailed(errno)
        }
        follower = open("/dev/pts/\(number)", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard follower >= 0 else { throw ChildProcessError.pipeFailed(errno) }
        _ = fcntl(leader, F_SETFL, fcntl(leader, F_GETFL) | O_NONBLOCK)
    }

    deinit {
        close(follower)
        close(leader)
    }

    func type(_ text: String) {
        let bytes = Array(text.utf8)
        _ = write(leader, bytes, bytes.count)
    }

    /// Everything the terminal echoed (and the child printed to it) so far.
    func readEcho() -> String {
        var seen: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(leader, &buffer, buffer.count)
            if count <= 0 { break }
            seen += buffer[..<count]
        }
        return String(decoding: seen, as: UTF8.self)
    }
}
