import Foundation
import RoostCore
import RoostTestSupport
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Parse Server's spec/batch.spec.js, the `makeBatchRoutingPathFunction` cases: each gives the batch's URL, Parse's
/// `serverURL` and `publicServerURL`, and expects an item path to be routed to `/classes/Object`. Roost has no
/// `serverURL` (its local URL is the mount, `--mount`) and takes `--public-server-url`; each case is a server started
/// so, and batches whose item paths are routed (the object is created in `Object`) or refused (107 `cannot route batch
/// path <path>`) as Parse's function routes or throws. (`BatchSpecTests` carries the public-url-only and
/// different-mount cases.)
@Suite struct BatchRoutingSpecTests {
    /// `{"requests": [...]}`: one create in `Object` per path.
    private static func batch(_ paths: [String]) -> JSON {
        ["requests": .array(paths.enumerated().map { (index, path) -> JSON in
            ["method": "POST", "path": .string(path), "body": ["n": .number(Double(index))]]
        })]
    }

    /// Records an issue unless every item of the batch created its object.
    private static func expectCreated(_ response: TestResponse, _ count: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.status == 200, "\(response.text)", sourceLocation: sourceLocation)
        let items = response.json.arrayValue ?? []
        #expect(items.count == count, "\(response.text)", sourceLocation: sourceLocation)
        #expect(items.allSatisfy { $0["success"]?["objectId"]?.stringValue != nil }, "\(response.text)", sourceLocation: sourceLocation)
    }

    private static func objectCount(_ server: TestServer) async throws -> JSON? {
        try await server.find("Object", ["count": 1, "limit": 0]).json["count"]
    }

    // spec: batch.spec.js: should return the proper url given a server url-only path
    /// A public URL with another path (`/something/really/long`): an item under the mount (`/parse`) is still routed.
    @Test func serverURLPathWithALongPublicURL() async throws {
        let server = try TestServer(arguments: ["--public-server-url", "https://domain.com/something/really/long"])
        Self.expectCreated(try await server.request("POST", "/batch", json: Self.batch(["/parse/classes/Object"])), 1)
        #expect(try await Self.objectCount(server) == 1)
    }

    // spec: batch.spec.js: should return the proper url same public/local endpoint
    /// A public URL with the mount's own path (`http://domain.com/parse`): items under `/parse` are routed; as Parse
    /// then strips only that prefix, a path without it is refused.
    @Test func publicURLWithTheMountsPath() async throws {
        let server = try TestServer(arguments: ["--public-server-url", "http://domain.com/parse"])
        Self.expectCreated(try await server.request("POST", "/batch", json: Self.batch(["/parse/classes/Object"])), 1)
        expectError(try await server.request("POST", "/batch", json: Self.batch(["/classes/Object"])), 107,
                    "cannot route batch path /classes/Object")
        #expect(try await Self.objectCount(server) == 1)
    }

    // spec: batch.spec.js: should return the proper url with naked public
    /// A public URL at the root (`http://domain.com/`): an SDK given it sends `/classes/Object`, routed as under the
    /// mount; paths under the mount work too.
    @Test func nakedPublicURL() async throws {
        let server = try TestServer(arguments: ["--public-server-url", "http://domain.com/"])
        Self.expectCreated(try await server.request("POST", "/batch", json: Self.batch(["/classes/Object", "/parse/classes/Object"])), 2)
        #expect(try await Self.objectCount(server) == 2)
    }

    // spec: batch.spec.js: should return the proper url with naked local
    /// The API mounted at the root (`--mount /`, Parse's `serverURL` `http://localhost:1234/`) with a public URL under
    /// `/parse`: an item path may start with the public path (`/parse/classes/Object`) or with the root mount
    /// (`/classes/Object`).
    @Test func apiMountedAtTheRoot() async throws {
        let server = try RootMountedServer(arguments: ["--public-server-url", "http://domain.com/parse"])
        Self.expectCreated(try await server.request("POST", "/batch", json: Self.batch(["/parse/classes/Object", "/classes/Object"])), 2)
        let count = try await server.request("GET", "/classes/Object?count=1&limit=0")
        #expect(count.json["count"] == 2, "\(count.text)")
    }

    // spec: batch.spec.js: should return the proper url with no url provided
    // spec: batch.spec.js: should return the proper url with no public url provided
    // spec: batch.spec.js: should return the proper url with bad url provided
    /// Parse falls back to the batch URL's own prefix (`/parse`) when it lacks either URL or cannot parse one: as the
    /// default server (no `--public-server-url`), it routes items under `/parse` and refuses others.
    @Test func defaultServerRoutesTheMountOnly() async throws {
        let server = try TestServer()
        Self.expectCreated(try await server.request("POST", "/batch", json: Self.batch(["/parse/classes/Object"])), 1)
        for path in ["/classes/Object", "/1/classes/Object"] {
            expectError(try await server.request("POST", "/batch", json: Self.batch([path])), 107, "cannot route batch path \(path)")
        }
        #expect(try await Self.objectCount(server) == 1)
    }

    // spec-differs: batch.spec.js: should return the proper url with bad public url provided -- the spec calls Parse's routing function with `badurl.com`; a server given it does not start, as Parse's own `Config.validate` refuses it
    /// A public server URL that is no http(s) URL stops the start with Parse's message (so no batch routes by it).
    @Test func badPublicURL() throws {
        let attempt = try StartAttempt(["--public-server-url", "badurl.com"])
        #expect(!attempt.started && attempt.log.contains("publicServerURL should be a valid HTTPS URL starting with https://"), "\(attempt.log)")
    }
}

