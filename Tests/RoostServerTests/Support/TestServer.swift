import Foundation
import RoostCore
import RoostTestSupport
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A real `roost` process on a free port with a fresh data directory, stopped on `stop()` or deinit.
/// With `ROOST_TEST_DATABASE=postgres` (the test command's second pass), each server gets a fresh PostgreSQL
/// database of its own on the test cluster (`--database-url`), dropped with it.
final class TestServer: @unchecked Sendable {
    static let applicationId = "test-app"
    static let masterKey = "test-master-key-0123456789"

    let process: ChildProcess
    let dataDirectory: URL
    let port: Int
    let logFile: URL
    /// The server's PostgreSQL database, in the PostgreSQL pass.
    let postgres: PostgresScratchDatabase?
    /// Whether the database goes with this server (not with a node started `sharingDatabaseWith` another).
    private let ownsDatabase: Bool
    /// Its own session, closed with the server (the shared one would keep a socket per server).
    let session = URLSession(configuration: .ephemeral)
    var baseURL: String { "http://127.0.0.1:\(port)/parse" }

    /// Starts the binary and waits for its "listening on" line.
    /// - Parameters:
    ///   - arguments: extra flags, e.g. `["--no-allow-client-class-creation"]`.
    ///   - environment: extra environment variables, e.g. `["ROOST_PIN_THREADS": "no"]`.
    ///   - onPostgres: serve from a PostgreSQL database of its own (default: in the PostgreSQL pass only).
    ///   - sharingDatabaseWith: another node on `other`'s PostgreSQL database (a data directory of its own); the
    ///     database is dropped with `other`.
    init(arguments: [String] = [], environment: [String: String] = [:], dataDirectory: URL? = nil,
         onPostgres: Bool = TestServer.onPostgres, sharingDatabaseWith other: TestServer? = nil) throws {
        self.dataDirectory = dataDirectory ?? FileManager.default.temporaryDirectory
            .appendingPathComponent("roost-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: self.dataDirectory, withIntermediateDirectories: true)
        logFile = self.dataDirectory.appendingPathComponent("server.log")

        if let other {
            guard let shared = other.postgres else { throw TestServerError.exited(output: "only a PostgreSQL database is shared") }
            postgres = shared
            ownsDatabase = false
        } else {
            postgres = onPostgres ? try TestServer.database(for: self.dataDirectory) : nil
            ownsDatabase = true
        }
        let databaseArguments = postgres.map { ["--database-url", $0.url] } ?? []
        let output = try ChildProcess.makePipe()
        defer { close(output.read) }  // The server prints nothing after its "listening" line.
        process = try ChildProcess(
            executable: try TestServer.binary().path,
            arguments: ["serve", "--port", "0", "--data-dir", self.dataDirectory.path, "--app-id", TestServer.applicationId,
                        "--master-key", TestServer.masterKey] + databaseArguments + arguments,
            environment: environment.merging(["ROOST_EXIT_WITH_PARENT": "1"]) { _, harness in harness }, stdout: output.write, stderrPath: logFile.path)
        close(output.write)
        guard let seen = ChildProcess.read(output.read, until: "listening on"),
            let range = seen.range(of: #":(\d+)/"#, options: .regularExpression),  // After any host (`--host ::`).
            let found = Int(seen[range].dropFirst().dropLast())
        else { throw TestServerError.exited(output: (try? String(contentsOf: logFile, encoding: .utf8)) ?? "") }
        port = found
    }

    /// Sends SIGTERM and waits for the process to exit; returns its exit status.
    @discardableResult
    func stop() -> Int32 {
        session.invalidateAndCancel()
        return process.terminate()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: dataDirectory)
        if ownsDatabase { postgres?.drop() }
    }

    /// The PostgreSQL database of a data directory: a server started again on the directory (a restart) finds
    /// the same data, as it would in the SQLite file there.
    private static func database(for dataDirectory: URL) throws -> PostgresScratchDatabase {
        let note = dataDirectory.appendingPathComponent("test-postgres-database")
        if let name = try? String(contentsOf: note, encoding: .utf8) { return try PostgresScratchDatabase(existing: name) }
        let database = try PostgresScratchDatabase()
        try database.name.write(to: note, atomically: true, encoding: .utf8)
        return database
    }

    /// Whether this run's servers serve from PostgreSQL (`ROOST_TEST_DATABASE=postgres`) rather than SQLite.
    static let onPostgres = ProcessInfo.processInfo.environment["ROOST_TEST_DATABASE"] == "postgres"

    /// Everything the server wrote to standard error so far.
    func log() -> String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    /// Whether the log holds `text` within `seconds`: lines below `error` are written in batches, a moment later (longer
    /// under the whole suite's load).
    func logShows(_ text: String, seconds: Double = 30) async throws -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !log().contains(text) {
            guard Date() < deadline else { return false }
            try await Task.sleep(for: .milliseconds(50))
        }
        return true
    }

