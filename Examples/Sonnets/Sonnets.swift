// sonnets: a reader that keeps server data for offline use and refreshes it (`sonnets --help`).
//
//   sonnets import     loads Shakespeare's 154 sonnets (public domain) into the server
//   sonnets list       the first line of each, from the cache at once, then refreshed from the server
//   sonnets show <n>   one sonnet, from the server (the cached copy when it cannot be reached)
//   sonnets follow <n> one sonnet, shown again the moment it is corrected on the server (LiveQuery)
import ArgumentParser
import Foundation
import Roost

@main
struct Sonnets: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sonnets",
        abstract: "Shakespeare's sonnets from a Roost server, kept for offline reading.",
        discussion: """
            Environment:
              ROOST_SERVER_URL   the Parse API (default http://127.0.0.1:1337/parse)
              ROOST_APP_ID       the application id (default roost)
              ROOST_STORAGE_DIR  the cache (default $XDG_DATA_HOME/roost/sonnets)
            """,
        version: "sonnets 0.1.0",
        subcommands: [Import.self, List.self, Show.self, Follow.self],
        defaultSubcommand: List.self)
}

struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Load the 154 sonnets into the server (once).")

    func run() async throws {
        let client = makeClient()
        guard let url = Bundle.module.url(forResource: "sonnets", withExtension: "txt"),
            let text = try? String(contentsOf: url, encoding: .utf8)
        else { fail("sonnets.txt is missing from the program's resources") }
        if try await client.query("Sonnet").count() > 0 { fail("The sonnets are already on the server.") }
        // One sonnet per block of lines; blocks are separated by blank (or whitespace-only) lines.
        var blocks: [[String]] = [[]]
        for line in text.components(separatedBy: .newlines) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty {
                if !blocks[blocks.count - 1].isEmpty { blocks.append([]) }
            } else {
                blocks[blocks.count - 1].append(trimmed)
            }
        }
        let sonnets = blocks.filter { !$0.isEmpty }.enumerated().map { index, lines -> RoostObject in
            let sonnet = client.object("Sonnet")
            sonnet["number"] = index + 1
            sonnet["lines"] = lines
            return sonnet
        }
        try await client.saveAll(sonnets)
        print("Imported \(sonnets.count) sonnets.")
    }
}

struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The first line of each sonnet: the cached copy at once, then the server's, saying what changed there.")

    func run() async throws {
        let client = makeClient()
        var cached: [RoostObject]?
        for try await answer in allSonnets(client).cachePolicy(.cacheThenNetwork).results() {
            switch (answer.source, answer.networkError) {
            case (.cache, nil) where answer.objects.isEmpty:
                break  // Cached before the import: nothing to show.
            case (.cache, nil):
                print("From the cache (last updated \(formatted(answer.lastUpdated))):")
                firstLines(answer.objects)
                cached = answer.objects
            case (.cache, .some):
                print("The server cannot be reached; this is the copy from \(formatted(answer.lastUpdated)).")
                if cached == nil { firstLines(answer.objects) }
            case (.network, _):
                if answer.objects.isEmpty {
                    print("There are no sonnets on the server yet: run `sonnets import` to load them.")
                } else if let cached {
                    let changes = differences(from: cached, to: answer.objects)
                    if changes.isEmpty {
                        print("No changes on the server (checked at \(formatted(answer.lastUpdated))).")
                    } else {
                        print("The sonnets changed on the server (checked at \(formatted(answer.lastUpdated))):")
                        changes.forEach { print("  " + $0) }
                    }
                } else {
                    firstLines(answer.objects)
                    print("Fetched from the server at \(formatted(answer.lastUpdated)).")
                }
            }
        }
    }

    /// What changed between the cached copy and the server's: each sonnet changed, added or removed, and when.
    func differences(from old: [RoostObject], to new: [RoostObject]) -> [String] {
        let before = Dictionary(old.map { (sonnetNumber($0), $0) }, uniquingKeysWith: { first, _ in first })
        let after = Set(new.map(sonnetNumber))
        var changes: [String] = []
        for sonnet in new {
            let number = sonnetNumber(sonnet)
            guard let previous = before[number] else {
                changes.append("sonnet \(number) added on \(formatted(sonnet.createdAt)): \(firstLine(of: sonnet))")
                continue
            }
            if previous.updatedAt != sonnet.updatedAt || previous.allFields != sonnet.allFields {
                changes.append("sonnet \(number) changed on \(formatted(sonnet.updatedAt)): \(firstLine(of: sonnet))")
            }
        }
        for number in before.keys.sorted() where !after.contains(number) {
            changes.append("sonnet \(number) removed")
        }
        return changes
    }
}

