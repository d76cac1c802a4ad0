import Foundation
import Roost
import RoostTestSupport
import Testing

/// The durable queue under SIGKILL: a client process queues 2,000 mixed commands with the server
/// down, then drains while being killed at random moments 20 times; the server must end up with
/// exactly the expected objects and values (no loss, no duplicate, exact increments).
@Suite struct CrashTests {
    static let objectCount = 400

    @Test func killedWhileDrainingLosesAndDuplicatesNothing() async throws {
        let server = try ServerProcess(start: false)
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("roost-crash-\(UUID().uuidString)")
        let queued = try run(["enqueue", server.url.absoluteString, ServerProcess.applicationId, storage.path, String(Self.objectCount)],
                             until: "queued")
        #expect(queued.status == 0)
        #expect(queued.output.contains("queued 2000"))

        try server.start()
        var generator = SystemRandomNumberGenerator()
        var interrupted = 0
        for _ in 0..<20 {
            let process = try ChildProcess(executable: try Self.clientBinary().path,
                                           arguments: ["drain", server.url.absoluteString, ServerProcess.applicationId, storage.path])
            // The fault is the point of the test: kill at a random moment of the drain. Early enough that most kills land
            // before the queue is empty: on a fast machine a drain of 2,000 commands took little more than 150 ms, and
            // only 4 of 20 kills landed with a window of 20-150 ms.
            usleep(UInt32.random(in: 10_000...80_000, using: &generator))
            if process.isRunning {
                process.kill(signal: SIGKILL)
                interrupted += 1
            }
            process.waitUntilExit()
        }
        #expect(interrupted >= 5, "only \(interrupted) kills landed while draining")
        let final = try run(["drain", server.url.absoluteString, ServerProcess.applicationId, storage.path], until: "drained")
        #expect(final.status == 0)
        #expect(final.output.contains("drained, failed: 0"))

        let client = try server.makeClient()
        let objects = try await client.query("Crash").limit(1000).find()
        let expected = (0..<Self.objectCount).filter { $0 % 4 != 0 }
        #expect(objects.count == expected.count)
        let byKey = Dictionary(objects.map { (($0["k"] as Int?) ?? -1, $0) }, uniquingKeysWith: { first, _ in first })
        for index in expected {
            let object = try #require(byKey[index], "object \(index) missing")
            #expect(object["n"] == 3, "object \(index)")
            #expect(object["label"] == "L\(index)", "object \(index)")
        }
    }

    /// Runs the client to completion; its output is read up to its last line (starting with `marker`).
    private func run(_ arguments: [String], until marker: String) throws -> (status: Int32, output: String) {
        let output = try ChildProcess.makePipe()
        let process = try ChildProcess(executable: try Self.clientBinary().path, arguments: arguments, stdout: output.write)
        close(output.write)
        var text = ChildProcess.read(output.read, until: marker) ?? ""
        if !text.hasSuffix("\n") { text += ChildProcess.read(output.read, until: "\n") ?? "" }
        close(output.read)
        return (process.waitUntilExit(), text)
    }

    static func clientBinary() throws -> URL {
        let server = try ServerProcess.binary()
        return server.deletingLastPathComponent().appendingPathComponent("eventually-crash-client")
    }
}
