import Foundation
import RoostCore
import Testing

/// Files on PostgreSQL live in the database (`PostgresFileStore`): every node serves every file. (FileTests,
/// FileExtensionTests and ParseFileSpecTests run on PostgreSQL in the test command's PostgreSQL pass.)
@Suite struct PostgresFileTests {
    /// Bytes no two chunks of which are alike, so a chunk served out of place shows.
    static func distinctBytes(_ count: Int) -> Data {
        FileHandle(forReadingAtPath: "/dev/urandom")!.readData(ofLength: count)
    }

    @Test func aFileUploadedThroughOneNodeIsServedByAnother() async throws {
        let first = try TestServer(onPostgres: true)
        let second = try TestServer(sharingDatabaseWith: first)
        // Three chunks and a part (256 KB each).
        let bytes = Self.distinctBytes(3 * 256 * 1024 + 1_000)
        let upload = try await first.request("POST", "/files/photo.jpg", body: bytes, headers: ["Content-Type": "image/jpeg"], master: true)
        #expect(upload.status == 201, "\(upload.text)")
        let name = try #require(upload.json["name"]?.stringValue)
        let path = "/files/\(TestServer.applicationId)/\(name)"

        let fromSecond = try await second.request("GET", path, appId: false)
        #expect(fromSecond.status == 200)
        #expect(fromSecond.body == bytes)
        #expect(fromSecond.headers["content-type"] == "image/jpeg")
        #expect(fromSecond.headers["content-length"] == String(bytes.count))
        let fromFirst = try await first.request("GET", path, appId: false)
        #expect(fromFirst.headers["etag"] != nil && fromFirst.headers["etag"] == fromSecond.headers["etag"], "one validator on every node")
        #expect(fromFirst.headers["last-modified"] == fromSecond.headers["last-modified"])
        let revalidated = try await second.request("GET", path, headers: ["If-None-Match": fromFirst.headers["etag"] ?? ""], appId: false)
        #expect(revalidated.status == 304)

        // Ranges across chunk boundaries, answered as on disk (`FileRange`: `end` one past the last byte sent).
        for (header, range) in [("bytes=262000-524400", 262_000..<524_401), ("bytes=0-9", 0..<10), ("bytes=-5", bytes.count - 5..<bytes.count),
                                ("bytes=786000-", 786_000..<bytes.count)] {
            let part = try await second.request("GET", path, headers: ["Range": header], appId: false)
            #expect(part.status == 206, "\(header)")
            #expect(part.body == bytes.subdata(in: range), "\(header): \(part.body.count) bytes")
            #expect(part.headers["content-range"] == "bytes \(range.lowerBound)-\(range.upperBound)/\(bytes.count)", "\(header)")
        }

        // Deleted through the second node: gone from the first.
        #expect(try await second.request("DELETE", "/files/\(name)", master: true).status == 200)
        #expect(try await first.request("GET", path, appId: false).status == 404)
        #expect(try await first.request("DELETE", "/files/\(name)", master: true).json["code"] == 153)
    }
}

/// A large download is streamed a piece at a time, from PostgreSQL's chunks or from the file on disk: the server's
/// peak resident memory grows by far less than the file. In TIMED_SUITES (run alone): the measurement is of one
/// server process, but a 48 MB upload and download take long under the parallel phase's load.
@Suite struct FileMemoryTests {
    /// `VmHWM` (peak) or `VmRSS` of a process, in MB.
    static func memory(_ pid: Int32, _ field: String) -> Double {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix(field + ":") } ?? ""
        return Double(line.split(separator: " ").dropFirst().first ?? "0").map { $0 / 1024 } ?? 0
    }

    /// Resets the process's peak (`VmHWM`) to what it holds now (proc(5), clear_refs: 5).
    static func resetPeak(_ pid: Int32) -> Bool {
        (try? "5".write(toFile: "/proc/\(pid)/clear_refs", atomically: false, encoding: .utf8)) != nil
    }

    @Test(arguments: [false, true]) func aLargeFileIsStreamedBothWaysNotHeld(onPostgres: Bool) async throws {
        let megabytes = 48
        let server = try TestServer(arguments: ["--max-body", String((megabytes + 8) << 20)], onPostgres: onPostgres)
        let pid = server.process.pid
        let bytes = PostgresFileTests.distinctBytes(megabytes << 20)
        // A small upload and download first: the code they run is faulted in (the server handed back what only starting
        // up ran), and the peak is counted from there, so what is measured is what the file's size costs.
        let warmUp = try await server.request("POST", "/files/warm.bin", body: PostgresFileTests.distinctBytes(2 << 20), master: true)
        #expect(try await server.request("GET", "/files/\(TestServer.applicationId)/\(warmUp.json["name"]?.stringValue ?? "")", appId: false).status == 200)
        try #require(Self.resetPeak(pid), "cannot reset the server's peak memory")
        let before = Self.memory(pid, "VmRSS")
        let started = Date()
        let upload = try await server.request("POST", "/files/big.bin", body: bytes, master: true)
        #expect(upload.status == 201, "\(upload.text)")
        let name = try #require(upload.json["name"]?.stringValue)
        let uploadPeak = Self.memory(pid, "VmHWM") - before
        let uploadSeconds = Date().timeIntervalSince(started)

        try #require(Self.resetPeak(pid), "cannot reset the server's peak memory")
        let base = Self.memory(pid, "VmRSS")
        let downloadStarted = Date()
        let download = try await server.request("GET", "/files/\(TestServer.applicationId)/\(name)", appId: false)
        let downloadSeconds = Date().timeIntervalSince(downloadStarted)
        let downloadGrowth = Self.memory(pid, "VmHWM") - base
        #expect(download.status == 200)
        #expect(download.body == bytes)
        print("FileMemoryTests (\(onPostgres ? "PostgreSQL" : "SQLite")): \(megabytes) MB file; server peak growth: upload \(Int(uploadPeak)) MB in \(String(format: "%.1f", uploadSeconds)) s, download \(Int(downloadGrowth)) MB in \(String(format: "%.1f", downloadSeconds)) s")
        #expect(downloadGrowth < 16, "a \(megabytes) MB download grew the server by \(downloadGrowth) MB")
        // The upload went to disk as it arrived (`BodySpool`), and from there into the store piece by piece.
        #expect(uploadPeak < 16, "a \(megabytes) MB upload grew the server by \(uploadPeak) MB")
    }
}
