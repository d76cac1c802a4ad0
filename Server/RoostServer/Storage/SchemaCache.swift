import Foundation

/// Decoded class schemas for the read connections, so a get or a query does not read `_schema`
/// again (one statement and a JSON decode per request; ~3 % of a get-by-id's CPU, measured).
///
/// The writer keeps its own cache (`SQLiteConnection.schemaCache`). Here, a write that changed a
/// schema invalidates everything after it commits (`Storage.write`); on PostgreSQL, so does one that
/// committed on another node, once its notification arrives (`CacheInvalidation`). A read transaction notes the
/// generation before its snapshot begins (`Storage.read`) and only uses or stores entries of that
/// generation: a snapshot from before a schema change never sees a newer schema, and never stores
/// its older one as current.
final class SchemaCache: @unchecked Sendable {
    private let lock = NSLock()
    private var generation: UInt64 = 0
    private var entries: [String: ClassSchema] = [:]

    /// The generation a read transaction starting now belongs to.
    var currentGeneration: UInt64 { lock.withLock { generation } }

    func lookup(_ className: String, generation observed: UInt64) -> ClassSchema? {
        lock.withLock { observed == generation ? entries[className] : nil }
    }

    /// Keeps `schema` unless a schema change committed since `observed` (entries are per class that exists: bounded).
    func store(_ schema: ClassSchema, generation observed: UInt64) {
        lock.withLock {
            guard observed == generation else { return }
            entries[schema.className] = schema
        }
    }

    func invalidate() {
        lock.withLock {
            generation += 1
            entries.removeAll()
        }
    }
}
