import Foundation
import RoostCore

/// A Parse object of any class, with dirty tracking: edits are recorded as Parse operations and a
/// save sends only what changed.
///
/// ```swift
/// let todo = RoostObject(className: "Todo", client: client)
/// todo["title"] = "Buy 100 tons of cat litter"
/// todo.increment("priority")
/// try await todo.save()
/// ```
/// Thread-safe: reads and edits may come from any thread. While a save is in flight, new edits
/// collect for the next save; if the save fails, its edits are merged back so nothing is lost.
open class RoostObject: @unchecked Sendable {
    public let className: String
    public let client: RoostClient
    /// Stands for this object in pointers and ACLs until the server gives it an objectId.
    let localId: String
    let lock = NSLock()
    let saveGate = AsyncGate()
    var state = State()

    struct State {
        var objectId: String?
        var createdAt: Date?
        var updatedAt: Date?
        var serverData: [String: JSON] = [:]
        var isDataAvailable = false
        /// Edits not yet sent.
        var pending: [String: FieldOperation] = [:]
        /// Edits of the save in flight.
        var inFlight: [String: FieldOperation]?
        /// Objects this one points to (or names in its ACL) that have no objectId yet, by localId.
        var unsavedReferences: [String: RoostObject] = [:]
        /// The eventually queue holds this object's creation (it has no objectId until delivered).
        var isCreationQueued = false
    }

    /// A new object of `className`, saved through `client` (the shared client by default).
    public init(className: String, client: RoostClient? = nil) {
        self.className = className
        self.client = client ?? RoostClient.shared
        localId = "local_" + UUID().uuidString.lowercased()
    }

    /// An object with a given localId (an automatic user's is derived from its anonymous id, so it
    /// stays the same across launches).
    init(className: String, client: RoostClient, localId: String) {
        self.className = className
        self.client = client
        self.localId = localId
    }

    /// An object known by id (a pointer); `fetch()` loads its fields.
    public convenience init(className: String, objectId: String, client: RoostClient? = nil) {
        self.init(className: className, client: client)
        state.objectId = objectId
    }

    public var objectId: String? { lock.withLock { state.objectId } }
    public var createdAt: Date? { lock.withLock { state.createdAt } }
    public var updatedAt: Date? { lock.withLock { state.updatedAt } }
    /// Whether the fields were loaded (created here, fetched, or found by a query).
    public var isDataAvailable: Bool { lock.withLock { state.isDataAvailable || state.objectId == nil } }
    /// Whether there are edits not yet saved.
    public var isDirty: Bool { lock.withLock { !state.pending.isEmpty || state.objectId == nil } }
    /// The keys with edits not yet saved.
    public var dirtyKeys: Set<String> { lock.withLock { Set(state.pending.keys) } }

    /// The field's current value as this client sees it: the server's value with unsaved edits applied.
    public func value(forKey key: String) -> JSON? {
        lock.withLock { currentValue(key) }
    }

    /// Typed access: `todo["title"] = "…"`, `let done: Bool? = todo["done"]`. Assigning nil unsets the field.
    public subscript<T: RoostValueConvertible>(key: String) -> T? {
        get { value(forKey: key).flatMap(T.init(roostJSON:)) }
        set {
            if let newValue { set(key, newValue) } else { unset(key) }
        }
    }

    /// Every field as this client sees it (server values with unsaved edits applied).
    public var allFields: [String: JSON] {
        lock.withLock {
            var keys = Set(state.serverData.keys).union(state.pending.keys)
            if let inFlight = state.inFlight { keys.formUnion(inFlight.keys) }
            var result: [String: JSON] = [:]
            for key in keys { if let value = currentValue(key) { result[key] = value } }
            return result
        }
    }

    public func set(_ key: String, _ value: some RoostValueConvertible) {
        record(key, .set(value.roostJSON))
    }

    /// Points `key` to `object`. If `object` is new, it is saved first when this object is saved.
    public func set(_ key: String, pointerTo object: RoostObject) {
        record(key, .set(reference(to: object)))
    }

    /// Points `key` to several objects (an array of pointers).
    public func set(_ key: String, pointersTo objects: [RoostObject]) {
        record(key, .set(.array(objects.map(reference(to:)))))
    }

