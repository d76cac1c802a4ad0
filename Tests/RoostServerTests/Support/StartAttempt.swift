import Foundation
import RoostTestSupport

/// `roost serve` started with `arguments` on a fresh data dir, to see whether it comes up: for the options it must
/// refuse at start (and the defaults it must take).
struct StartAttempt {
    /// Whether it printed `listening on` (it was then stopped).
    let started: Bool
    /// Its exit status when it did not start.
    let status: Int32
    /// What it wrote to stderr.
    let log: String

    init(_ arguments: [String], environment: [String: String] = [:]) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("roost-test-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let logPath = directory.appendingPathComponent("server.log").path
        let output = try ChildProcess.makePipe()
        let process = try ChildProcess(
            executable: try TestServer.binary().path, arguments: ["serve", "--port", "0", "--data-dir", directory.path] + arguments,
            environment: environment.merging(["ROOST_EXIT_WITH_PARENT": "1"]) { a, _ in a }, stdout: output.write, stderrPath: logPath)
        close(output.write)
        started = ChildProcess.read(output.read, until: "listening on") != nil
        close(output.read)
        if started {
            process.terminate()
            status = 0
        } else {
            status = process.waitUntilExit()
        }
        log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
    }
}
