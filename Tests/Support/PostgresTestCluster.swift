import Foundation

/// The PostgreSQL server tests use: `ROOST_TEST_POSTGRES_URL` when set (`make test` starts a throwaway cluster and
/// sets it), else a cluster this test process starts on first use with `scripts/postgres-cluster.sh` and stops at
/// exit — so `swift test --filter Postgres` works alone too (it needs Debian's `postgresql` package installed).
public enum PostgresTestCluster {
    /// `postgres://roost:<password>@127.0.0.1:<port>/roost`; user roost may create databases.
    public static func url() throws -> String {
        if let url = ProcessInfo.processInfo.environment["ROOST_TEST_POSTGRES_URL"], !url.isEmpty { return url }
        return try started.withLock { started in
            if let url = started.url { return url }
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("roost-pg-\(getpid())-\(UUID().uuidString.prefix(8))").path
            let (status, output) = try ChildProcess.run("/bin/bash", [script, "start", directory])
            guard status == 0, let url = output.split(separator: "\n").last(where: { $0.hasPrefix("postgres://") }) else {
                throw PostgresTestClusterError(description: "scripts/postgres-cluster.sh start failed (\(status)): \(output)")
            }
            started.url = String(url)
            started.directory = directory
            atexit {
                guard let directory = PostgresTestCluster.started.withLock({ $0.directory }) else { return }
                _ = try? ChildProcess.run("/bin/bash", [PostgresTestCluster.script, "stop", directory])
            }
            return String(url)
        }
    }

    /// The cluster's Unix socket directory (`?host=` of a socket URL), when this process or `make test` started it.
    public static func socketDirectory() throws -> String? {
        _ = try url()
        let directory = ProcessInfo.processInfo.environment["ROOST_TEST_POSTGRES_DIR"] ?? started.withLock { $0.directory }
        return directory.map { $0 + "/socket" }
    }

    /// The same server as `url()`, another database name (the same user and password).
    public static func url(database: String) throws -> String {
        let base = try url()
        guard let slash = base.range(of: "/", options: .backwards) else { return base }
        return String(base[..<slash.upperBound]) + database
    }

    static let script = SMTPSink.packageRoot.appendingPathComponent("scripts/postgres-cluster.sh").path

    final class Started: @unchecked Sendable {
        var url: String?
        var directory: String?
    }

    private final class Locked: @unchecked Sendable {
        private let lock = NSLock()
        private let value = Started()
        func withLock<T>(_ body: (Started) throws -> T) rethrows -> T {
            try lock.withLock { try body(value) }
        }
    }

    private static let started = Locked()
}

public struct PostgresTestClusterError: Error, CustomStringConvertible {
    public let description: String
}
