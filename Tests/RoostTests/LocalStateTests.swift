import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Roost
import RoostCore
import RoostTestSupport
import Testing

/// The client's files under stress: several processes on one storage directory, damaged files, a
/// storage path that cannot be used. Nothing traps, nothing queued is lost or silently dropped.
@Suite struct LocalStateTests {
    /// Rounds of `todo add` launched at once on one storage directory: every launch succeeds (no
    /// "database is locked"), and every to-do is listed once and stored once, with its title and owner.
    @Test(.timeLimit(.minutes(3))) func concurrentTodoProcessesShareOneStorageDirectory() async throws {
        let server = try ServerProcess()
        let device = ExampleTests.Device(server: server)
        var titles: [String] = []
        for round in 0..<2 {
            let launched = try (0..<8).map { index -> TodoProcess in
                let title = "task \(round)-\(index)"
                titles.append(title)
                return try TodoProcess(device, ["add", title])
            }
            for process in launched {
                let (status, output) = process.finish(deadline: 120)
                #expect(status == 0, "\(output)")
                #expect(!output.contains("locked"), "\(output)")
            }
        }
        let sync = try device.run("todo", "sync").output
        #expect(sync.contains("All changes are on the server."), "\(sync)")
        let list = try device.run("todo", "list").output
        for title in titles {
            #expect(list.components(separatedBy: "] \(title)\n").count == 2, "\(title) in:\n\(list)")
        }
        var request = URLRequest(url: server.url.appendingPathComponent("classes/Todo"))
        request.setValue(ServerProcess.applicationId, forHTTPHeaderField: "X-Parse-Application-Id")
        request.setValue("sdk-master-key", forHTTPHeaderField: "X-Parse-Master-Key")
        let stored = try JSONParser.parse(Array(try await URLSession.shared.data(for: request).0))["results"]?.arrayValue ?? []
        #expect(stored.compactMap { $0["title"]?.stringValue }.sorted() == titles.sorted())
        #expect(stored.allSatisfy { $0["owner"]?["objectId"] != nil && $0["ACL"] != nil })
        #expect(Set(stored.compactMap { $0["owner"]?["objectId"]?.stringValue }).count == 1)  // One anonymous user.
    }

    /// An object pinned whose creation never reached the queue (an older `todo add` pinned first, then its
    /// queue write failed on a lock): a later edit creates it whole, not as an object with only that edit.
    @Test func aPinnedObjectWhoseCreationWasNeverQueuedIsCreatedWhole() async throws {
        let server = try ServerProcess()
        let client = try server.makeClient()
        let item = client.object("Todo")
        item["title"] = "pinned only"
        item["done"] = false
        try item.pin(name: "todos")
        let loaded = try #require(try await client.query("Todo").fromLocalDatastore(pinName: "todos").first())
        loaded["done"] = true
        try await loaded.saveEventually()
        #expect(try await client.waitForPendingWrites(timeout: 30))
        let stored = try await client.query("Todo").find()
        #expect(stored.count == 1)
        #expect(stored.first?["title"] == "pinned only")
        #expect(stored.first?["done"] == true)
    }

    /// A queue file that is empty, cut short or overwritten is moved aside (never deleted) and the error
    /// says where; the next start uses a new, empty queue. (An empty file was silently taken for a new queue.)
    @Test(arguments: ["empty", "cut short", "overwritten"])
    func aDamagedQueueIsSetAsideWithAMessageSayingWhere(damage: String) async throws {
        let server = try ServerProcess(start: false)
        let storage = temporaryStorage()
        try await queueNotes(server: server, storage: storage, count: 40)
        let file = storage.appendingPathComponent("eventually.sqlite")
        try damageFile(file, how: damage)

        var message = ""
        do {
            _ = try server.makeClient(storage: storage)
        } catch let error as RoostError {
            message = error.description
        }
        let aside = try #require(message.firstMatch(of: /moved to (\S+);/)?.1, "error: \(message)")
        #expect(FileManager.default.fileExists(atPath: String(aside)))
        #expect(try server.makeClient(storage: storage).pendingCount == 0)
    }

