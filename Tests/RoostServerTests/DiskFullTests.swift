import Foundation
import RoostCore
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
        #expect(server.log().contains("database or disk is full"))
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
