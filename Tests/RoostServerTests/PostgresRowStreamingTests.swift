import Foundation
@testable import RoostServer
import RoostTestSupport
import Testing

/// `forEachRow` on PostgreSQL keeps one row at a time (libpq's single-row mode), where `fetchRows` holds them all:
/// measured as this process's resident memory while 100 MB of rows go by. In TIMED_SUITES (run alone): other
/// tests' allocations would blur the measurement.
@Suite(.serialized) struct PostgresRowStreamingTests {
    static func residentMegabytes() -> Double {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Double(line.split(separator: " ").dropFirst().first ?? "0").map { $0 / 1024 } ?? 0
    }

    @Test func forEachRowHoldsOneRowWhereFetchRowsHoldsAll() throws {
        let db = try PostgresConnection(url: try PostgresTestCluster.url())
        let table = "stream_" + UUID().uuidString.prefix(8).lowercased()
        // 40,000 rows of 2,500 bytes: 100 MB of text.
        try db.execute("""
            CREATE TABLE \(table) (id bigint PRIMARY KEY, payload text NOT NULL);
            INSERT INTO \(table) SELECT g, repeat(md5(g::text), 78) || 'abcd' FROM generate_series(1, 40000) AS g;
            """)
        defer { _ = try? db.execute("DROP TABLE \(table)") }
        let sql = "SELECT id, payload FROM \(table) ORDER BY id"
        let megabytes = 40_000.0 * 2_500 / 1_048_576

        let streamingBase = Self.residentMegabytes()
        var streamingPeak = streamingBase
        var rows = 0
        var bytes = 0
        try db.forEachRow(sql, [], cacheable: false) { row in
            rows += 1
            bytes += row[1].text?.utf8.count ?? 0
            if rows % 500 == 0 { streamingPeak = max(streamingPeak, Self.residentMegabytes()) }
        }
        #expect(rows == 40_000 && bytes == 100_000_000)

        let collectedBase = Self.residentMegabytes()
        let all = try db.fetchRows(sql, [], cacheable: false)
        let collectedPeak = Self.residentMegabytes()
        #expect(all.count == 40_000)
        let streamed = streamingPeak - streamingBase, collected = collectedPeak - collectedBase
        print("PostgresRowStreamingTests: \(Int(megabytes)) MB of rows; resident growth forEachRow \(Int(streamed)) MB, fetchRows \(Int(collected)) MB")
        #expect(streamed < 16, "forEachRow grew \(streamed) MB over \(megabytes) MB of rows")
        #expect(collected > megabytes * 0.9, "fetchRows grew \(collected) MB: the measurement does not see what is held")
    }
}