    /// A damaged local store (cached results and pins, all of which the server has) is rebuilt.
    @Test func aDamagedCacheIsRebuilt() async throws {
        let server = try ServerProcess()
        let storage = temporaryStorage()
        try FileManager.default.createDirectory(at: storage, withIntermediateDirectories: true)
        try Data(String(repeating: "not a database ", count: 500).utf8).write(to: storage.appendingPathComponent("local.sqlite"))
        let client = try server.makeClient(storage: storage)
        let note = client.object("Note")
        note["title"] = "pinned"
        try note.pin(name: "notes")
        #expect(try await client.query("Note").fromLocalDatastore(pinName: "notes").count() == 1)
        let files = try FileManager.default.contentsOfDirectory(atPath: storage.path)
        #expect(files.contains { $0.hasPrefix("local.sqlite.damaged-") })
    }

    /// `todo` on a damaged queue, on a storage path that cannot be a directory, with a wrong app id,
    /// with a URL that has no Parse API, with an empty server URL: a plain message, never a trap or a hang.
    @Test(.timeLimit(.minutes(3))) func todoSaysWhatIsWrongInsteadOfTrappingOrHanging() async throws {
        let server = try ServerProcess()
        let device = ExampleTests.Device(server: server)
        #expect(try device.run("todo", "add", "first").status == 0)
        try damageFile(URL(fileURLWithPath: device.storage).appendingPathComponent("eventually.sqlite"), how: "overwritten")
        let damaged = try TodoProcess(device, ["list"]).finish(deadline: 60)
        #expect(damaged.status == 1 && damaged.output.contains("moved to"), "\(damaged)")
        #expect(try TodoProcess(device, ["list"]).finish(deadline: 60).status == 0)

        let file = temporaryStorage()
        try Data("a file".utf8).write(to: file)
        let blocked = try TodoProcess(device, ["list"], environment: ["ROOST_STORAGE_DIR": file.appendingPathComponent("sub").path])
            .finish(deadline: 60)
        #expect(blocked.status == 1 && blocked.output.hasPrefix("todo: "), "\(blocked)")

        let wrongApp = try TodoProcess(device, ["add", "x"], environment: ["ROOST_APP_ID": "not-the-app"]).finish(deadline: 60)
        #expect(wrongApp.status == 1 && wrongApp.output.contains("unauthorized: check the application id"), "\(wrongApp)")

        let root = "http://127.0.0.1:\(server.port)"
        let noAPI = try TodoProcess(device, ["add", "y"], environment: ["ROOST_SERVER_URL": root, "ROOST_STORAGE_DIR": temporaryStorage().path])
            .finish(deadline: 60)
        #expect(noAPI.status == 1 && noAPI.output.contains("no Parse API at \(root)"), "\(noAPI)")

        let emptyURL = try TodoProcess(device, ["whoami"], environment: ["ROOST_SERVER_URL": ""]).finish(deadline: 60)
        #expect(emptyURL.status == 0, "\(emptyURL)")
    }

    /// A storage directory that cannot be written (made immutable: as root, permissions would not stop
    /// the writes) fails `todo` with a plain message, not a trap. Needs `chattr` and root.
    @Test(.enabled(if: LocalStateTests.canMakeImmutable())) func aReadOnlyStorageDirectoryIsAPlainError() async throws {
        let server = try ServerProcess()
        let device = ExampleTests.Device(server: server)
        try FileManager.default.createDirectory(atPath: device.storage, withIntermediateDirectories: true)
        #expect(try ChildProcess.run("/usr/bin/chattr", ["+i", device.storage]).status == 0)
        defer { _ = try? ChildProcess.run("/usr/bin/chattr", ["-i", device.storage]) }
        let listed = try TodoProcess(device, ["list"]).finish(deadline: 60)
        #expect(listed.status == 1 && listed.output.hasPrefix("todo: cannot open"), "\(listed)")
    }

