import Foundation
import RoostTestSupport
import Testing

/// Every code block of README.md is checked here, so the README cannot drift from the code:
/// the Swift blocks are the compiled `Examples/ReadmeSnippets/main.swift` (plus a manifest `swift package` reads),
/// the "Try it" curl lines run against a real server, `make` lines name Makefile targets, the configuration
/// table matches `roost serve --help`, and the layout names paths that exist.
@Suite struct ReadmeTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func file(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// The README's fenced blocks of `language` ("" for none), each with its lines' newlines.
    static func blocks(_ language: String) throws -> [String] {
        var blocks: [String] = []
        var current: String?
        var inOtherBlock = false  // A block of another language: its closing fence opens nothing.
        for line in try file("README.md").split(separator: "\n", omittingEmptySubsequences: false) {
            if inOtherBlock {
                if line == "```" { inOtherBlock = false }
            } else if current == nil, line == "```" + language {
                current = ""
            } else if current == nil, line.hasPrefix("```") {
                inOtherBlock = true
            } else if current != nil, line == "```" {
                blocks.append(current!)
                current = nil
            } else if current != nil {
                current! += line + "\n"
            }
        }
        return blocks
    }

    static func executable(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    @Test func theSwiftBlocksAreTheCompiledSnippetFile() throws {
        let code = try ReadmeTests.blocks("swift").filter { !$0.hasPrefix("// swift-tools-version") }
        #expect(code.count == 4)
        #expect(code.joined(separator: "\n") == (try ReadmeTests.file("Examples/ReadmeSnippets/main.swift")))
        // That file is the `readme-snippets` target, which this test target depends on: it compiled.
        #expect(try ReadmeTests.file("Package.swift").contains(#".executableTarget(name: "readme-snippets", dependencies: ["Roost"], path: "Examples/ReadmeSnippets")"#))
    }

    @Test func theManifestIsReadBySwiftPackage() throws {
        let manifest = try #require(try ReadmeTests.blocks("swift").first { $0.hasPrefix("// swift-tools-version") })
        #expect(manifest.contains(#".package(path: "../roost")"#))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("roost-readme-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let app = directory.appendingPathComponent("MyApp")
        try FileManager.default.createDirectory(at: app, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(at: directory.appendingPathComponent("roost"), withDestinationURL: ReadmeTests.root)
        try manifest.write(to: app.appendingPathComponent("Package.swift"), atomically: true, encoding: .utf8)
        let swift = try #require(ReadmeTests.executable("swift"))
        let dump = try ChildProcess.run(swift, ["package", "dump-package", "--package-path", app.path])
        #expect(dump.status == 0, "\(dump.output)")
        let compact = dump.output.filter { !$0.isWhitespace }
        #expect(compact.contains(#""product":["Roost","Roost""#), "\(dump.output)")  // MyApp depends on the Roost product.
        #expect(try ReadmeTests.file("Package.swift").contains(#".library(name: "Roost", targets: ["Roost"])"#))
    }

    @Test func makeLinesNameMakefileTargets() throws {
        let targets = Set(try ReadmeTests.file("Makefile").split(separator: "\n").compactMap { line -> String? in
            guard let colon = line.firstIndex(of: ":"), !line.hasPrefix("\t"), !line.hasPrefix(".") else { return nil }
            return String(line[..<colon])
        })
        let makeLines = try ReadmeTests.blocks("sh").flatMap { $0.split(separator: "\n") }.filter { $0.hasPrefix("make ") }
        #expect(makeLines.count >= 2)
        for line in makeLines {
            let target = String(line.split(separator: " ")[1])
            #expect(targets.contains(target), "make \(target) in \(targets)")
        }
    }

    @Test func theConfigurationTableMatchesServeHelp() throws {
        let rows = try ReadmeTests.file("README.md").split(separator: "\n").filter { $0.hasPrefix("| `--") }
        let table = rows.map { row -> (flag: String, variable: String) in
            let cells = row.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "`")) }
            return (cells[0], cells[1])
        }
        let help = try ChildProcess.run(try ServerProcess.binary().path, ["serve", "--help"])
        #expect(help.status == 0)
        let options = Set(help.output.matches(of: /--[a-z][a-z-]*/).map { String($0.output) })
            .filter { !$0.hasPrefix("--no-") && $0 != "--help" && $0 != "--version" }
        #expect(Set(table.map(\.flag)) == options)
        for (flag, variable) in table {
            #expect(variable == "ROOST_" + flag.dropFirst(2).uppercased().replacing("-", with: "_"))
            #expect(help.output.contains(variable), "\(variable) in roost serve --help")
        }
    }

    @Test func theLayoutNamesPathsThatExist() throws {
        let layout = try #require(try ReadmeTests.blocks("").first { $0.contains("Server/roost/") })
        for line in layout.split(separator: "\n") where !line.hasPrefix(" ") {
            let path = String(line.split(separator: " ")[0])
            #expect(FileManager.default.fileExists(atPath: ReadmeTests.root.appendingPathComponent(path).path), "\(path)")
        }
    }

    /// The data commands, line by line, on a data directory a real server made (and still serves: they run online).
    @Test func theDataCommandsWork() throws {
        let block = try #require(try ReadmeTests.blocks("sh").first { $0.hasPrefix("roost backup") })
        let server = try ReadmeServer()
        let directory = server.directory
        let lines = block.split(separator: "\n")
        #expect(lines.count == 3)
        for line in lines {
            let run = try ChildProcess.run("/bin/sh", ["-c", "cd '\(directory.path)' && '\(try ServerProcess.binary().path)'" + line.dropFirst("roost".count)])
            #expect(run.status == 0, "\(line): \(run.output)")
        }
        for made in ["roost-backup.sqlite", "app.jsonl", "new-data/roost.sqlite"] {
            #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent(made).path), "\(made)")
        }
    }

    /// The "Try it" block, command by command, against a real server started as `make serve` starts it (app id
    /// `roost`, `./roost-data` holding a generated master key); only the port and the PUT's objectId (the one the
    /// POST answered) are put in.
    @Test func theCurlLinesWorkAgainstARealServer() throws {
        let block = try #require(try ReadmeTests.blocks("sh").first { $0.hasPrefix("curl") })
        let server = try ReadmeServer()
        let directory = server.directory
        let started = server.listening
        let port = try #require(started.firstMatch(of: /127\.0\.0\.1:(\d+)\/parse/)?.output.1)

        // Commands (backslash continuations joined), each followed by the comment showing its answer, if any.
        var commands: [(command: String, shown: String?)] = []
        for line in block.replacing("\\\n", with: " ").split(separator: "\n") {
            if line.hasPrefix("# ") { commands[commands.count - 1].shown = String(line.dropFirst(2)) } else { commands.append((String(line), nil)) }
        }
        #expect(commands.count == 4)
        let curl = try #require(ReadmeTests.executable("curl"))
        var objectId = "Ed1nuqPvcm"
        var answers: [String] = []
        for (command, shown) in commands {
            let script = "cd '\(directory.path)' && " + command.replacing("127.0.0.1:1337", with: "127.0.0.1:\(port)")
                .replacing("/Ed1nuqPvcm", with: "/\(objectId)").replacing("curl ", with: "'\(curl)' -sS ")
            let run = try ChildProcess.run("/bin/sh", ["-c", script])
            #expect(run.status == 0, "\(command): \(run.output)")
            answers.append(run.output)
            // The keys (and plain values) the README shows are in the answer.
            for key in (shown ?? "").matches(of: /"([A-Za-z]+)":/).map({ String($0.output.1) }) {
                #expect(run.output.contains("\"\(key)\":"), "\(key) in \(run.output)")
            }
            if let id = run.output.firstMatch(of: /"objectId":"([A-Za-z0-9]+)"/)?.output.1, answers.count == 1 { objectId = String(id) }
        }
        #expect(answers[1].contains(#""playerName":"Sean Plott""#))
        #expect(answers[2].contains(#""score":1338"#))
        #expect(answers[3].contains(#""className":"GameScore""#))
    }
}

/// A real server in a fresh directory, started as `make serve` starts it (`./roost-data` in that directory), for the
/// README's command lines; stopped and its directory removed when released.
final class ReadmeServer {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("roost-readme-\(UUID().uuidString)")
    private let process: ChildProcess
    private let output: (read: Int32, write: Int32)
    /// The server's "listening on" line.
    private(set) var listening = ""

    init(port: Int = 0, arguments: [String] = [], environment: [String: String] = ["ROOST_EXIT_WITH_PARENT": "1"]) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        output = try ChildProcess.makePipe()
        process = try ChildProcess(
            executable: try ServerProcess.binary().path,
            arguments: ["serve", "--port", String(port), "--data-dir", directory.appendingPathComponent("roost-data").path]
                + arguments + ["--log-level", "warning"],
            environment: environment, stdout: output.write)
        close(output.write)
        listening = try #require(ChildProcess.read(output.read, until: "listening on"))
    }

    deinit {
        process.terminate()
        close(output.read)
        try? FileManager.default.removeItem(at: directory)
    }
}
