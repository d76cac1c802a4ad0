import Foundation
import Roost
import Testing

/// The durable queue under SIGKILL: a client process queues 2,000 mixed commands with the server
/// down, then drains while being killed at random moments 20 times; the server must end up with
/// exactly the expected objects and values (no loss, no duplicate, exact increments).
@Suite struct CrashTests {
    static let objectCount = 400

    @Test func killedWhileDrainingLosesAndDuplicatesNothing() async throws {
        let server = try ServerProcess(start: false)
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("roost-crash-\(UUID().uuidString)")
        let queued = try run(["enqueue", server.url.absoluteString, ServerProcess.applicationId, storage.path, String(Self.objectCount)])
        #expect(queued.status == 0)
        #expect(queued.output.contains("queued 2000"))

        try server.start()
        var generator = SystemRandomNumberGenerator()
        var interrupted = 0
        for _ in 0..<20 {
            let process = try launch(["drain", server.url.absoluteString, ServerProcess.applicationId, storage.path])
            // The fault is the point of the test: kill at a random moment of the drain.
            usleep(UInt32.random(in: 20_000...150_000, using: &generator))
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                interrupted += 1
            }
            process.waitUntilExit()
        }
        #expect(interrupted >= 5, "only \(interrupted) kills landed while draining")
        let final = try run(["drain", server.url.absoluteString, ServerProcess.applicationId, storage.path])
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

    private func launch(_ arguments: [String]) throws -> Process {
        let process = Process()
        process.executableURL = try Self.clientBinary()
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    private func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = try Self.clientBinary()
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }

    static func clientBinary() throws -> URL {
        let server = try ServerProcess.binary()
        return server.deletingLastPathComponent().appendingPathComponent("eventually-crash-client")
    }
}