    static func canMakeImmutable() -> Bool {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/chattr") else { return false }
        let probe = temporaryStorage()
        guard (try? FileManager.default.createDirectory(at: probe, withIntermediateDirectories: true)) != nil else { return false }
        defer {
            _ = try? ChildProcess.run("/usr/bin/chattr", ["-i", probe.path])
            try? FileManager.default.removeItem(at: probe)
        }
        return (try? ChildProcess.run("/usr/bin/chattr", ["+i", probe.path]).status) == 0
    }

    /// A storage directory on a full disk (a small tmpfs, filled to the last byte): `list`, `add` and `sync`
    /// end with a plain one-line message (or work, read-only), never a trap or a hang; the to-dos queued
    /// before the disk filled are delivered once the space is back, each exactly once. Needs root and tmpfs.
    @Test(.enabled(if: LocalStateTests.canMountTmpfs()), .timeLimit(.minutes(5))) func aFullDiskIsAPlainErrorAndLosesNothing() async throws {
        let server = try ServerProcess(start: false)
        let device = ExampleTests.Device(server: server)
        try FileManager.default.createDirectory(atPath: device.storage, withIntermediateDirectories: true)
        #expect(try ChildProcess.run("/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", device.storage]).status == 0)
        defer { _ = try? ChildProcess.run("/bin/umount", ["-l", device.storage]) }
        for title in ["queued before", "also queued before"] {
            let added = try TodoProcess(device, ["add", title]).finish(deadline: 60)
            #expect(added.status == 0 && added.output.contains("will sync"), "\(added)")
        }

        let filler = device.storage + "/filler"
        fillToTheLastByte(filler)
        try server.start()  // Reachable: `sync` delivers, then must record it on the full disk.
        // `list` reads (its refresh cannot be kept: fine); `add` and `sync` must write, so they fail, saying why.
        for arguments in [["list"], ["add", "x"], ["sync"], ["list"]] {
            let (status, output) = try TodoProcess(device, arguments).finish(deadline: 90)
            let plainError = status == 1 && (output.hasPrefix("todo: ") || output.hasPrefix("Error: "))
                && !output.trimmingCharacters(in: .whitespacesAndNewlines).contains("\n") && !output.contains("SQLite error")
            #expect(arguments == ["list"] ? status == 0 || plainError : plainError && output.contains("disk is full"),
                    "todo \(arguments): status \(status): \(output)")
            #expect(!output.contains("Fatal error") && !output.contains("All changes are on the server."), "todo \(arguments): \(output)")
        }

