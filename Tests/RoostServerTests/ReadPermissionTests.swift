import Foundation
import RoostCore
@testable import RoostServer
import Testing

/// The indexable read-permission test (`ReadPermission`): who sees what is unchanged, counts subtract
/// only the restricted rows, and ordered walks read the ACL from the index.
@Suite struct ReadPermissionTests {
    /// 100 `Item`s {n}: n % 5 == 0 no ACL, 1 a public-read ACL, 2 user u1 only, 3 role Staff only, 4 u2 only.
    func withStore(_ body: (EmbeddedStore, String) throws -> Void) throws {
        try withDirectory { directory in
            let store = try seededStore(directory)
            defer { try? store.close() }
            try body(store, directory + "/roost.sqlite")
        }
    }

    func withDirectory(_ body: (String) throws -> Void) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("roost-rperm-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try body(directory.path)
    }

    func seededStore(_ directory: String) throws -> EmbeddedStore {
        let store = try EmbeddedStore(dataDirectory: directory)
        let acls: [JSON?] = [
            nil, ["*": ["read": true], "u1": ["write": true]], ["u1": ["read": true, "write": true]],
            ["role:Staff": ["read": true]], ["u2": ["read": true]],
        ]
        let objects: [[String: JSON]] = (0..<100).map { i in
            var object: [String: JSON] = ["n": .number(Double(i)), "tag": .string("t\(i % 2)")]
            if let acl = acls[i % 5] { object["ACL"] = acl }
            return object
        }
        _ = try store.insert(className: "Item", objects: objects)
        try store.declareIndex(className: "Item", name: "n_1", fields: ["n": 1])
        return store
    }

    /// The `n` of every object the caller may read, per kind (n % 5).
    func expected(_ kinds: Set<Int>, where keep: (Int) -> Bool = { _ in true }) -> [Int] {
        (0..<100).filter { kinds.contains($0 % 5) && keep($0) }
    }

    func numbers(_ answer: JSON) throws -> [Int] {
        try JSONParser.parse(answer.encoded())["results"]?.arrayValue?.compactMap { $0["n"]?.numberValue.map { Int($0) } } ?? []
    }

    func count(_ answer: JSON) throws -> Int? {
        try JSONParser.parse(answer.encoded())["count"]?.numberValue.map { Int($0) }
    }

    struct Caller: Sendable {
        let user: String?
        let roles: [String]
        /// The kinds of object (n % 5) it may read.
        let kinds: Set<Int>
    }

    static let callers = [
        Caller(user: nil, roles: [], kinds: [0, 1]), Caller(user: "u1", roles: [], kinds: [0, 1, 2]),
        Caller(user: "u2", roles: ["Staff"], kinds: [0, 1, 3, 4]), Caller(user: "u3", roles: ["Staff"], kinds: [0, 1, 3]),
    ]

    @Test(arguments: callers)
    func callersSeeWhatTheirACLsGrant(caller: Caller) throws {
        let (user, roles, kinds) = (caller.user, caller.roles, caller.kinds)
        try withStore { store, _ in
            let all = try store.find(className: "Item", parameters: ["order": "n", "limit": 1000], asUser: user, roles: roles)
            #expect(try numbers(all) == expected(kinds))
            let counted = try store.find(className: "Item", parameters: ["count": 1, "limit": 0], asUser: user, roles: roles)
            #expect(try count(counted) == expected(kinds).count)
            let filtered = try store.find(className: "Item", parameters: ["where": ["tag": "t1", "n": ["$gte": 40]], "count": 1, "limit": 0],
                                          asUser: user, roles: roles)
            #expect(try count(filtered) == expected(kinds) { $0 % 2 == 1 && $0 >= 40 }.count)
            let page = try store.find(className: "Item", parameters: ["order": "n", "skip": 7, "limit": 5], asUser: user, roles: roles)
            #expect(try numbers(page) == Array(expected(kinds).dropFirst(7).prefix(5)))
            let one = try store.find(className: "Item", parameters: ["where": ["n": 2]], asUser: user, roles: roles)
            #expect(try numbers(one) == (kinds.contains(2) ? [2] : []))
        }
    }

