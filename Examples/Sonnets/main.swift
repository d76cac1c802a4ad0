// sonnets: a reader that keeps server data for offline use and refreshes it.
//
//   sonnets import     loads Shakespeare's 154 sonnets (public domain) into the server
//   sonnets list       the first line of each, from the cache at once, then refreshed from the server
//   sonnets show <n>   one sonnet
//
// Environment: ROOST_SERVER_URL (default http://127.0.0.1:1337/parse), ROOST_APP_ID (default roost),
// ROOST_STORAGE_DIR (default: the XDG data directory).
import Foundation
import Roost

let environment = ProcessInfo.processInfo.environment
let client = try RoostClient(.init(
    serverURL: URL(string: environment["ROOST_SERVER_URL"] ?? "http://127.0.0.1:1337/parse")!,
    applicationId: environment["ROOST_APP_ID"] ?? "roost",
    storageDirectory: environment["ROOST_STORAGE_DIR"].map { URL(fileURLWithPath: $0) },
    requestTimeout: 5))

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(1)
}

/// The whole collection, as one cached query.
let allSonnets = client.query("Sonnet").order(byAscending: "number").limit(200)

func firstLines(_ sonnets: [RoostObject]) {
    for sonnet in sonnets {
        let number: Int = sonnet["number"] ?? 0
        let first: String = (sonnet["lines"] as [String]?)?.first ?? ""
        print(String(format: "%4d  ", number) + first)
    }
}

func formatted(_ date: Date?) -> String {
    guard let date else { return "never" }
    let formatter = DateFormatter()
    formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
    return formatter.string(from: date)
}

let arguments = Array(CommandLine.arguments.dropFirst())
let semaphore = DispatchSemaphore(value: 0)
Task.detached {
    do {
        switch arguments.first {
        case "import":
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
        case "list", nil:
            var shown = false
            for try await answer in allSonnets.cachePolicy(.cacheThenNetwork).results() {
                switch (answer.source, answer.networkError) {
                case (.cache, nil):
                    print("From the cache (last updated \(formatted(answer.lastUpdated))):")
                    firstLines(answer.objects)
                    shown = true
                case (.cache, .some):
                    print("The server cannot be reached; this is the copy from \(formatted(answer.lastUpdated)).")
                    if !shown { firstLines(answer.objects) }
                case (.network, _):
                    if !shown {
                        firstLines(answer.objects)
                        print("Fetched from the server at \(formatted(answer.lastUpdated)).")
                    } else if answer.changed == true {
                        print("The sonnets changed on the server; refreshed at \(formatted(answer.lastUpdated)):")
                        firstLines(answer.objects)
                    } else {
                        print("No changes on the server (checked at \(formatted(answer.lastUpdated))).")
                    }
                }
            }
        case "show":
            guard let text = arguments.dropFirst().first, let number = Int(text) else { fail("usage: sonnets show <n>") }
            let sonnets = try await allSonnets.cachePolicy(.cacheElseNetwork).find()
            guard let sonnet = sonnets.first(where: { ($0["number"] as Int?) == number }) else { fail("There is no sonnet \(number).") }
            print("Sonnet \(number)\n")
            for line in (sonnet["lines"] as [String]?) ?? [] { print(line) }
        default:
            fail("usage: sonnets import|list|show <n>")
        }
    } catch {
        fail("sonnets: \(error)")
    }
    semaphore.signal()
}
semaphore.wait()