    /// The `roost` executable built next to the test bundle.
    static func binary() throws -> URL {
        var candidates = [URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("roost")]
        candidates.append(Bundle.main.bundleURL.appendingPathComponent("roost"))
        let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        candidates.append(packageRoot.appendingPathComponent(".build/debug/roost"))
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            throw TestServerError.binaryNotFound(candidates.map(\.path))
        }
        return found
    }

    /// Sends one request. By default it carries the app id header; `master: true` adds the master key.
    func request(_ method: String, _ path: String, json: JSON? = nil, body: Data? = nil, headers: [String: String] = [:],
                 appId: Bool = true, master: Bool = false, query: [String: String] = [:]) async throws -> TestResponse {
        var components = URLComponents(string: baseURL + path)!
        if !query.isEmpty { components.queryItems = query.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) } }
        // URLComponents leaves '+' alone; Parse clients encode it, so do we.
        components.percentEncodedQuery = components.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
        var request = URLRequest(url: components.url!)
        request.httpMethod = method
        if appId { request.setValue(TestServer.applicationId, forHTTPHeaderField: "X-Parse-Application-Id") }
        if master { request.setValue(TestServer.masterKey, forHTTPHeaderField: "X-Parse-Master-Key") }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        if let json { request.httpBody = Data(json.encoded()) } else if let body { request.httpBody = body }
        if request.httpBody != nil, request.value(forHTTPHeaderField: "Content-Type") == nil {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let started = Date()
        let data: Data, response: URLResponse
        do {
            (data, response) = try await session.data(for: request)
        } catch {
            // The data dir (and the server's log in it) goes away with the test: keep what the server said.
            let alive = kill(process.pid, 0) == 0 ? "running" : "gone"
            throw TestServerError.transport("\(method) \(path) failed after \(Int(Date().timeIntervalSince(started))) s, "
                + "server \(alive): \(error)\n--- server log (last 2000 bytes) ---\n\(String(log().suffix(2000)))")
        }
        let http = response as! HTTPURLResponse
        var responseHeaders: [String: String] = [:]
        for (name, value) in http.allHeaderFields { responseHeaders["\(name)".lowercased()] = "\(value)" }
        return TestResponse(status: http.statusCode, headers: responseHeaders, body: data)
    }

    /// Creates an object and returns its id, failing the caller when the server refuses.
    func create(_ className: String, _ fields: JSON) async throws -> String {
        let response = try await request("POST", "/classes/\(className)", json: fields)
        guard response.status == 201, let id = response.json["objectId"]?.stringValue else {
            throw TestServerError.unexpected(response.status, response.text)
        }
        return id
    }
}

struct TestResponse {
    let status: Int
    let headers: [String: String]
    let body: Data

    var text: String { String(decoding: body, as: UTF8.self) }
    /// The body as JSON (`.null` when it does not parse).
    var json: JSON { (try? JSONParser.parse(Array(body))) ?? .null }
    /// The Parse error code of an error body.
    var code: Int? { json["code"]?.numberValue.map { Int($0) } }
}

enum TestServerError: Error {
    case binaryNotFound([String])
    case exited(output: String)
    case unexpected(Int, String)
    /// A request got no HTTP answer; carries the server's state and log.
    case transport(String)
}