struct Show: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "One sonnet, as the server has it now (the cached copy when the server cannot be reached).")
    @Argument(help: "Its number, 1 to 154.") var number: Int

    func run() async throws {
        let client = makeClient()
        // The server first: a cached copy of any age would hide corrections made there. Its own query, so
        // `list` still reports the change since it last looked.
        let query = client.query("Sonnet").whereKey("number", equalTo: number).cachePolicy(.networkElseCache)
        var found: [RoostObject]
        var offlineCopy: Date?
        do {
            found = []
            for try await answer in query.results() {
                found = answer.objects
                if answer.networkError != nil { offlineCopy = answer.lastUpdated }  // The cached copy stands in.
            }
        } catch let error as RoostError where error.isTransport {
            // Offline and never shown before: the copy `list` keeps has it.
            let all = allSonnets(client).cachePolicy(.cacheOnly)
            guard let cached = try? await all.find() else { throw error }
            found = cached.filter { sonnetNumber($0) == number }
            offlineCopy = all.lastUpdated
        }
        if let offlineCopy { print("(The server cannot be reached; this is the copy from \(formatted(offlineCopy)).)\n") }
        guard let sonnet = found.first else {
            if offlineCopy == nil, try await client.query("Sonnet").count() == 0 {
                fail("There are no sonnets on the server yet: run `sonnets import` to load them.")
            }
            fail("There is no sonnet \(number).")
        }
        print("Sonnet \(number)\n")
        for line in (sonnet["lines"] as [String]?) ?? [] { print(line) }
    }
}

struct Follow: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show a sonnet, then show it again the moment it is corrected on the server (Ctrl-C to stop).")
    @Argument(help: "Its number, 1 to 154.") var number: Int
    @Option(help: "Stop after this many corrections (for scripts).") var count: Int?

    func run() async throws {
        let client = makeClient()
        let query = client.query("Sonnet").whereKey("number", equalTo: number)
        var corrections = 0
        var shown = false
        for try await event in query.subscribe() {
            switch event.kind {
            case .subscribed where !shown || event.resumed == nil:
                // Live first, then read: a correction made in between is not lost, at worst shown twice. (Without
                // `resumed`, the server could not say what was missed while disconnected: read it again.)
                guard let sonnet = try await query.cachePolicy(.networkElseCache).first() else {
                    fail("There is no sonnet \(number) on the server (`sonnets import` loads them).")
                }
                show(sonnet, heading: shown ? "Reconnected; as the server has it now:" : "Sonnet \(number) (following corrections; Ctrl-C to stop)")
                shown = true
            case .subscribed:
                say("(reconnected)")
            case .created, .entered, .updated:
                guard let sonnet = event.object else { continue }
                show(sonnet, heading: "Corrected at \(formatted(sonnet.updatedAt)):")
                corrections += 1
            case .refreshed:
                guard let sonnet = event.objects.first else { continue }
                show(sonnet, heading: "Reconnected; as the server has it now (\(formatted(sonnet.updatedAt))):")
                corrections += 1
            case .left, .deleted:
                say("Sonnet \(number) was removed from the server.")
                corrections += 1
            }
            if let count, corrections >= count { break }
        }
    }

    private func show(_ sonnet: RoostObject, heading: String) {
        say(heading + "\n")
        for line in (sonnet["lines"] as [String]?) ?? [] { say(line) }
        say("")
    }
}

/// The client, or an exit with `sonnets: <why>` (a bad URL; a damaged, read-only or full storage
/// directory): a plain message, never a trap. An empty `ROOST_SERVER_URL` means the default.
func makeClient() -> RoostClient {
    let environment = ProcessInfo.processInfo.environment
    let serverAddress = environment["ROOST_SERVER_URL"].flatMap { $0.isEmpty ? nil : $0 } ?? "http://127.0.0.1:1337/parse"
    guard let serverURL = URL(string: serverAddress), serverURL.scheme != nil else {
        fail("sonnets: ROOST_SERVER_URL is not a URL: \(serverAddress)")
    }
    do {
        return try RoostClient(.init(
            serverURL: serverURL, applicationId: environment["ROOST_APP_ID"] ?? "roost",
            storageDirectory: environment["ROOST_STORAGE_DIR"].map { URL(fileURLWithPath: $0) }, requestTimeout: 5))
    } catch {
        fail("sonnets: \(error)")
    }
}

/// The whole collection, as one cached query.
func allSonnets(_ client: RoostClient) -> RoostQuery {
    client.query("Sonnet").order(byAscending: "number").limit(200)
}

func sonnetNumber(_ sonnet: RoostObject) -> Int { sonnet["number"] ?? 0 }

func firstLine(of sonnet: RoostObject) -> String { (sonnet["lines"] as [String]?)?.first ?? "" }

func firstLines(_ sonnets: [RoostObject]) {
    for sonnet in sonnets { print(String(format: "%4d  ", sonnetNumber(sonnet)) + firstLine(of: sonnet)) }
}

func formatted(_ date: Date?) -> String {
    guard let date else { return "never" }
    let formatter = DateFormatter()
    formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
    return formatter.string(from: date)
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(1)
}



/// Prints a line at once (`print` is block-buffered into a pipe: a live line would wait there).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
