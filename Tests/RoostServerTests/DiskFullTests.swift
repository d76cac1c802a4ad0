import Foundation
import RoostCore
@testable import RoostServer
import RoostTestSupport
import Testing

/// A write that finds the disk full is answered 500 code 1 "database or disk is full" (it was a
/// generic "Internal server error."), logged with its cause, and the server goes on serving.
@Suite struct DiskFullTests {
    /// Mounting a tmpfs needs privileges a test run may not have; then the test is skipped.
    static let canMountTmpfs: Bool = {
        guard let point = try? makeMountPoint() else { return false }
        defer { try? FileManager.default.removeItem(atPath: point) }
        guard mountTmpfs(at: point, size: "1m") else { return false }
        unmount(point)
        return true
    }()

    @Test(.enabled(if: DiskFullTests.canMountTmpfs, "mounting a tmpfs is not permitted here"))
    func aFullDiskIsSaidSo() async throws {
        let point = try DiskFullTests.makeMountPoint()
        defer { try? FileManager.default.removeItem(atPath: point) }
        try #require(DiskFullTests.mountTmpfs(at: point, size: "4m"))
        defer { DiskFullTests.unmount(point) }
        // The database on the small disk; the server's log (in the test's own directory) stays whole.
        let server = try TestServer(arguments: ["--data-dir", point])
        defer { server.stop() }
        let chunk = JSON.string(String(repeating: "x", count: 256 * 1024))
        var refusal: TestResponse?
        for _ in 0..<64 {
            let response = try await server.request("POST", "/classes/Blob", json: ["data": chunk])
            if response.status != 201 {
                refusal = response
                break
            }
        }
        let full = try #require(refusal, "64 writes of 256 KB fit on a 4 MB disk")
        #expect(full.status == 500 && full.code == 1, "\(full.text)")
        #expect(full.json["error"] == "database or disk is full")
        #expect(try await server.request("GET", "/health", appId: false).status == 200)
        #expect(try await server.request("GET", "/classes/Blob", query: ["limit": "1", "keys": "objectId"]).status == 200)
        #expect(try await server.logShows("database or disk is full"))
        // An uploaded file that finds no room is told the same.
        let upload = try await server.request("POST", "/files/big.bin", body: Data(count: 1 << 20),
                                              headers: ["Content-Type": "application/octet-stream"], master: true)
        #expect(upload.status == 500 && upload.code == 1, "\(upload.text)")
        #expect(upload.json["error"] == "database or disk is full")
    }

    /// A log write cut short by a full disk leaves one line cut, never two lines run together: once
    /// there is room again, the next line starts on a line of its own.
    @Test(.enabled(if: DiskFullTests.canMountTmpfs, "mounting a tmpfs is not permitted here"))
    func logLinesAfterAFullDiskStayWhole() throws {
        let point = try DiskFullTests.makeMountPoint()
        defer { try? FileManager.default.removeItem(atPath: point) }
        try #require(DiskFullTests.mountTmpfs(at: point, size: "8k"))  // Two pages.
        defer { DiskFullTests.unmount(point) }
        let filler = point + "/filler"
        try #require(FileManager.default.createFile(atPath: filler, contents: Data(count: 4096)))
        let logPath = point + "/log"
        let descriptor = open(logPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        let sink = LogSink(fileDescriptor: descriptor)
        // 6,300 bytes of 63-byte lines: the page left holds 65 lines and part of the 66th.
        for index in 0..<100 { sink.append(Array("line \(String(index + 1000)) \(String(repeating: "x", count: 52))\n".utf8), urgent: false) }
        sink.flush()
        try FileManager.default.removeItem(atPath: filler)  // Room again.
        sink.append(Array("after the disk was full\n".utf8), urgent: true)
        let lines = try String(contentsOfFile: logPath, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 68, "\(lines.suffix(3))")  // 65 whole, the cut one, the new one, "" after the last newline.
        #expect(lines.suffix(2) == ["after the disk was full", ""])
        #expect(lines.prefix(65).allSatisfy { $0.count == 62 && $0.hasPrefix("line 1") })
    }

    static func makeMountPoint() throws -> String {
        let point = FileManager.default.temporaryDirectory.appendingPathComponent("roost-full-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: point, withIntermediateDirectories: true)
        return point
    }

    static func mountTmpfs(at point: String, size: String) -> Bool {
        (try? ChildProcess.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", point]).status) == 0
    }

    static func unmount(_ point: String) {
        _ = try? ChildProcess.run("/bin/umount", [point])
    }
}
