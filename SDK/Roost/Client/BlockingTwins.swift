import Foundation
import RoostCore

// `…Blocking()` twins of the async calls that had none, for scripts and command-line tools: each
// runs its async form with `runBlocking` (never call them from async code). The other twins sit
// next to their async forms.

extension RoostQuery {
    public func countBlocking() throws -> Int { try runBlocking { try await self.count() } }

    public func getBlocking(_ objectId: String) throws -> RoostObject { try runBlocking { try await self.get(objectId) } }

    public func firstBlocking() throws -> RoostObject? { try runBlocking { try await self.first() } }

    public func findBlocking<T: RoostModel>(as type: T.Type) throws -> [T] { try runBlocking { try await self.find(as: type) } }

    public func firstBlocking<T: RoostModel>(as type: T.Type) throws -> T? { try runBlocking { try await self.first(as: type) } }
}

extension RoostObject {
    public func fetchIfNeededBlocking() throws { try runBlocking { try await self.fetchIfNeeded() } }
}

extension RoostClient {
    public func saveAllBlocking(_ objects: [RoostObject]) throws { try runBlocking { try await self.saveAll(objects) } }

    public func deleteAllBlocking(_ objects: [RoostObject]) throws { try runBlocking { try await self.deleteAll(objects) } }

    public func isServerReachableBlocking() -> Bool {
        (try? runBlocking { await self.isServerReachable() }) ?? false
    }

    public func saveBlocking<T: RoostModel>(_ model: inout T) throws {
        let unsaved = model
        model = try runBlocking {
            var saved = unsaved
            try await self.save(&saved)
            return saved
        }
    }

    public func fetchBlocking<T: RoostModel>(_ type: T.Type, objectId: String) throws -> T {
        try runBlocking { try await self.fetch(type, objectId: objectId) }
    }

    public func deleteBlocking<T: RoostModel>(_ model: T) throws { try runBlocking { try await self.delete(model) } }
}
