import Foundation
@testable import RoostServer
import RoostTestSupport
import Testing

/// The libpq wrapper against a real PostgreSQL cluster (`PostgresTestCluster`: make test's, or one started here).
@Suite struct PostgresConnectionTests {
    let url: String
    let table = "t_" + UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: "")

    init() throws { url = try PostgresTestCluster.url() }

    private func connect() throws -> PostgresConnection { try PostgresConnection(url: url) }

    private func withTable<T>(_ columns: String, _ body: (PostgresConnection) throws -> T) throws -> T {
        let db = try connect()
        try db.execute("CREATE TABLE \(table) (\(columns))")
        defer { _ = try? db.execute("DROP TABLE IF EXISTS \(table)") }
        return try body(db)
    }

    @Test func everyTypeRoundTripsThroughParametersAndColumns() throws {
        try withTable("id int8 PRIMARY KEY, s text, n int8, d float8, b boolean, y bytea, j jsonb, t timestamptz") { db in
            let bytes: [UInt8] = [0, 1, 2, 0x7f, 0x80, 0xfe, 0xff, 0x5c, 0x78]  // NUL, high bytes, "\x".
            let insert = "INSERT INTO \(table) VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8)"
            try db.query(insert, [1, "héllo 'quoted' \"x\" ✓", .int(Int64.min), 0.1, true, .bytes(bytes), #"{"a":[1,2]}"#,
                                  "2026-11-26T10:00:00.123Z"])
            try db.query(insert, [2, "", .int(Int64.max), -1.5e-300, false, .bytes([]), "null", .null])
            try db.query(insert, [3, .null, .null, .null, .null, .null, .null, .null])

            let rows = try db.query("SELECT *, extract(epoch from t)::float8 AS epoch FROM \(table) ORDER BY id").rows
            #expect(rows.count == 3)
            #expect(try rows[0].string("s") == "héllo 'quoted' \"x\" ✓")
            #expect(try rows[0].int("n") == Int(Int64.min))
            #expect(try rows[0].double("d") == 0.1)
            #expect(try rows[0].bool("b") == true)
            #expect(try rows[0].bytes("y") == bytes)
            #expect(try rows[0].string("j") == #"{"a": [1, 2]}"#)
            #expect(try rows[0].double("epoch") == 1_795_687_200.123)
            #expect(try rows[1].string("s") == "")
            #expect(try rows[1].int("n") == Int(Int64.max))
            #expect(try rows[1].double("d") == -1.5e-300)
            #expect(try rows[1].bool("b") == false)
            #expect(try rows[1].bytes("y") == [])
            for column in ["s", "n", "d", "b", "y", "j", "t"] {
                #expect(try rows[2].isNull(column))
                #expect(try rows[2].string(column) == nil)
                #expect(try rows[2].value(column) == .null)
            }
            #expect(try rows[2].int("n") == nil && rows[2].bytes("y") == nil && rows[2].bool("b") == nil)
            // value() decodes by the column's type.
            #expect(try rows[0].value("id") == .int(1))
            #expect(try rows[0].value("d") == .double(0.1))
            #expect(try rows[0].value("b") == .bool(true))
            #expect(try rows[0].value("y") == .bytes(bytes))
            #expect(try rows[0].value("s") == .text("héllo 'quoted' \"x\" ✓"))
        }
    }

    @Test func parametersKeepTheirTypesAndSpecialNumbers() throws {
        let db = try connect()
        let row = try db.query("SELECT $1 AS i, $2 AS d, $3 AS b, $4 AS y, $5 AS s, $6 AS n, $7 AS inf, $8 AS nan",
                               [42, 2.5, false, .bytes([9, 0]), "text", .null, .double(-.infinity), .double(.nan)])[0]
        #expect(try row.value("i") == .int(42))
        #expect(try row.value("d") == .double(2.5))
        #expect(try row.value("b") == .bool(false))
        #expect(try row.value("y") == .bytes([9, 0]))
        #expect(try row.value("s") == .text("text"))
        #expect(try row.value("n") == .null)
        #expect(try row.double("inf") == -.infinity)
        #expect(try row.double("nan")?.isNaN == true)
        #expect(try row.value(0) == .int(42))  // By position too.
        // A value of another type is an error, not a zero.
        #expect(throws: PostgresError.self) { try row.int("s") }
        #expect(throws: PostgresError.self) { try row.string("missing") }
        // Parameters are values, never SQL.
        let hostile = "'; DROP TABLE pg_class; --"
        #expect(try db.query("SELECT $1::text AS v", [.text(hostile)])[0].string("v") == hostile)
    }

    /// Connections run without JIT, whose compiling cost the query compiler's short statements 0.6 s each.
    @Test func connectionsRunWithoutJIT() throws {
        let db = try PostgresConnection(url: try PostgresTestCluster.url())
        #expect(try db.query("SHOW jit").rows.first?.string(0) == "off")
    }

    @Test func aUniqueViolationCarriesItsSQLState() throws {
        try withTable("id text PRIMARY KEY") { db in
            try db.query("INSERT INTO \(table) VALUES ($1)", ["a"])
            let error = try #require(throws: PostgresError.self) { try db.query("INSERT INTO \(table) VALUES ($1)", ["a"]) }
            #expect(error.kind == .server)
            #expect(error.sqlState == .uniqueViolation && error.sqlState?.rawValue == "23505")
            #expect(error.detail?.contains("(id)=(a)") == true)
            #expect(error.description.contains("23505"))
            // The connection stays usable after an error.
            #expect(try db.query("SELECT count(*) FROM \(table)")[0].int(0) == 1)
            let syntax = try #require(throws: PostgresError.self) { try db.query("SELEC 1") }
            #expect(syntax.sqlState == .syntaxError)
        }
    }

    @Test func aTransactionCommitsOrRollsBack() throws {
        try withTable("id text PRIMARY KEY") { db in
            struct Refused: Error {}
            #expect(throws: Refused.self) {
                try db.transaction { tx in
                    try tx.query("INSERT INTO \(table) VALUES ($1)", ["rolled back"])
                    throw Refused()
                }
            }
            #expect(db.isIdle)
            // A statement that fails inside rolls the whole transaction back.
            #expect(throws: PostgresError.self) {
                try db.transaction { tx in
                    try tx.query("INSERT INTO \(table) VALUES ($1)", ["also rolled back"])
                    try tx.query("INSERT INTO \(table) VALUES ($1)", ["also rolled back"])
                }
            }
            // A statement error caught inside leaves the transaction aborted: it is reported, not committed as a success.
            let swallowed = try #require(throws: PostgresError.self) {
                try db.transaction { tx in
                    try tx.query("INSERT INTO \(table) VALUES ($1)", ["swallowed"])
                    _ = try? tx.query("INSERT INTO \(table) VALUES ($1)", ["swallowed"])
                }
            }
            #expect(swallowed.kind == .misuse && db.isIdle)
            _ = try db.transaction(.serializable) { tx in try tx.query("INSERT INTO \(table) VALUES ($1)", ["kept"]) }
            let ids = try db.query("SELECT id FROM \(table)").rows.map { try $0.string("id") }
            #expect(ids == ["kept"])
            // No transaction inside a transaction.
            let nested = try #require(throws: PostgresError.self) { try db.transaction { try $0.transaction { _ in } } }
            #expect(nested.kind == .misuse)
            #expect(db.isIdle)
        }
    }

    @Test func aSerializationFailureIs40001() throws {
        try withTable("id int8 PRIMARY KEY, n int8") { first in
            try first.query("INSERT INTO \(table) VALUES (1, 0)")
            let second = try connect()
            try first.execute("BEGIN ISOLATION LEVEL SERIALIZABLE")
            try second.execute("BEGIN ISOLATION LEVEL SERIALIZABLE")
            _ = try first.query("SELECT n FROM \(table) WHERE id = 1")
            _ = try second.query("SELECT n FROM \(table) WHERE id = 1")
            try first.query("UPDATE \(table) SET n = n + 1 WHERE id = 1")
            try first.execute("COMMIT")
            let error = try #require(throws: PostgresError.self) { try second.query("UPDATE \(table) SET n = n + 1 WHERE id = 1") }
            #expect(error.sqlState == .serializationFailure && error.sqlState?.isRetryable == true)
            try second.execute("ROLLBACK")
        }
    }

    @Test func aSerializationFailureIsRetriedFromTheStart() throws {
        try withTable("id int8 PRIMARY KEY, n int8") { db in
            try db.query("INSERT INTO \(table) VALUES (1, 0)")
            let other = try connect()
            var attempts = 0
            let seen = try db.transaction(.serializable, attempts: 3) { tx in
                attempts += 1
                let n = try tx.query("SELECT n FROM \(table) WHERE id = 1")[0].int("n") ?? -1
                // The first attempt loses to another connection's committed increment.
                if attempts == 1 { try other.query("UPDATE \(table) SET n = n + 1 WHERE id = 1") }
                try tx.query("UPDATE \(table) SET n = $1 WHERE id = 1", [.int(Int64(n + 1))])
                return n
            }
            #expect(attempts == 2 && seen == 1)
            #expect(try db.query("SELECT n FROM \(table)")[0].int(0) == 2)  // No increment lost.
            // Past its attempts the failure is the caller's.
            var tries = 0
            let error = try #require(throws: PostgresError.self) {
                try db.transaction(.serializable, attempts: 2) { tx in
                    tries += 1
                    _ = try tx.query("SELECT n FROM \(table) WHERE id = 1")
                    try other.query("UPDATE \(table) SET n = n + 1 WHERE id = 1")
                    try tx.query("UPDATE \(table) SET n = 0 WHERE id = 1")
                }
            }
            #expect(error.sqlState == .serializationFailure && tries == 2 && db.isIdle)
        }
    }

    @Test func retryDelaysGrowWithEachFailureUpToTheirCap() {
        for (failures, ceiling) in [(1, 250), (2, 500), (5, 4_000), (8, 25_000), (20, 25_000), (1_000, 25_000)] {
            let delays = (0..<200).map { _ in PostgresConnection.retryDelay(afterFailures: failures) }
            #expect(delays.allSatisfy { $0 <= ceiling }, "after \(failures) failures")
            #expect(delays.contains { $0 > ceiling / 2 }, "after \(failures) failures: spread over the whole range")
        }
    }

    @Test func aFullPoolMakesTheNextCallerWaitThenTimeOut() throws {
        let pool = try PostgresPool(url: url, size: 1, checkoutTimeout: 0.3)
        let error = try #require(throws: PostgresError.self) {
            try pool.withConnection { _ in try pool.withConnection { _ in } }
        }
        #expect(error.kind == .timeout && error.description.contains("127.0.0.1"))
        #expect(try pool.withConnection { try $0.query("SELECT 3")[0].int(0) } == 3)  // Free again.
    }

    @Test func aPreparedStatementIsPreparedOnceAndReused() throws {
        let db = try connect()
        let sql = "SELECT $1::int8 + 1 AS next"
        for number in 0..<5 { #expect(try db.query(sql, [.int(Int64(number))])[0].int("next") == number + 1) }
        let prepared = try db.query("SELECT count(*) FROM pg_prepared_statements WHERE statement = $1", [.text(sql)])
        #expect(try prepared[0].int(0) == 1)
        // DEALLOCATE ALL behind its back: the statement is prepared again.
        try db.execute("DEALLOCATE ALL")
        #expect(try db.query(sql, [7])[0].int("next") == 8)
        // A table that gains a column under a prepared SELECT *: prepared again, the new column read.
        try withTable("id int8") { db in
            try db.query("INSERT INTO \(table) VALUES (1)")
            #expect(try db.query("SELECT * FROM \(table)").columns == ["id"])
            try db.execute("ALTER TABLE \(table) ADD COLUMN extra text DEFAULT 'x'")
            #expect(try db.query("SELECT * FROM \(table)")[0].string("extra") == "x")
        }
    }

    @Test func aTerminatedBackendIsReplacedByThePool() throws {
        let pool = try PostgresPool(url: url, size: 2)
        let admin = try connect()
        let before = try pool.withConnection { $0.backendPID }
        try admin.query("SELECT pg_terminate_backend($1::int, 5000)", [.int(Int64(before))])
        let (after, answer) = try pool.withConnection { db in (db.backendPID, try db.query("SELECT 1")[0].int(0)) }
        #expect(after != before && answer == 1)
        #expect(pool.openCount == 1)

        // One killed while lent: its caller sees the error, the pool drops it and serves the next caller.
        let error = try #require(throws: PostgresError.self) {
            try pool.withConnection { db in
                try admin.query("SELECT pg_terminate_backend($1::int, 5000)", [.int(Int64(db.backendPID))])
                try db.query("SELECT 1")
            }
        }
        #expect(error.kind == .connectionLost)
        #expect(pool.openCount == 0)
        #expect(try pool.withConnection { try $0.query("SELECT 2")[0].int(0) } == 2)
    }

    @Test func thePoolLendsEachConnectionToOneCallerAtATime() throws {
        let pool = try PostgresPool(url: url, size: 3)
        let pids = PostgresLocked<[Int32]>([]), failures = PostgresLocked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 24) { _ in
            do {
                let pid = try pool.withConnection { db in
                    try db.transaction { tx in
                        _ = try tx.query("SELECT pg_sleep(0.01)")
                        return tx.backendPID
                    }
                }
                pids.update { $0.append(pid) }
            } catch {
                failures.update { $0.append("\(error)") }
            }
        }
        #expect(failures.get().isEmpty)
        #expect(Set(pids.get()).count <= 3 && pids.get().count == 24)
        #expect(pool.openCount <= 3)
    }

    @Test func aSocketURLConnects() throws {
        guard let socket = try PostgresTestCluster.socketDirectory() else { return }  // An outside cluster: no socket known.
        let port = try #require(try PostgresURL(url).value("port"))
        let db = try PostgresConnection(url: "postgres://roost@/roost?host=\(socket)&port=\(port)")
        #expect(try db.query("SELECT current_user AS u")[0].string("u") == "roost")
        #expect(db.endpoint == "roost@\(socket):\(port)/roost")
    }

    @Test func badURLsAndPasswordsNameTheHostNeverThePassword() throws {
        let parsed = try PostgresURL(url)
        let host = try #require(parsed.value("host")), port = try #require(parsed.value("port"))
        let password = try #require(parsed.value("password"))

        let wrong = try #require(throws: PostgresError.self) {
            try PostgresConnection(url: "postgres://roost:not-the-password-4711@\(host):\(port)/roost")
        }
        #expect(wrong.kind == .connectionFailed)
        #expect(wrong.description.contains(host) && wrong.description.contains("password authentication failed"))
        #expect(!wrong.description.contains("not-the-password-4711"))

        // Nothing listens on port 1.
        let refused = try #require(throws: PostgresError.self) { try PostgresConnection(url: "postgres://roost:sekrit-99@127.0.0.1:1/roost") }
        #expect(refused.kind == .connectionFailed && refused.description.contains("127.0.0.1"))
        #expect(!refused.description.contains("sekrit-99"))

        for bad in ["mysql://roost:sekrit-99@\(host)/roost", "postgres://roost:sekrit-99@\(host):port/roost",
                    "postgres://roost:sekrit-99@\(host)/roost?sslmode", "postgres://roost:sekrit-99@\(host)/roost?password=sekrit-99&x"] {
            let error = try #require(throws: PostgresError.self) { try PostgresConnection(url: bad) }
            #expect(error.kind == .badURL)
            #expect(!error.description.contains("sekrit-99"), "\(error)")
        }
        // An option libpq does not know: its own clear message.
        let unknown = try #require(throws: PostgresError.self) { try PostgresConnection(url: url + "?colour=blue") }
        #expect(unknown.description.contains("colour") && !unknown.description.contains(password))

        #expect(!parsed.description.contains(password) && parsed.description.contains("\(host):\(port)"))
        let encoded = try PostgresURL("postgresql://us%40er:p%3Ass@[::1]:6543/my%20db?application_name=roost")
        #expect(encoded.value("user") == "us@er" && encoded.value("password") == "p:ss" && encoded.value("host") == "::1")
        #expect(encoded.value("port") == "6543" && encoded.value("dbname") == "my db" && encoded.value("application_name") == "roost")
    }

    /// What the cache listener sets (TCP keepalives) is a default: a URL that sets it keeps its own value.
    @Test func aDefaultedOptionYieldsToTheURLs() throws {
        let own = try PostgresURL("postgres://u@h/db?keepalives_idle=60").defaulting("keepalives_idle", to: "10")
        #expect(own.value("keepalives_idle") == "60")
        let defaulted = try PostgresURL(url).defaulting("keepalives_idle", to: "10")
        #expect(defaulted.value("keepalives_idle") == "10")
        #expect(try PostgresConnection(url: defaulted).query("SELECT 1 AS one")[0].int("one") == 1)  // libpq takes it.
    }
}

/// A value shared between test threads behind a lock (a connection handed to one other thread at a time, results).
final class PostgresLocked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func get() -> Value { lock.withLock { value } }
    func set(_ newValue: Value) { lock.withLock { value = newValue } }
    func update(_ change: (inout Value) -> Void) { lock.withLock { change(&value) } }
}
