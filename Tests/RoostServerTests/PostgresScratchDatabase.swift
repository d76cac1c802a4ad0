import Foundation
@testable import RoostServer
import RoostTestSupport

/// A database of its own on the test cluster (`PostgresTestCluster`), for tests that create the internal tables:
/// they have fixed names, so two such tests may not share one database. `drop()` removes it, closing what is
/// still connected.
struct PostgresScratchDatabase {
    let name: String
    let url: String

    init() throws {
        name = "roost_" + UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: "")
        try PostgresConnection(url: try PostgresTestCluster.url()).execute("CREATE DATABASE \(name)")
        url = try PostgresTestCluster.url(database: name)
    }

    /// The database `name`, made earlier by another `PostgresScratchDatabase`.
    init(existing name: String) throws {
        self.name = name
        url = try PostgresTestCluster.url(database: name)
    }

    func connect() throws -> PostgresConnection { try PostgresConnection(url: url) }

    /// A connection to it with the migrations applied.
    func migrated() throws -> PostgresConnection {
        let db = try connect()
        try PostgresSchema.migrate(db)
        return db
    }

    func drop() {
        _ = try? PostgresConnection(url: try PostgresTestCluster.url()).execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
    }
}
