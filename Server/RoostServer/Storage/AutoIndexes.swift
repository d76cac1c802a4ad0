import Dispatch
import Logging
import RoostCore
import Synchronization

/// When automatic indexes are made and dropped (`--auto-index`; test-only overrides in `roost serve`).
public struct AutoIndexSettings: Sendable, Equatable {
    public var enabled = true
    /// A class needs this many objects before its queries get an index (a smaller one scans in well under a millisecond).
    public var minObjects = 1_000
    /// A class with more objects gets none: SQLite builds an index in one statement that holds the writer, for
    /// 923 ms at 200,000 objects on this 2-core machine (measured, creates meanwhile waited up to 955 ms). On
    /// PostgreSQL the build is one transaction too, whose lock holds the class's writes as long.
    public var maxObjects = 200_000
    /// Queries that filter or sort on a field before its index is built; these scan.
    public var afterQueries = 3
    /// Automatic indexes one class may have: each costs every create and update of the class (measured in the README).
    public var maxPerClass = 10
    /// An automatic index no query filtered or sorted on for this long is dropped.
    public var unusedSeconds = 7 * 24 * 3600

    public init() {}

    static let off: AutoIndexSettings = { var settings = AutoIndexSettings(); settings.enabled = false; return settings }()
}

/// Indexes made for the fields that queries keep filtering or sorting on, as Firestore indexes single fields by itself,
/// so that a Parse app that never declares an index does not scan its large classes on every query.
///
/// Every find notes its candidate fields (`AutoIndexCandidates`); the `afterQueries`-th query on a field of a class with
/// at least `minObjects` objects queues a build, run after the answer has gone out (`Storage.deferWrite`) as one write:
/// the class's schema is read again there, so a class or field dropped, or an index declared, in the meantime is seen.
/// `AutoIndexSweeper` drops the automatic indexes no query used for `unusedSeconds`.
final class AutoIndexes: Sendable {
    private struct Key: Hashable {
        let classID: Int64
        let field: String
    }

    private struct Usage {
        var queries = 0
        var lastUsed: UInt64 = 0
        var building = false
    }

    private struct State {
        var settings = AutoIndexSettings.off
        var logger: Logger?
        var usage: [Key: Usage] = [:]
        /// Fields a first `$text` search found in a class over `maxObjects`, or with `maxPerClass` text indexes: no
        /// text index is made for them (`allowsTextIndex`); their searches scan, as before text indexes.
        var textIndexTooLarge: Set<Key> = []
    }

    private let enabled = Atomic<Bool>(false)
    private let state = Mutex(State())
    /// An automatic index from an earlier run counts as used when this process started.
    private let startedAt = DispatchTime.now().uptimeNanoseconds

    func configure(_ settings: AutoIndexSettings, logger: Logger) {
        state.withLock {
            $0.settings = settings
            $0.logger = logger
        }
        enabled.store(settings.enabled, ordering: .relaxed)
    }

    var settings: AutoIndexSettings { state.withLock { $0.settings } }

    /// Whether a `$text` search of `field` goes without the text index its first search would create: the class
    /// was found too large for one (`allowsTextIndex`). Declaring one (`{"field": "text"}`) still makes it.
    func textIndexRefused(_ field: String, of schema: ClassSchema) -> Bool {
        state.withLock { $0.textIndexTooLarge.contains(Key(classID: schema.id, field: field)) }
    }

    /// Whether a class of `objects` objects with `existing` text indexes may get one more on a first `$text` search
    /// of `field`: not past `maxObjects` (indexing them holds writes) nor `maxPerClass` (each costs every write of the
    /// class, and any client allowed to find could search field after field). When not, notes it (later searches
    /// scan without asking again) and logs how to declare one.
    func allowsTextIndex(_ field: String, of schema: ClassSchema, objects: Int, existing: Int) -> Bool {
        let (settings, logger) = state.withLock { ($0.settings, $0.logger) }
        let reason: String
        if objects > settings.maxObjects {
            reason = "\(objects) objects, more than \(settings.maxObjects) (indexing them holds writes)"
        } else if existing >= settings.maxPerClass {
            reason = "the class has \(existing) text indexes already"
        } else {
            return true
        }
        let first = state.withLock { $0.textIndexTooLarge.insert(Key(classID: schema.id, field: field)).inserted }
        if first {
            logger?.notice("""
                no automatic text index on \(schema.className).\(field): \(reason); $text searches scan. Declare one with \
                PUT /schemas/\(schema.className) {"indexes": {"\(field)_text": {"\(field)": "text"}}}
                """)
        }
        return false
    }

    /// Notes a find's (or count's) fields; queues the index build of a field whose queries recurred.
    func note(_ query: FindQuery, on schema: ClassSchema, storage: Storage) {
        guard enabled.load(ordering: .relaxed), schema.view == nil else { return }
        // Only fields with no index (counted) or an automatic one (its last use) are tracked: a query on a declared
        // index takes no lock.
        let fields = AutoIndexCandidates.fields(of: query, in: schema).compactMap { field -> (String, indexed: Bool)? in
            let leading = IndexStore.indexesLeading(with: field, in: schema)
            return leading.declared ? nil : (field, leading.automatic)
        }
        guard !fields.isEmpty else { return }
        let now = DispatchTime.now().uptimeNanoseconds
        let due = state.withLock { state -> [String] in
            var due: [String] = []
            for (field, indexed) in fields {
                let key = Key(classID: schema.id, field: field)
                var usage = state.usage[key] ?? Usage()
                usage.lastUsed = now
                if !usage.building, !indexed {
                    usage.queries += 1
                    if usage.queries >= state.settings.afterQueries {
                        usage.building = true
                        due.append(field)
                    }
                }
                state.usage[key] = usage
            }
            return due
        }
        for field in due {
            let queued = storage.deferWrite { [self] in build(field, classID: schema.id, className: schema.className, storage: storage) }
            if !queued { finished(Key(classID: schema.id, field: field)) }  // Deferred writes are full: a later query asks again.
        }
    }

