import Foundation
@testable import RoostServer
import RoostTestSupport
import Testing

/// Transactions that keep failing each other (serialization failures), in the serial pass (`TIMED_SUITES`): eight
/// threads contending, which a machine loaded by the parallel pass would slow past any fixed number of attempts.
@Suite struct PostgresContentionTests {
    let url: String
    let table = "t_" + UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: "")

    init() throws { url = try PostgresTestCluster.url() }

    /// Eight connections incrementing one counter, each holding its read for a millisecond before it writes: every
    /// commit fails the others' attempts at once. Retried at once, the same eight collided again and again (checked:
    /// without the backoff, transactions used all 20 of the engine's attempts and failed); spread out, all commit.
    @Test func contendingTransactionsBackOffUntilEveryOneCommits() throws {
        let db = try PostgresConnection(url: url)
        try db.execute("CREATE TABLE \(table) (id int8 PRIMARY KEY, n int8)")
        defer { _ = try? db.execute("DROP TABLE IF EXISTS \(table)") }
        try db.query("INSERT INTO \(table) VALUES (1, 0)")
        let failures = PostgresLocked<[String]>([])
        let finished = DispatchSemaphore(value: 0)
        for _ in 0..<8 {
            Thread { [url, table] in
                defer { finished.signal() }
                do {
                    let connection = try PostgresConnection(url: url)
                    for _ in 0..<10 {
                        try connection.transaction(.serializable, attempts: PostgresEngine.writeAttempts) { tx in
                            let n = try tx.query("SELECT n FROM \(table) WHERE id = 1")[0].int("n") ?? -1
                            usleep(1_000)
                            try tx.query("UPDATE \(table) SET n = $1 WHERE id = 1", [.int(Int64(n + 1))])
                        }
                    }
                } catch {
                    failures.update { $0.append("\(error)") }
                }
            }.start()
        }
        for _ in 0..<8 { finished.wait() }
        #expect(failures.get().isEmpty, "\(failures.get())")
        #expect(try db.query("SELECT n FROM \(table)")[0].int(0) == 80)
    }
}
