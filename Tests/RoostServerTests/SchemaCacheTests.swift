import Foundation
@testable import RoostServer
import RoostCore
import Testing

/// Reads take class schemas from a shared cache (`SchemaCache`); a committed schema change must
/// reach every read that starts after it, and a read from an older snapshot must not keep its
/// older schema in the cache.
@Suite struct SchemaCacheTests {
    @Test func readsSeeEachCommittedSchemaChange() throws {
        try withStorage { storage in
            let created = try storage.write { try SchemaStore.create("Game", fields: ["score": .number], classLevelPermissions: nil, in: $0) }
            #expect(try storage.read { try SchemaStore.load("Game", in: $0) }?.fields == ["score": .number])

            var changed = created
            changed.fields["title"] = .string
            try storage.write { try SchemaStore.save(changed, in: $0) }
            #expect(try storage.read { try SchemaStore.load("Game", in: $0) }?.fields == ["score": .number, "title": .string])

            try storage.write { try SchemaStore.drop(changed, in: $0) }
            #expect(try storage.read { try SchemaStore.load("Game", in: $0) } == nil)

            try storage.write { _ = try SchemaStore.create("Game", fields: ["score": .string], classLevelPermissions: nil, in: $0) }
            #expect(try storage.read { try SchemaStore.load("Game", in: $0) }?.fields == ["score": .string])
        }
    }

    @Test func aSnapshotOlderThanAChangeDoesNotCacheItsSchema() throws {
        try withStorage { storage in
            let created = try storage.write { try SchemaStore.create("Game", fields: ["score": .number], classLevelPermissions: nil, in: $0) }
            var changed = created
            changed.fields["title"] = .string
            let seenInOldSnapshot = try storage.read { db in
                _ = try db.fetchRows("SELECT count(*) FROM _schema", [], cacheable: false)  // The snapshot starts here.
                try storage.write { try SchemaStore.save(changed, in: $0) }  // Committed by the writer meanwhile.
                return try SchemaStore.load("Game", in: db)
            }
            #expect(seenInOldSnapshot?.fields == ["score": .number])  // That snapshot's own view; later reads see the change.
            #expect(try storage.read { try SchemaStore.load("Game", in: $0) }?.fields == ["score": .number, "title": .string])
        }
    }

    @Test func aStaleGenerationNeitherStoresNorFinds() {
        let cache = SchemaCache()
        let schema = ClassSchema(id: 1, className: "Game", fields: ["score": .number], classLevelPermissions: nil, indexes: nil)
        let before = cache.currentGeneration
        cache.store(schema, generation: before)
        #expect(cache.lookup("Game", generation: before) == schema)
        cache.invalidate()
        #expect(cache.lookup("Game", generation: cache.currentGeneration) == nil)
        cache.store(schema, generation: before)  // Read before the invalidation: refused.
        #expect(cache.lookup("Game", generation: cache.currentGeneration) == nil)
        #expect(cache.lookup("Game", generation: before) == nil)
    }

    private func withStorage(_ body: (Storage) throws -> Void) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("roost-schema-cache-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let storage = try Storage(path: directory.appendingPathComponent("roost.sqlite").path)
        defer { try? storage.close() }
        try body(storage)
    }
}
