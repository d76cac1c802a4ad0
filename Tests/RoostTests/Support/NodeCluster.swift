import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Roost
import RoostCore
import RoostTestSupport

/// Several `roost` processes on one PostgreSQL database (a fresh one on the test cluster, dropped at the end),
/// behind Debian's nginx as a round-robin load balancer configured with the README's example (`LoadBalancer`).
final class NodeCluster: @unchecked Sendable {
    let database: String
    let databaseURL: String
    let nodes: [ServerProcess]
    let balancer: LoadBalancer
    /// `http://127.0.0.1:<nginx port>/parse`.
    var url: URL { balancer.url }

    init(nodes count: Int) throws {
        database = "roost_nodes_" + UUID().uuidString.prefix(8).lowercased()
        try Self.psql(try PostgresTestCluster.url(), "CREATE DATABASE \(database)")
        let databaseURL = try PostgresTestCluster.url(database: database)
        self.databaseURL = databaseURL
        do {
            let nodes = try (0..<count).map { _ in try ServerProcess(arguments: ["--database-url", databaseURL]) }
            self.nodes = nodes
            balancer = try LoadBalancer(upstreamPorts: nodes.map(\.port))
        } catch {  // deinit will not run: the database goes now.
            _ = try? Self.psql(try PostgresTestCluster.url(), "DROP DATABASE IF EXISTS \(database) WITH (FORCE)")
            throw error
        }
    }

    deinit {
        for node in nodes { node.stop() }
        _ = try? Self.psql(try PostgresTestCluster.url(), "DROP DATABASE IF EXISTS \(database) WITH (FORCE)")
    }

    /// A client whose every request goes through nginx (one "device").
    func makeClient() throws -> RoostClient {
        try RoostClient(.init(serverURL: url, applicationId: ServerProcess.applicationId,
                              storageDirectory: FileManager.default.temporaryDirectory.appendingPathComponent("roost-device-\(UUID().uuidString)"),
                              requestTimeout: 5))
    }

    /// Runs one SQL statement with `psql` (this test target has no PostgreSQL client library).
    static func psql(_ url: String, _ sql: String) throws {
        let result = try ChildProcess.run("/usr/bin/psql", [url, "-v", "ON_ERROR_STOP=1", "-qAtc", sql])
        guard result.status == 0 else { throw ServerProcessError.exited("psql \(sql): \(result.output)") }
    }
}

/// One REST call, answered with its status, JSON body and headers; a failed transport is status 0.
struct RawReply {
    let status: Int
    let json: JSON
    let headers: [String: String]
    var code: Int? { json["code"]?.numberValue.map { Int($0) } }

    static func send(_ method: String, _ url: URL, _ path: String, json: JSON? = nil, query: [String: String] = [:],
                     token: String? = nil, master: Bool = false, headers extra: [String: String] = [:],
                     session: URLSession = .shared) async -> RawReply {
        var components = URLComponents(url: url.appendingPathComponent(path), resolvingAgainstBaseURL: false)!
        if !query.isEmpty { components.queryItems = query.map { URLQueryItem(name: $0.key, value: $0.value) } }
        var request = URLRequest(url: components.url!, timeoutInterval: 10)
        request.httpMethod = method
        request.setValue(ServerProcess.applicationId, forHTTPHeaderField: "X-Parse-Application-Id")
        if master { request.setValue("sdk-master-key", forHTTPHeaderField: "X-Parse-Master-Key") }
        if let token { request.setValue(token, forHTTPHeaderField: "X-Parse-Session-Token") }
        for (name, value) in extra { request.setValue(value, forHTTPHeaderField: name) }
        if let json {
            request.httpBody = Data(json.encoded())
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        guard let (data, response) = try? await session.data(for: request), let http = response as? HTTPURLResponse else {
            return RawReply(status: 0, json: .null, headers: [:])
        }
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields { headers["\(name)".lowercased()] = "\(value)" }
        return RawReply(status: http.statusCode, json: (try? JSONParser.parse(Array(data))) ?? .null, headers: headers)
    }
}

/// Debian's nginx balancing `/parse/` round robin over the nodes, with README.md's example configuration (its
/// ```nginx block): only its listening port and its upstream servers are replaced, and a header naming the node
/// that answered (`X-Roost-Node`) is added for the tests. A non-daemon child with its own prefix; ends with the test.
final class LoadBalancer: @unchecked Sendable {
    let port: Int
    private let directory = FileManager.default.temporaryDirectory.appendingPathComponent("roost-balancer-\(UUID().uuidString)")
    private var process: ChildProcess?

    var url: URL { URL(string: "http://127.0.0.1:\(port)/parse")! }

    init(upstreamPorts: [Int]) throws {
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("logs"), withIntermediateDirectories: true)
        var port = try ServerProcess.freePort()
        for attempt in 1... {
            let configuration = directory.appendingPathComponent("nginx.conf")
            try Data(try Self.configuration(port: port, upstreamPorts: upstreamPorts).utf8).write(to: configuration)
            let process = try ChildProcess(executable: "/usr/sbin/nginx",
                                           arguments: ["-p", directory.path, "-c", configuration.path, "-e", "stderr",
                                                       "-g", "daemon off; master_process off; pid \(directory.path)/nginx.pid;"],
                                           stderrPath: directory.appendingPathComponent("error.log").path)
            if TLSProxy.waitForListener(port: port, process: process) {
                self.process = process
                break
            }
            process.kill(signal: SIGKILL)
            _ = process.waitUntilExit()
            let log = (try? String(contentsOf: directory.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
            guard attempt < 3 else { throw ServerProcessError.exited("nginx did not start: \(log)") }
            port = try ServerProcess.freePort()  // Taken meanwhile by another test.
        }
        self.port = port
    }

    /// SIGKILL, as `TLSProxy` stops its nginx (a child of a test thread may not see SIGTERM).
    deinit {
        if let process {
            process.kill(signal: SIGKILL)
            _ = process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    /// README.md's ```nginx block on `port`, over `upstreamPorts`.
    static func configuration(port: Int, upstreamPorts: [Int]) throws -> String {
        let readme = try String(contentsOf: SMTPSink.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        guard let start = readme.range(of: "```nginx\n"), let end = readme.range(of: "\n```", range: start.upperBound..<readme.endIndex) else {
            throw ServerProcessError.exited("README.md has no nginx block")
        }
        var lines: [String] = []
        var serversAdded = false
        for line in readme[start.upperBound..<end.lowerBound].split(separator: "\n", omittingEmptySubsequences: false) {
            let text = line.trimmingCharacters(in: .whitespaces)
            if text.hasPrefix("server 127.0.0.1:") {
                guard !serversAdded else { continue }
                serversAdded = true
                lines += upstreamPorts.map { "        server 127.0.0.1:\($0);" }
            } else if text.hasPrefix("listen ") {
                lines.append("        listen 127.0.0.1:\(port);")
            } else if text.hasPrefix("proxy_pass ") {
                lines += [String(line), "            add_header X-Roost-Node $upstream_addr always;"]
            } else {
                lines.append(String(line))
            }
        }
        guard serversAdded else { throw ServerProcessError.exited("README.md's nginx block names no upstream server") }
        return lines.joined(separator: "\n")
    }
}