        unlink(filler)
        let sync = try TodoProcess(device, ["sync"]).finish(deadline: 60)
        #expect(sync.status == 0 && sync.output.contains("All changes are on the server."), "\(sync)")
        let stored = try await storedTodoTitles(server)
        #expect(stored.sorted() == ["also queued before", "queued before"], "\(stored)")  // Each once; `x` was refused.
    }

    static func canMountTmpfs() -> Bool {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/bin/mount") else { return false }
        let probe = temporaryStorage()
        guard (try? FileManager.default.createDirectory(at: probe, withIntermediateDirectories: true)) != nil else { return false }
        defer { try? FileManager.default.removeItem(at: probe) }
        guard (try? ChildProcess.run("/bin/mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", probe.path]).status) == 0 else { return false }
        _ = try? ChildProcess.run("/bin/umount", ["-l", probe.path])
        return true
    }

    /// Writes `path` until the file system says ENOSPC, in pages and then in single bytes.
    private func fillToTheLastByte(_ path: String) {
        let file = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        defer { close(file) }
        for size in [4096, 1] {
            let chunk = [UInt8](repeating: 0x2A, count: size)
            while write(file, chunk, size) == size {}
        }
        #expect(errno == ENOSPC)
    }

    private func storedTodoTitles(_ server: ServerProcess) async throws -> [String] {
        var request = URLRequest(url: server.url.appendingPathComponent("classes/Todo"))
        request.setValue(ServerProcess.applicationId, forHTTPHeaderField: "X-Parse-Application-Id")
        request.setValue("sdk-master-key", forHTTPHeaderField: "X-Parse-Master-Key")
        let stored = try JSONParser.parse(Array(try await URLSession.shared.data(for: request).0))["results"]?.arrayValue ?? []
        return stored.compactMap { $0["title"]?.stringValue }
    }

    /// `todo sync` says the changes are on the server only when none was refused, and a refusal says why.
    @Test func syncReportsRefusalsInsteadOfSuccess() async throws {
        let server = try ServerProcess()
        _ = try await server.masterRequest("POST", "schemas/Todo", json: ["className": "Todo", "fields": ["title": ["type": "Number"]]])
        let device = ExampleTests.Device(server: server)
        #expect(try device.run("todo", "add", "a title, not a number").status == 0)
        let sync = try device.run("todo", "sync").output
        #expect(!sync.contains("All changes are on the server."), "\(sync)")
        #expect(sync.contains("refused by the server: save Todo — Parse error 111"), "\(sync)")
    }

    /// Queues `count` notes with the server down, then lets the client go (its files closed).
    private func queueNotes(server: ServerProcess, storage: URL, count: Int) async throws {
        do {
            let client = try server.makeClient(storage: storage)
            for index in 0..<count {
                let note = client.object("Note")
                note["text"] = String(repeating: "offline \(index) ", count: 20)
                try await note.saveEventually()
            }
            #expect(client.pendingCount == count)
        }
        // The client's queue closes once its retry loop sees it is gone: then its WAL is folded into the file.
        let wal = storage.appendingPathComponent("eventually.sqlite-wal").path
        for _ in 0..<100 where FileManager.default.fileExists(atPath: wal) { try await Task.sleep(nanoseconds: 100_000_000) }
    }

    private func damageFile(_ file: URL, how: String) throws {
        for suffix in ["-wal", "-shm"] { unlink(file.path + suffix) }
        switch how {
        case "empty": #expect(truncate(file.path, 0) == 0)
        case "cut short": #expect(truncate(file.path, 6000) == 0)
        default:
            let handle = try FileHandle(forWritingTo: file)
            try handle.seek(toOffset: 0)
            handle.write(Data(String(repeating: "garbage ", count: 1000).utf8))
            try handle.close()
        }
    }
}

/// One `todo` process started now; `finish` waits for it (killing it at a deadline: a hang is a failure).
struct TodoProcess {
    let process: ChildProcess
    let outputPath: String

    init(_ device: ExampleTests.Device, _ arguments: [String], environment: [String: String] = [:]) throws {
        outputPath = FileManager.default.temporaryDirectory.appendingPathComponent("roost-todo-\(UUID().uuidString).out").path
        let output = open(outputPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        defer { close(output) }
        let base = ["ROOST_SERVER_URL": device.server.url.absoluteString, "ROOST_APP_ID": ServerProcess.applicationId,
                    "ROOST_STORAGE_DIR": device.storage]
        process = try ChildProcess(executable: try ExampleTests.program("todo"), arguments: arguments,
                                   environment: base.merging(environment) { _, new in new }, stdout: output,
                                   stderrPath: outputPath)
    }

    func finish(deadline seconds: Double) -> (status: Int32, output: String) {
        let end = Date().addingTimeInterval(seconds)
        while process.isRunning, Date() < end { usleep(50_000) }
        if process.isRunning { process.kill(signal: SIGKILL) }
        let status = process.waitUntilExit()
        defer { unlink(outputPath) }
        return (status, (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "")
    }
}
