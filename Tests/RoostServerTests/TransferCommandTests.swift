import Foundation
import RoostCore
import Testing

/// `roost export`, `roost import` and `roost backup`, run as a user runs them, against data a real
/// server wrote and read back by a real server.
@Suite struct TransferCommandTests {
    /// An app with one of everything an export carries; returns what the checks need.
    struct App {
        let server: RecordingServer
        let alice: Account
        let itemId: String
        let fileName: String
    }

    static func makeApp() async throws -> App {
        let api = try RecordingServer()
        let alice = try await api.signUp("alice", "alice-password", ["email": "alice@example.com"])
        let bob = try await api.signUp("bob", "bob-password")
        let upload = try await api.server.request("POST", "/files/notes.txt", body: Data("exported bytes".utf8),
                                                  headers: ["Content-Type": "text/plain", "X-Parse-Session-Token": alice.token])
        let fileName = try #require(upload.json["name"]?.stringValue)
        let item = try await api.send("POST", "/classes/Item", json: [
            "title": "private", "n": 7, "owner": pointer("_User", alice.id), "due": date("2026-01-02T03:04:05.678Z"),
            "attachment": ["__type": "File", "name": .string(fileName)],
            "ACL": .object([alice.id: ["read": true, "write": true]]),
        ], token: alice.token)
        let itemId = try #require(item.json["objectId"]?.stringValue)
        _ = try await api.send("PUT", "/classes/Item/\(itemId)", json: ["watchers": ["__op": "AddRelation", "objects": [pointer("_User", bob.id)]]],
                               token: alice.token)
        _ = try await api.send("POST", "/roles", json: ["name": "editors", "ACL": ["*": ["read": true]],
                                                        "users": ["__op": "AddRelation", "objects": [pointer("_User", bob.id)]]], master: true)
        _ = try await api.send("PUT", "/schemas/Item", json: ["indexes": ["by_n": ["n": 1]], "classLevelPermissions": [
            "find": ["*": true], "get": ["*": true], "count": ["*": true], "create": ["*": true], "update": ["*": true],
            "delete": ["*": true], "addField": ["*": true], "protectedFields": ["*": ["n"]],
        ]], master: true)
        _ = try await api.send("PUT", "/config", json: ["params": ["motd": "hello"], "masterKeyOnly": ["motd": false]], master: true)
        _ = try await api.send("POST", "/hooks/functions", json: ["functionName": "ping", "url": "http://127.0.0.1:9/ping"], master: true)
        return App(server: api, alice: alice, itemId: itemId, fileName: fileName)
    }

    static func roost(_ arguments: [String]) throws -> (status: Int32?, output: String) {
        try CommandLineTests.run(arguments)
    }

    /// An export's records, without the header (it carries the time of the export).
    static func records(_ path: String) throws -> [JSON] {
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        return try lines.dropFirst().map { try JSONParser.parse(String($0)) }
    }