    /// The object `key` points to: the same instance if it was set here, else an unfetched pointer.
    public func pointer(forKey key: String) -> RoostObject? {
        guard let value = value(forKey: key), let className = value["className"]?.stringValue else { return nil }
        if value["__type"] == "Object" {  // Included by the query: a full object.
            let object = client.object(className)
            object.applyServerObject(value)
            return object
        }
        guard value["__type"] == "Pointer" else { return nil }
        if let localId = value["localId"]?.stringValue { return lock.withLock { state.unsavedReferences[localId] } }
        guard let objectId = value["objectId"]?.stringValue else { return nil }
        return client.makeObject(className: className, objectId: objectId)
    }

    /// Adds `amount` atomically on the server (concurrent increments from many clients all count).
    public func increment(_ key: String, by amount: Double = 1) { record(key, .increment(amount)) }
    public func add(_ key: String, _ values: [some RoostValueConvertible]) { record(key, .add(values.map(\.roostJSON))) }
    public func addUnique(_ key: String, _ values: [some RoostValueConvertible]) { record(key, .addUnique(values.map(\.roostJSON))) }
    public func remove(_ key: String, _ values: [some RoostValueConvertible]) { record(key, .remove(values.map(\.roostJSON))) }
    public func unset(_ key: String) { record(key, .delete) }

    /// Links saved objects into the relation `key`.
    public func addRelation(_ key: String, _ objects: [RoostObject]) {
        guard let target = objects.first?.className else { return }
        record(key, .relation(targetClass: target, add: objects.compactMap(\.objectId), remove: []))
    }

    public func removeRelation(_ key: String, _ objects: [RoostObject]) {
        guard let target = objects.first?.className else { return }
        record(key, .relation(targetClass: target, add: [], remove: objects.compactMap(\.objectId)))
    }

    /// The object's access control list (nil: public, or the server's default).
    public var acl: RoostACL? {
        get { value(forKey: "ACL").map(RoostACL.init(json:)) }
        set {
            lock.withLock {
                for user in newValue?.unsavedUsers ?? [] { state.unsavedReferences[user.localId] = user }
            }
            record("ACL", newValue.map { .set($0.json) } ?? .delete)
        }
    }

    /// The pointer JSON for `object`, by objectId, or by localId until it has one.
    func reference(to object: RoostObject) -> JSON {
        if let objectId = object.objectId { return WireValue.pointer(object.className, objectId) }
        lock.withLock { state.unsavedReferences[object.localId] = object }
        return ["__type": "Pointer", "className": .string(object.className), "localId": .string(object.localId)]
    }

    func record(_ key: String, _ operation: FieldOperation) {
        precondition(!["objectId", "createdAt", "updatedAt"].contains(key), "\(key) is set by the server")
        lock.withLock {
            let base = (try? state.inFlight?[key].map { try $0.applied(to: state.serverData[key]) }) ?? state.serverData[key]
            state.pending[key] = OperationMerging.merge(operation, after: state.pending[key], base: base)
        }
    }

    /// Must hold `lock`.
    private func currentValue(_ key: String) -> JSON? {
        var value = state.serverData[key]
        if let operation = state.inFlight?[key] { value = (try? operation.applied(to: value)) ?? value }
        if let operation = state.pending[key] { value = (try? operation.applied(to: value)) ?? value }
        return value
    }

    /// Replaces the server state with an object as the server answered it (fetch, query).
    func applyServerObject(_ json: JSON) {
        guard case .object(var members) = json else { return }
        lock.withLock {
            if let id = members.removeValue(forKey: "objectId")?.stringValue { state.objectId = id }
            if let created = members.removeValue(forKey: "createdAt") { state.createdAt = Date(roostJSON: created) }
            if let updated = members.removeValue(forKey: "updatedAt") { state.updatedAt = Date(roostJSON: updated) }
            members.removeValue(forKey: "className")
            if members["__type"] == "Object" { members.removeValue(forKey: "__type") }
            applyServerFields(members)
            state.serverData = members
            state.isDataAvailable = true
        }
    }

    // Hooks for subclasses (`RoostUser`).

    /// Sees the server's fields of an answer (the user takes its session token). Must hold `lock`.
    func applyServerFields(_ fields: [String: JSON]) {}

    /// Fields that never stay in the local copy after a save (a user's password).
    class var transientKeys: Set<String> { [] }

    /// Called after a save succeeded, outside the lock (the current user is written to disk).
    func didSave() {}
}

/// One async task at a time: saves of one object run in call order, never two at once.
actor AsyncGate {
    private var isBusy = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func acquire() async {
        if !isBusy {
            isBusy = true
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    func release() {
        if waiters.isEmpty { isBusy = false } else { waiters.removeFirst().resume() }
    }
}
