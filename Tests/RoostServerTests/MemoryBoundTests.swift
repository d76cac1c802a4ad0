import Foundation
import RoostCore
import Testing

/// What one request may make the server allocate: at most 1,000,000 JSON values per body (107) and
/// 100,000 per `$in`/`$nin`/`$all`/`$containedBy` (102); memory freed after a large request goes back
/// to the system.
@Suite struct MemoryBoundTests {
    /// The server's resident memory in MB (`VmRSS` of /proc/<pid>/status).
    static func residentMegabytes(_ server: TestServer) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(server.process.pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) / 1024
    }

    /// `{"_method":"GET","where":{"n":{"<op>":[1,1,…]}}}`: a find in the JS SDK's POST form.
    static func findBody(_ op: String, values count: Int) -> Data {
        Data(("{\"_method\":\"GET\",\"where\":{\"n\":{\"\(op)\":[" + Array(repeating: "1", count: count).joined(separator: ",") + "]}}}").utf8)
    }

    /// `{"list":[<element>,…]}`, a create.
    static func listBody(_ element: String, count: Int) -> Data {
        Data(("{\"list\":[" + Array(repeating: element, count: count).joined(separator: ",") + "]}").utf8)
    }

    @Test func bodiesOfTooManyValuesAreRefused() async throws {
        let server = try TestServer()
        _ = try await server.create("Big", ["n": 1])
        // The list, its 1,000,000 zeros and the object around them: one value too many.
        let refused = try await server.request("POST", "/classes/Big", body: MemoryBoundTests.listBody("0", count: 1_000_000))
        #expect(refused.status == 400 && refused.code == 107, "\(refused.text)")
        #expect(refused.json["error"]?.stringValue?.contains("more than 1000000 values") == true, "\(refused.text)")
        let tooManyInList = try await server.request("POST", "/classes/Big", body: MemoryBoundTests.findBody("$in", values: 1_200_000))
        #expect(tooManyInList.status == 400 && tooManyInList.code == 107, "\(tooManyInList.text)")
        // The same with `where` as a JSON string inside the body (as the URL carries it).
        let whereText = "{\"n\":{\"$in\":[" + Array(repeating: "1", count: 1_200_000).joined(separator: ",") + "]}}"
        let stringWhere = try await server.request("POST", "/classes/Big", json: ["_method": "GET", "where": .string(whereText)])
        #expect(stringWhere.status == 400 && stringWhere.code == 107, "\(stringWhere.text)")
        for op in ["$in", "$nin", "$all", "$containedBy"] {
            let tooLong = try await server.request("POST", "/classes/Big", body: MemoryBoundTests.findBody(op, values: 100_001))
            #expect(tooLong.status == 400 && tooLong.code == 102, "\(op): \(tooLong.text)")
            #expect(tooLong.json["error"] == .string("\(op) takes at most 100000 values."))
        }
        // Up to the list limit, and a large body within the value limit (exactly the limit: JSONParserLimitTests), answered.
        let found = try await server.request("POST", "/classes/Big", body: MemoryBoundTests.findBody("$in", values: 100_000))
        #expect(found.status == 200 && found.json["results"]?.arrayValue?.count == 1, "\(found.text.prefix(200))")
        #expect(try await server.request("POST", "/classes/Big", body: MemoryBoundTests.listBody("0", count: 200_000)).status == 201)
    }

    /// After large requests the server's memory comes back near where it was (it stayed ~1.5 GB after
    /// one `$in` of 10 million values).
    @Test func memoryGoesBackAfterLargeRequests() async throws {
        let server = try TestServer()
        _ = try await server.create("Big", ["n": 1])
        _ = try await server.request("POST", "/classes/Big", body: MemoryBoundTests.findBody("$in", values: 10))
        let before = MemoryBoundTests.residentMegabytes(server)
        // 6 MB of `1,1,…` ($in refused), then 9 MB of strings (stored).
        _ = try await server.request("POST", "/classes/Big", body: MemoryBoundTests.findBody("$in", values: 3_000_000))
        _ = try await server.request("POST", "/classes/Big", body: MemoryBoundTests.listBody("\"abcdefghijklmnopqrstuvwxyz\"", count: 300_000))
        var after = MemoryBoundTests.residentMegabytes(server)
        for _ in 0..<25 where after > before + 40 {  // The trim runs shortly after the reply.
            try await Task.sleep(for: .milliseconds(200))
            after = MemoryBoundTests.residentMegabytes(server)
        }
        #expect(before > 0 && after - before <= 40, "resident memory \(before) MB before, \(after) MB after")
    }

    /// The code only starting up ran is handed back (`StartupCode`, just after the server starts listening): of the
    /// binary's executable mapping, what stays resident is what answering ran (without it: 7.8 of 11.6 MB in a debug
    /// build, 2.0 MB with it; 11 of 19 MB in a release build).
    @Test func codeOnlyStartingUpRanIsNotKeptResident() async throws {
        let server = try TestServer()
        #expect(try await server.request("GET", "/health").status == 200)
        var share = 100
        for _ in 0..<50 where share >= 40 {
            try await Task.sleep(for: .milliseconds(100))
            share = try Self.residentShareOfCode(server)
        }
        #expect(share < 40, "\(share) % of the code resident")
    }

    /// The resident share (%) of the server binary's executable mapping.
    static func residentShareOfCode(_ server: TestServer) throws -> Int {
        let smaps = try String(decoding: #require(FileHandle(forReadingAtPath: "/proc/\(server.process.pid)/smaps")).readDataToEndOfFile(),
                               as: UTF8.self).split(separator: "\n")
        let code = try #require(smaps.firstIndex { $0.contains(" r-xp ") && $0.hasSuffix("/roost") })
        let bounds = smaps[code].prefix { $0 != " " }.split(separator: "-").compactMap { Int($0, radix: 16) }
        let residentKB = try #require(smaps[code...].first { $0.hasPrefix("Rss:") }.flatMap { Int($0.split(separator: " ")[1]) })
        return residentKB * 1024 * 100 / (bounds[1] - bounds[0])
    }
}