    @Test func anExportImportedElsewhereServesTheSameAppAndExportsTheSame() async throws {
        let app = try await Self.makeApp()
        let exportPath = CommandLineTests.freshPath() + ".jsonl"
        let again = CommandLineTests.freshPath() + ".jsonl"
        defer { unlink(exportPath); unlink(again) }

        // Taken while the server runs.
        let exported = try Self.roost(["export", "--data-dir", app.server.server.dataDirectory.path, "--out", exportPath])
        #expect(exported.status == 0, "\(exported.output)")
        #expect(exported.output.contains("Exported"), "\(exported.output)")
        var info = stat()
        #expect(stat(exportPath, &info) == 0 && info.st_mode & 0o077 == 0, "an export holds password hashes: mode 0600")
        let text = try String(contentsOfFile: exportPath, encoding: .utf8)
        #expect(!text.contains("alice-password") && !text.contains(app.alice.token), "no password and no session token in an export")

        let target = URL(fileURLWithPath: CommandLineTests.freshPath())
        let imported = try Self.roost(["import", "--data-dir", target.path, exportPath])
        #expect(imported.status == 0, "\(imported.output)")
        #expect(imported.output.contains("Imported"), "\(imported.output)")
        // Round trip: exporting the copy gives the same records.
        let second = try Self.roost(["export", "--data-dir", target.path, "--out", again])
        #expect(second.status == 0, "\(second.output)")
        #expect(try Self.records(again) == Self.records(exportPath))

        let copy = try RecordingServer(dataDirectory: target)
        // The copy's LiveQuery history starts past the original's: an old `since` cannot resume there.
        let header = try JSONParser.parse(String(try String(contentsOfFile: again, encoding: .utf8).split(separator: "\n")[0]))
        #expect((header["liveQueryHead"]?.numberValue ?? 0) >= 4_294_967_296, "\(header)")
        // The same users: log-in with the password, and the session token from before still works.
        #expect(try await copy.logIn("alice", "alice-password").id == app.alice.id)
        #expect(try await copy.me(app.alice.token).json["username"] == "alice")
        expectError(try await copy.send("POST", "/users", json: ["username": "ALICE", "password": "x"]), 202)
        // The same object, with its ACL, dates, protected field and relation.
        // (A File's url names the server that answers, so it is left out.)
        func withoutURL(_ object: JSON) -> JSON {
            guard case .object(var fields) = object, case .object(var file)? = fields["attachment"] else { return object }
            file["url"] = nil
            fields["attachment"] = .object(file)
            return .object(fields)
        }
        let original = try await app.server.send("GET", "/classes/Item/\(app.itemId)", token: app.alice.token).json
        let restored = try await copy.send("GET", "/classes/Item/\(app.itemId)", token: app.alice.token)
        #expect(restored.status == 200)
        #expect(withoutURL(restored.json) == withoutURL(original))
        #expect(try await copy.send("GET", "/classes/Item/\(app.itemId)").status == 404)
        let watchers = try await copy.send("GET", "/users", master: true, query: [
            "where": #"{"$relatedTo":{"object":{"__type":"Pointer","className":"Item","objectId":"\#(app.itemId)"},"key":"watchers"}}"#,
        ])
        #expect(watchers.json["results"]?.arrayValue?.compactMap { $0["username"]?.stringValue } == ["bob"])
        let roles = try await copy.send("GET", "/roles", query: ["where": #"{"name":"editors"}"#])
        #expect(roles.json["results"]?.arrayValue?.count == 1)
        // Schema (declared index), config, webhook and file.
        let schema = try await copy.send("GET", "/schemas/Item", master: true)
        #expect(schema.json["indexes"]?["by_n"] == ["n": 1])
        #expect(schema.json["classLevelPermissions"]?["protectedFields"] == ["*": ["n"]])
        #expect(try await copy.send("GET", "/config").json["params"]?["motd"] == "hello")
        #expect(try await copy.send("GET", "/hooks/functions/ping", master: true).json["url"] == "http://127.0.0.1:9/ping")
        let file = try await copy.server.request("GET", "/files/\(TestServer.applicationId)/\(app.fileName)", appId: false)
        #expect(file.text == "exported bytes")

    }

    @Test func importTakesOnlyAnEmptyDataDirectoryAndAllOrNothing() async throws {
        let app = try await Self.makeApp()
        let exportPath = CommandLineTests.freshPath() + ".jsonl"
        let cut = CommandLineTests.freshPath() + ".jsonl"
        defer { unlink(exportPath); unlink(cut) }
        #expect(try Self.roost(["export", "--data-dir", app.server.server.dataDirectory.path, "--out", exportPath]).status == 0)

        // Under the running server: refused, naming the directory and the server's pid (it would change data behind it).
        let directory = app.server.server.dataDirectory.path
        let underServer = try Self.roost(["import", "--data-dir", directory, exportPath])
        #expect(underServer.status == 1)
        #expect(underServer.output.contains("cannot import into \(directory): another roost process (pid \(app.server.server.process.pid)) is using it"),
                "\(underServer.output)")

        // Over an app, once its server stopped: refused, naming the directory.
        #expect(app.server.server.stop() == 0)
        let over = try Self.roost(["import", "--data-dir", directory, exportPath])
        #expect(over.status == 1)
        #expect(over.output.contains("the data directory \(directory) already holds an app"), "\(over.output)")

        // An export cut short imports nothing (and no file), and the whole one still imports after.
        let lines = try String(contentsOfFile: exportPath, encoding: .utf8).split(separator: "\n")
        try (lines.dropLast().joined(separator: "\n") + "\n").write(toFile: cut, atomically: true, encoding: .utf8)
        let target = CommandLineTests.freshPath()
        defer { try? FileManager.default.removeItem(atPath: target) }
        let partial = try Self.roost(["import", "--data-dir", target, cut])
        #expect(partial.status == 1)
        #expect(partial.output.contains("the export was cut short"), "\(partial.output)")
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: target + "/files")) ?? []).isEmpty)
        // A data directory a server has started on, with nothing in it yet, takes it too.
        let served = try TestServer(dataDirectory: URL(fileURLWithPath: target))
        _ = try await served.request("GET", "/classes/Item")
        served.stop()
        let whole = try Self.roost(["import", "--data-dir", target, exportPath])
        #expect(whole.status == 0, "\(whole.output)")

        // Not an export at all: the line at fault is named.
        let junk = CommandLineTests.freshPath() + ".jsonl"
        defer { unlink(junk) }
        try "{\"type\":\"roost-export\",\"version\":1}\n{\"type\":\"schema\",\"className\":\"Bad Name\",\"fields\":{}}\n"
            .write(toFile: junk, atomically: true, encoding: .utf8)
        let bad = try Self.roost(["import", "--data-dir", CommandLineTests.freshPath(), junk])
        #expect(bad.status == 1)
        #expect(bad.output.contains("\(junk), line 2: a schema without a valid className"), "\(bad.output)")
    }

    /// A state record's integer member that is no integer (a fraction, one past Int64) is refused, naming it: the
    /// importer does not stop on a trap (`Int64(1e300)`), for required and optional members alike.
    @Test(arguments: [#""failedCount":1e300"#, #""failedCount":1.5"#, #""failedCount":1,"lockedUntil":2.5"#])
    func importRefusesAStateIntegerThatIsNone(members: String) throws {
        let path = CommandLineTests.freshPath() + ".jsonl"
        defer { unlink(path) }
        let lines = [
            #"{"type":"roost-export","version":1}"#,
            #"{"type":"loginFailure","userId":"u1","# + members + "}",
            #"{"type":"end","counts":{}}"#,
        ]
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        let target = CommandLineTests.freshPath()
        defer { try? FileManager.default.removeItem(atPath: target) }
        let refused = try Self.roost(["import", "--data-dir", target, path])
        #expect(refused.status == 1, "\(refused.output)")
        let member = members.contains("lockedUntil") ? "lockedUntil" : "failedCount"
        #expect(refused.output.contains("\(path), line 2: ") && refused.output.contains("no integer \"\(member)\""), "\(refused.output)")
    }

    /// An export edited by hand cannot store what the server would refuse: a value of another type than its
    /// field's schema records, a field no schema names, an operation, a malformed ACL. The line is named.
    @Test(arguments: [
        (#"{"n":"seven"}"#, "field n holds a String, its schema says Number"),
        (#"{"stray":1}"#, "field stray is not in the schema record of Thing"),
        (#"{"n":{"__op":"Increment","amount":1}}"#, "field n holds an operation, not a value"),
        (#"{"n":1,"ACL":{"*":{"read":"yes"}}}"#, "Invalid ACL."),
    ])
    func importRefusesValuesTheSchemaDoesNotAllow(fields: String, message: String) throws {
        let path = CommandLineTests.freshPath() + ".jsonl"
        defer { unlink(path) }
        let fieldsObject = String(fields.dropFirst().dropLast())
        let object = #"{"objectId":"t1","createdAt":"2026-01-01T00:00:00.000Z","updatedAt":"2026-01-01T00:00:00.000Z","# + fieldsObject + "}"
        let lines = [
            #"{"type":"roost-export","version":1}"#,
            #"{"type":"schema","className":"Thing","fields":{"n":{"type":"Number"}}}"#,
            #"{"type":"object","className":"Thing","object":"# + object + "}",
            #"{"type":"end","counts":{}}"#,
        ]
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        let target = CommandLineTests.freshPath()
        defer { try? FileManager.default.removeItem(atPath: target) }
        let refused = try Self.roost(["import", "--data-dir", target, path])
        #expect(refused.status == 1)
        #expect(refused.output.contains("\(path), line 3: object Thing/t1: "), "\(refused.output)")
        #expect(refused.output.contains(message), "\(refused.output)")
    }

    @Test func aBackupTakenDuringWritesIsAWorkingConsistentDatabase() async throws {
        let app = try await Self.makeApp()
        let backupPath = CommandLineTests.freshPath() + ".sqlite"
        defer { unlink(backupPath); try? FileManager.default.removeItem(atPath: backupPath + "-files") }
        // Creates keep coming while the backup runs.
        let writer = Task {
            var created = 0
            while !Task.isCancelled, created < 2_000 {
                if (try? await app.server.server.create("Tick", ["i": .number(Double(created))])) != nil { created += 1 }
            }
            return created
        }
        try await Task.sleep(nanoseconds: 100_000_000)
        let backup = try Self.roost(["backup", "--data-dir", app.server.server.dataDirectory.path, "--out", backupPath])
        writer.cancel()
        let written = await writer.value
        #expect(backup.status == 0, "\(backup.output)")
        #expect(backup.output.contains("Backed up the database to \(backupPath)"), "\(backup.output)")

        // Restored as the README says: the file as roost.sqlite, the files beside it.
        let restored = URL(fileURLWithPath: CommandLineTests.freshPath())
        try FileManager.default.createDirectory(at: restored.appendingPathComponent("files"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: backupPath, toPath: restored.appendingPathComponent("roost.sqlite").path)
        for name in try FileManager.default.contentsOfDirectory(atPath: backupPath + "-files") {
            try FileManager.default.copyItem(atPath: backupPath + "-files/" + name, toPath: restored.appendingPathComponent("files/" + name).path)
        }
        let copy = try RecordingServer(dataDirectory: restored)
        #expect(try await copy.logIn("alice", "alice-password").id == app.alice.id)
        let ticks = try await copy.send("GET", "/classes/Tick", query: ["count": "1", "limit": "0"]).json["count"]?.numberValue ?? -1
        #expect(ticks >= 0 && ticks <= Double(written))
        // Consistent: the objects it holds are numbered without a hole (creates commit in order here).
        let highest = try await copy.send("GET", "/classes/Tick", query: ["order": "-i", "limit": "1"]).json["results"]?.arrayValue?.first?["i"]?.numberValue
        #expect(ticks == 0 || highest == ticks - 1)
        let file = try await copy.server.request("GET", "/files/\(TestServer.applicationId)/\(app.fileName)", appId: false)
        #expect(file.text == "exported bytes")

        let again = try Self.roost(["backup", "--data-dir", app.server.server.dataDirectory.path, "--out", backupPath])
        #expect(again.status == 1)
        #expect(again.output.contains("\(backupPath) already exists"), "\(again.output)")
        let nothing = CommandLineTests.freshPath()
        let missing = try Self.roost(["export", "--data-dir", nothing, "--out", "-"])
        #expect(missing.status == 1)
        #expect(missing.output.contains("no database at \(nothing)/roost.sqlite"), "\(missing.output)")
    }
}