/// `roost serve --mount /` on a fresh data directory (SQLite: routing does not depend on the database). `TestServer`
/// cannot start it: its URLs carry `/parse`, and it reads the port from a "listening on" line with a path after the
/// port, which a root mount does not print.
private final class RootMountedServer: @unchecked Sendable {
    let process: ChildProcess
    let dataDirectory: URL
    let port: Int
    let session = URLSession(configuration: .ephemeral)

    init(arguments: [String]) throws {
        dataDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("roost-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dataDirectory, withIntermediateDirectories: true)
        let logFile = dataDirectory.appendingPathComponent("server.log")
        let output = try ChildProcess.makePipe()
        defer { close(output.read) }
        process = try ChildProcess(
            executable: try TestServer.binary().path,
            arguments: ["serve", "--port", "0", "--data-dir", dataDirectory.path, "--app-id", TestServer.applicationId,
                        "--master-key", TestServer.masterKey, "--mount", "/"] + arguments,
            environment: ["ROOST_EXIT_WITH_PARENT": "1"], stdout: output.write, stderrPath: logFile.path)
        close(output.write)
        // "roost listening on http://127.0.0.1:<port> (app id: …)": read up to the text after the port.
        guard let seen = ChildProcess.read(output.read, until: "(app id"),
            let range = seen.range(of: #":\d+"#, options: .regularExpression),
            let found = Int(seen[range].dropFirst())
        else { throw TestServerError.exited(output: (try? String(contentsOf: logFile, encoding: .utf8)) ?? "") }
        port = found
    }

    deinit {
        session.invalidateAndCancel()
        process.terminate()
        try? FileManager.default.removeItem(at: dataDirectory)
    }

    /// Sends one request to `http://127.0.0.1:<port><path>` with the app id header.
    func request(_ method: String, _ path: String, json: JSON? = nil) async throws -> TestResponse {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.httpMethod = method
        request.setValue(TestServer.applicationId, forHTTPHeaderField: "X-Parse-Application-Id")
        if let json {
            request.httpBody = Data(json.encoded())
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw TestServerError.unexpected(0, "no HTTP response") }
        return TestResponse(status: http.statusCode, headers: [:], body: data)
    }
}