    private func build(_ field: String, classID: Int64, className: String, storage: Storage) {
        let (settings, logger) = state.withLock { ($0.settings, $0.logger) }
        let started = DispatchTime.now().uptimeNanoseconds
        var retry = true
        do {
            let objects = try storage.write { db -> Int? in
                guard let schema = try SchemaStore.load(className, in: db), schema.id == classID,
                      let expression = AutoIndexCandidates.expression(for: field, in: schema, dialect: db.dialect),
                      !IndexStore.leadsAnIndex(field, in: schema),
                      IndexStore.automaticFields(of: schema).count < settings.maxPerClass else { return nil }
                let objects = try ReadPermission.count(schema, where: SQLFragment(sql: "1", arguments: []),
                                                       readableBy: nil, in: db)
                guard objects >= settings.minObjects else { return nil }
                guard objects <= settings.maxObjects else {
                    retry = false
                    logger?.notice("""
                        no automatic index on \(className).\(field): \(objects) objects, more than \(settings.maxObjects) (building one \
                        holds writes); declare one with PUT /schemas/\(className) {"indexes": {"\(field)_1": {"\(field)": 1}}}
                        """)
                    return nil
                }
                _ = try IndexStore.createAutomatic(field, expression: expression, in: schema, db: db)
                return objects
            }
            if let objects {
                let milliseconds = (DispatchTime.now().uptimeNanoseconds - started) / 1_000_000
                logger?.info("automatic index on \(className).\(field) built in \(milliseconds) ms (\(objects) objects)")
            }
        } catch {
            logger?.warning("automatic index on \(className).\(field) not built: \(error)")
        }
        finished(Key(classID: classID, field: field), retry: retry)
    }

    /// The field starts counting again (a class too small, or at its bound, is looked at again after as many queries);
    /// without `retry` (a class too large) it is not looked at again until this process starts again.
    private func finished(_ key: Key, retry: Bool = true) {
        state.withLock {
            guard retry else { return }
            $0.usage[key]?.building = false
            $0.usage[key]?.queries = 0
        }
    }

    /// Drops the automatic indexes that no query used for `unusedSeconds`, and forgets the usage of dropped classes
    /// and of fields not queried for as long (a pattern must recur within that time).
    func dropUnused(storage: Storage) {
        guard enabled.load(ordering: .relaxed) else { return }
        let (settings, logger) = state.withLock { ($0.settings, $0.logger) }
        let unused = UInt64(settings.unusedSeconds) * 1_000_000_000
        let now = DispatchTime.now().uptimeNanoseconds
        do {
            let dropped = try storage.write { db -> [String] in
                let schemas = try SchemaStore.all(in: db)
                let stale = state.withLock { state -> [(ClassSchema, String)] in
                    let live = Set(schemas.map(\.id))
                    var stale: [(ClassSchema, String)] = []
                    for schema in schemas {
                        for field in IndexStore.automaticFields(of: schema) {
                            let lastUsed = state.usage[Key(classID: schema.id, field: field)]?.lastUsed ?? startedAt
                            if now - max(lastUsed, startedAt) >= unused { stale.append((schema, field)) }
                        }
                    }
                    state.usage = state.usage.filter { key, usage in
                        live.contains(key.classID) && now - usage.lastUsed < unused
                    }
                    return stale
                }
                var dropped: [String] = []
                for (schema, field) in stale {
                    guard var current = try SchemaStore.load(schema.className, in: db), current.id == schema.id else { continue }
                    try IndexStore.dropAutomatic(field, from: &current, db: db)
                    try SchemaStore.save(current, in: db)
                    dropped.append("\(schema.className).\(field)")
                }
                return dropped
            }
            for name in dropped { logger?.info("automatic index on \(name) dropped: unused for \(settings.unusedSeconds) s") }
        } catch {
            logger?.warning("unused automatic indexes not dropped: \(error)")
        }
    }
}

/// Runs `AutoIndexes.dropUnused` on a timer: a quarter of the unused time, at least every 10 minutes.
final class AutoIndexSweeper: @unchecked Sendable {
    private let queue = DispatchQueue(label: "roost.auto-index-sweeper", qos: .utility)
    private let timer: DispatchSourceTimer

    init(storage: Storage) {
        let seconds = min(600, max(0.25, Double(storage.autoIndexes.settings.unusedSeconds) / 4))
        let interval = DispatchTimeInterval.milliseconds(Int(seconds * 1000))
        timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + interval, repeating: interval)
        timer.setEventHandler { storage.autoIndexes.dropUnused(storage: storage) }
        timer.resume()
    }

    func stop() {
        timer.cancel()
        queue.sync {}
    }
}