    @Test func theMasterKeyCountsAndReadsEverything() throws {
        try withStore { store, _ in
            let counted = try store.find(className: "Item", parameters: ["count": 1, "limit": 0])
            #expect(try count(counted) == 100)
            let page = try store.find(className: "Item", parameters: ["order": "n", "skip": 90, "limit": 20])
            #expect(try numbers(page) == Array(90..<100))
        }
    }

    /// Public rows keep no reader list; the restricted ones have their own index, and declared indexes end with `rperm`.
    @Test func publicRowsAreFoundWithoutTheirRowsReaderList() throws {
        try withStore { store, path in
            let db = try SQLiteConnection(path: path, readOnly: true, pragmas: SQLiteEngine.pragmas)
            try checkShape(db)
            // The ordered walk uses the index on n (with rperm in it): no table scan, no sort.
            let plan = try store.queryPlan(className: "Item", parameters: ["order": "n", "skip": 50, "limit": 5], readableBy: ["*", "u1"])
            #expect(plan.contains { $0.contains("USING INDEX c1_i_n_1") }, "\(plan)")
            #expect(!plan.contains { $0.contains("TEMP B-TREE") }, "\(plan)")
        }
    }

    func checkShape(_ db: SQLiteConnection) throws {
        #expect(try db.fetchRows("SELECT id FROM _schema WHERE className = 'Item'", [], cacheable: false).first?.first?.integer == 1)
        let restricted = try db.fetchRows("SELECT count(*) FROM c1 WHERE rperm IS NOT NULL", [], cacheable: false)
        #expect(restricted.first?.first?.integer == 60)
        let indexes = try db.fetchRows("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'c1'", [], cacheable: false)
        let sql = Dictionary(uniqueKeysWithValues: indexes.map { ($0[0].text ?? "", $0[1].text ?? "") })
        #expect(sql["c1_restricted"]?.contains("WHERE rperm IS NOT NULL") == true, "\(sql)")
        #expect(sql["c1_i_n_1"]?.hasSuffix(", rperm)") == true, "\(sql)")
    }

    /// A table from before `v12`: public ACLs listed `*` as a reader, no restricted-rows index, indexes without `rperm`.
    @Test func theMigrationBringsOldTablesUpToDate() throws {
        try withDirectory { directory in
            try seededStore(directory).close()
            let path = directory + "/roost.sqlite"
            let old = try SQLiteConnection(path: path, readOnly: false, pragmas: SQLiteEngine.pragmas)
            for sql in ["UPDATE c1 SET rperm = '[\"*\"]' WHERE acl IS NOT NULL AND rperm IS NULL",
                        "DROP INDEX c1_restricted", "DROP INDEX c1_i_n_1", "CREATE INDEX c1_i_n_1 ON c1 (json_extract(data, '$.n'))",
                        "DELETE FROM grdb_migrations WHERE identifier = 'v13: indexable read permission'"] {
                try old.execute(sql, cacheable: false)
            }
            #expect(try old.fetchRows("SELECT count(*) FROM c1 WHERE rperm IS NOT NULL", [], cacheable: false).first?.first?.integer == 80)
            try old.execute("PRAGMA wal_checkpoint(TRUNCATE)", cacheable: false)
            let reopened = try EmbeddedStore(dataDirectory: directory)
            defer { try? reopened.close() }
            try checkShape(try SQLiteConnection(path: path, readOnly: true, pragmas: SQLiteEngine.pragmas))
            let anonymous = try reopened.find(className: "Item", parameters: ["order": "n", "limit": 1000], asUser: nil)
            #expect(try numbers(anonymous) == expected([0, 1]))
            let counted = try reopened.find(className: "Item", parameters: ["count": 1, "limit": 0], asUser: "u1")
            #expect(try count(counted) == 60)
        }
    }
}
