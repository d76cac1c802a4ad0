import Foundation
import RoostCore

/// Pinning: objects kept in the client's local store and queried with `fromLocalDatastore()`.
/// A pinned object's copy follows its local edits (including queued `saveEventually` changes) and
/// learns its objectId when the queue creates it.
extension RoostObject {
    public static let defaultPinName = "_default"

    /// Keeps this object (as this client sees it now) in the local store under `name`.
    public func pin(name: String = RoostObject.defaultPinName) throws {
        try client.localStore.pin([(className, pinKey, pinJSON)], name: name)
    }

    /// Removes this object from one pin group, or from all of them.
    public func unpin(name: String? = nil) throws {
        try client.localStore.unpin(className: className, keys: [localId] + [objectId].compactMap { $0 }, name: name)
    }

    /// The key of this object in the local store: its objectId, or its localId until it has one.
    var pinKey: String { objectId ?? localId }

    /// The stored form: every field as this client sees it, with its ids and dates.
    var pinJSON: JSON {
        var json: [String: JSON] = ["className": .string(className), "localId": .string(localId), "fields": .object(allFields)]
        if let objectId { json["objectId"] = .string(objectId) }
        if let createdAt { json["createdAt"] = createdAt.roostJSON }
        if let updatedAt { json["updatedAt"] = updatedAt.roostJSON }
        return .object(json)
    }

    /// Brings the pinned copy (if any) up to date with this object.
    func refreshPin() {
        _ = try? client.localStore.refresh(className: className, keys: [localId] + [objectId].compactMap { $0 }, json: pinJSON,
                                           newKey: pinKey)
    }

    /// An object rebuilt from the local store, with the same localId (so queued commands still find it).
    static func fromPin(_ json: JSON, client: RoostClient) -> RoostObject {
        let className = json["className"]?.stringValue ?? ""
        let localId = json["localId"]?.stringValue ?? "local_" + UUID().uuidString.lowercased()
        let object = className == "_User" ? RoostUser(client: client) : RoostObject(className: className, client: client, localId: localId)
        let fields = json["fields"]?.objectValue ?? [:]
        let objectId = json["objectId"]?.stringValue
        let creation = objectId == nil && className != "_User" ? client.eventually.store.creation(ofLocalId: localId) : .queued
        object.lock.withLock {
            object.state.objectId = objectId
            object.state.createdAt = json["createdAt"].flatMap(Date.init(roostJSON:))
            object.state.updatedAt = json["updatedAt"].flatMap(Date.init(roostJSON:))
            object.state.isDataAvailable = true
            switch creation {
            case .queued:
                object.state.serverData = fields
                object.state.isCreationQueued = objectId == nil
            case .delivered(let createdId):
                // The pinned copy missed its objectId (an older client recorded it with `try?`): heal it.
                object.state.objectId = createdId
                object.state.serverData = fields
            case .neverQueued:
                // Pinned, but its creation is not in the queue (an older client pinned before queueing, and
                // the queue write failed): every field is an unsent edit, so the next save creates it whole.
                object.state.pending = fields.mapValues { .set($0) }
            }
        }
        return object
    }
}

extension RoostClient {
    /// Empties a pin group.
    public func unpinAll(name: String = RoostObject.defaultPinName) throws { try localStore.unpinAll(name: name) }

    /// Pins many objects at once (e.g. query results kept for offline use).
    public func pinAll(_ objects: [RoostObject], name: String = RoostObject.defaultPinName) throws {
        try localStore.pin(objects.map { ($0.className, $0.pinKey, $0.pinJSON) }, name: name)
    }
}
