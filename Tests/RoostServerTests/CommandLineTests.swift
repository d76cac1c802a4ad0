import Foundation
import RoostTestSupport
import Testing

/// `roost`'s command line, run as a user runs it: switches, environment variables, refusals that name
/// what is wrong, and start-up failures that leave no files behind.
@Suite struct CommandLineTests {
    /// A data directory path that does not exist yet (the runs below must not create it).
    static func freshPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("roost-cli-\(UUID().uuidString)").path
    }

    /// Runs `roost` with `arguments`; a run still going after 30 s is stopped and reported with status nil.
    static func run(_ arguments: [String], environment: [String: String] = [:]) throws -> (status: Int32?, output: String) {
        let outputPath = freshPath() + ".out"
        defer { unlink(outputPath) }
        let output = open(outputPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        defer { close(output) }
        let process = try ChildProcess(executable: try TestServer.binary().path, arguments: arguments,
                                       environment: environment.merging(["ROOST_EXIT_WITH_PARENT": "1"]) { _, harness in harness },
                                       stdout: output, stderrPath: outputPath)
        let deadline = Date().addingTimeInterval(30)
        while process.isRunning, Date() < deadline { usleep(20_000) }
        let status: Int32? = process.isRunning ? nil : process.waitUntilExit()
        process.terminate()
        return (status, (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "")
    }

    @Test func booleanOptionsAreSwitches() async throws {
        let custom = try TestServer(arguments: ["--allow-custom-object-id", "--no-pin-threads"])
        let created = try await custom.request("POST", "/classes/Item", json: ["objectId": "myOwnId01", "n": 1])
        #expect(created.status == 201)
        #expect(created.json["objectId"] == "myOwnId01")

        let switchedOff = try TestServer(arguments: ["--no-allow-custom-object-id"])
        #expect(try await switchedOff.request("POST", "/classes/Item", json: ["objectId": "myOwnId01"]).status == 400)
    }

    @Test func environmentVariablesAcceptTheUsualBooleanWords() async throws {
        for word in ["true", "1", "yes", "YES"] {
            let server = try TestServer(environment: ["ROOST_ALLOW_CUSTOM_OBJECT_ID": word, "ROOST_PIN_THREADS": "no"])
            #expect(try await server.request("POST", "/classes/Item", json: ["objectId": "fromEnv0001"]).status == 201, "\(word)")
        }
        for word in ["false", "0", "no"] {
            let server = try TestServer(environment: ["ROOST_ALLOW_CUSTOM_OBJECT_ID": word])
            #expect(try await server.request("POST", "/classes/Item", json: ["objectId": "fromEnv0001"]).status == 400, "\(word)")
        }
        // A flag wins over its variable.
        let server = try TestServer(arguments: ["--allow-custom-object-id"], environment: ["ROOST_ALLOW_CUSTOM_OBJECT_ID": "no"])
        #expect(try await server.request("POST", "/classes/Item", json: ["objectId": "fromFlag001"]).status == 201)
    }

    @Test(arguments: [
        (["--threads", "-3"], [String: String](), "--threads"),
        (["--threads", "0"], [:], "--threads"),
        (["--port", "70000"], [:], "--port"),
        (["--session-length", "0"], [:], "--session-length"),
        (["--log-level", "loud"], [:], "--log-level"),
        (["--default-limit", "0"], [:], "--default-limit"),
        ([], ["ROOST_DEFAULT_LIMIT": "-1"], "ROOST_DEFAULT_LIMIT"),
        ([], ["ROOST_PORT": "abc"], "ROOST_PORT"),
        ([], ["ROOST_THREADS": "-3"], "ROOST_THREADS"),
        ([], ["ROOST_PIN_THREADS": "maybe"], "ROOST_PIN_THREADS"),
        ([], ["ROOST_ALLOW_CUSTOM_OBJECT_ID": "sure"], "ROOST_ALLOW_CUSTOM_OBJECT_ID"),
        ([], ["ROOST_LOG_LEVEL": "loud"], "ROOST_LOG_LEVEL"),
        // A body budget must hold the largest body allowed.
        (["--max-buffered-body", "1000000"], [:], "--max-buffered-body"),
        ([], ["ROOST_MAX_BUFFERED_BODY_PER_IP": "1000000"], "ROOST_MAX_BUFFERED_BODY_PER_IP"),
        (["--max-body", "300000000"], [:], "--max-buffered-body"),
    ])
    func badValuesAreRefusedNamingTheFlagOrVariable(arguments: [String], environment: [String: String], named: String) throws {
        let dataDirectory = CommandLineTests.freshPath()
        let port = environment["ROOST_PORT"] == nil ? ["--port", "0"] : []
        let result = try CommandLineTests.run(["serve", "--data-dir", dataDirectory] + port + arguments, environment: environment)
        #expect(result.status == 64 || result.status == 1, "\(result.output)")
        #expect(result.output.contains("invalid value for \(named)"), "\(result.output)")
        #expect(!FileManager.default.fileExists(atPath: dataDirectory))
    }

    /// `--live-query-classes` entries are regular expressions (Parse's `liveQuery.classNames`): one PCRE2 refuses stops
    /// the start, naming the flag or variable, the entry and PCRE2's reason.
    @Test(arguments: [(["--live-query-classes", "Note,Test("], [String: String](), "--live-query-classes"),
                      ([], ["ROOST_LIVE_QUERY_CLASSES": "Note,Test("], "ROOST_LIVE_QUERY_CLASSES")])
    func anInvalidLiveQueryClassPatternStopsTheStart(arguments: [String], environment: [String: String], named: String) throws {
        let dataDirectory = CommandLineTests.freshPath()
        let result = try CommandLineTests.run(["serve", "--data-dir", dataDirectory, "--port", "0"] + arguments, environment: environment)
        #expect(result.status == 64, "\(result.output)")
        #expect(result.output.contains("invalid value for \(named): 'Test(' is not a regular expression (missing closing parenthesis"),
                "\(result.output)")
        #expect(!FileManager.default.fileExists(atPath: dataDirectory))
    }

    @Test func versionAndHelpTouchNothing() throws {
        let dataDirectory = CommandLineTests.freshPath()
        for arguments in [["--version"], ["serve", "--version"]] {
            let result = try CommandLineTests.run(arguments, environment: ["ROOST_DATA_DIR": dataDirectory])
            #expect(result.status == 0)
            #expect(result.output.hasPrefix("roost "), "\(result.output)")
        }
        let help = try CommandLineTests.run(["serve", "--help"], environment: ["ROOST_DATA_DIR": dataDirectory])
        #expect(help.status == 0)
        #expect(help.output.contains("--pin-threads/--no-pin-threads"), "\(help.output)")
        #expect(help.output.contains("ROOST_"))
        #expect(!FileManager.default.fileExists(atPath: dataDirectory))
    }

    @Test func aPortInUseFailsBeforeAnyFileIsCreated() throws {
        let running = try TestServer()
        let dataDirectory = CommandLineTests.freshPath()
        let result = try CommandLineTests.run(["serve", "--port", String(running.port), "--data-dir", dataDirectory])
        #expect(result.status == 1)
        #expect(result.output.contains("cannot listen on 127.0.0.1:\(running.port): Address already in use"), "\(result.output)")
        #expect(result.output.contains("--port"))
        #expect(!FileManager.default.fileExists(atPath: dataDirectory))
    }

    @Test func aSecondServerOnTheSameDataDirectoryIsRefusedUntilTheFirstEnds() async throws {
        let first = try TestServer()
        let directory = first.dataDirectory.path
        let second = try CommandLineTests.run(["serve", "--port", "0", "--data-dir", directory])
        #expect(second.status == 1)
        #expect(second.output.contains("cannot serve from \(directory): another roost process (pid \(first.process.pid)) is using it"),
                "\(second.output)")
        #expect(second.output.contains("--data-dir"))

        // Killed outright, the first leaves no stale lock: the kernel let go of it with the process.
        first.process.kill(signal: SIGKILL)
        _ = first.process.waitUntilExit()
        let again = try TestServer(dataDirectory: first.dataDirectory)
        #expect(try await again.request("GET", "/health").status == 200)
    }

    @Test func dataDirectoryFailuresSayWhatIsWrongWithWhichPath() throws {
        let file = CommandLineTests.freshPath()
        _ = FileManager.default.createFile(atPath: file, contents: Data("not a directory".utf8))
        defer { unlink(file) }

        let isAFile = try CommandLineTests.run(["serve", "--port", "0", "--data-dir", file])
        #expect(isAFile.status == 1)
        #expect(isAFile.output.contains("the data directory \(file) is a file, not a directory"), "\(isAFile.output)")
        #expect(isAFile.output.contains("--data-dir"))

        let under = try CommandLineTests.run(["serve", "--port", "0", "--data-dir", file + "/data"])
        #expect(under.status == 1)
        #expect(under.output.contains("cannot create the data directory \(file)/data"), "\(under.output)")

        // A database path SQLite cannot open (a directory where the file should be).
        let directory = CommandLineTests.freshPath()
        try FileManager.default.createDirectory(atPath: directory + "/roost.sqlite", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let unopenable = try CommandLineTests.run(["serve", "--port", "0", "--data-dir", directory])
        #expect(unopenable.status == 1)
        #expect(unopenable.output.contains("cannot open the database in \(directory) (roost.sqlite)"), "\(unopenable.output)")
        for result in [isAFile, under, unopenable] {
            #expect(!result.output.contains("NSCocoaErrorDomain"))
        }
    }
}
