import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Roost
import RoostCore
import RoostTestSupport

/// The real `roost` binary for SDK tests: started on a chosen or free port with its own data
/// directory; stop and start it again (same port, same data) to test offline behaviour.
final class ServerProcess: @unchecked Sendable {
    static let applicationId = "sdk-test-app"
    let dataDirectory: URL
    private(set) var port: Int
    private var process: ChildProcess?
    /// Extra environment for the server process (e.g. fault injection).
    var environment: [String: String] = [:]
    /// Extra `roost serve` flags (e.g. a short LiveQuery replay window).
    let extraArguments: [String]

    var url: URL { URL(string: "http://127.0.0.1:\(port)/parse")! }

    /// - Parameter start: false to only reserve the port (a server that is "down" until `start()`).
    init(start: Bool = true, arguments: [String] = []) throws {
        extraArguments = arguments
        dataDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("roost-sdk-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dataDirectory, withIntermediateDirectories: true)
        port = try ServerProcess.freePort()
        guard start else { return }
        // The port was free a moment ago; a server another test started since may have taken it.
        for attempt in 1... {
            do {
                try self.start()
                return
            } catch where attempt < 3 {
                port = try ServerProcess.freePort()
            }
        }
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: dataDirectory)
    }

    func start() throws {
        let output = try ChildProcess.makePipe()
        defer { close(output.read) }  // The server prints nothing after its "listening" line.
        let process = try ChildProcess(
            executable: try ServerProcess.binary().path,
            arguments: ["serve", "--port", String(port), "--data-dir", dataDirectory.path, "--app-id", ServerProcess.applicationId,
                        "--master-key", "sdk-master-key", "--password-iterations", "1000", "--log-level", "warning"] + extraArguments,
            environment: environment.merging(["ROOST_EXIT_WITH_PARENT": "1"]) { mine, _ in mine }, stdout: output.write)
        close(output.write)
        guard ChildProcess.read(output.read, until: "listening on") != nil else {
            process.terminate()
            throw ServerProcessError.exited("the server did not start on port \(port)")
        }
        self.process = process
    }

    func stop() {
        process?.terminate()
        process = nil
    }

    /// SIGKILL: the process ends at once, mid-request, nothing flushed or closed.
    func kill() {
        process?.kill(signal: SIGKILL)
        _ = process?.waitUntilExit()
        process = nil
    }

    /// A client of this server with its own storage directory (one "device").
    func makeClient(storage: URL? = nil, requestTimeout: TimeInterval = 5) throws -> RoostClient {
        let directory = storage ?? FileManager.default.temporaryDirectory.appendingPathComponent("roost-device-\(UUID().uuidString)")
        return try RoostClient(.init(serverURL: url, applicationId: ServerProcess.applicationId, storageDirectory: directory,
                                     requestTimeout: requestTimeout))
    }

    /// A request with the master key, for set-up the SDK does not do (e.g. registering a webhook).
    func masterRequest(_ method: String, _ path: String, json: JSON) async throws -> JSON {
        var request = URLRequest(url: url.appendingPathComponent(path))
        request.httpMethod = method
        request.setValue(ServerProcess.applicationId, forHTTPHeaderField: "X-Parse-Application-Id")
        request.setValue("sdk-master-key", forHTTPHeaderField: "X-Parse-Master-Key")
        request.httpBody = Data(json.encoded())
        let (data, _) = try await URLSession.shared.data(for: request)
        return try JSONParser.parse(Array(data))
    }

    /// A port that is free now, below the kernel's ephemeral range (32768 and up by default): servers
    /// started on port 0 by other tests get ephemeral ports, so they cannot take it before this server
    /// starts (a test that reserves a port and starts the server later once lost it that way).
    static func freePort() throws -> Int {
        for _ in 0..<100 {
            let port = Int.random(in: 20_000..<32_000)
            if isFree(port) { return port }
        }
        throw ServerProcessError.noPort
    }

    private static func isFree(_ port: Int) -> Bool {
        let socketDescriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socketDescriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socketDescriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    static func binary() throws -> URL {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("roost"),
            Bundle.main.bundleURL.appendingPathComponent("roost"),
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent(".build/debug/roost"),
        ]
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            throw ServerProcessError.noBinary
        }
        return found
    }
}

enum ServerProcessError: Error {
    case exited(String)
    case noPort
    case noBinary
}
