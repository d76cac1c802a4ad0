import Foundation
import RoostCore

/// Saves a group of objects: first every new object they point to (children before parents, in
/// waves; a cycle of new objects is an error), each wave through `/batch` in requests of at most 50.
struct SaveEngine {
    let client: RoostClient

    func save(_ roots: [RoostObject]) async throws {
        var remaining = try collect(roots)
        var firstError: Error?
        while !remaining.isEmpty {
            let wave = remaining.filter { object in
                object.pendingReferences().allSatisfy { child in !remaining.contains { $0 === child } }
            }
            guard !wave.isEmpty else {
                throw RoostError.invalidArgument("Found a circular dependency when saving: new objects point to each other.")
            }
            remaining.removeAll { object in wave.contains { $0 === object } }
            do {
                try await saveWave(wave)
            } catch {
                firstError = firstError ?? error
                // Parents of a failed child cannot be saved now: stop, keeping their edits for later.
                break
            }
        }
        if let firstError { throw firstError }
    }

    /// The roots that need a request, plus every new object reachable from them.
    private func collect(_ roots: [RoostObject]) throws -> [RoostObject] {
        var result: [RoostObject] = []
        var seen = Set<ObjectIdentifier>()
        func visit(_ object: RoostObject) {
            guard seen.insert(ObjectIdentifier(object)).inserted else { return }
            for child in object.pendingReferences() { visit(child) }
            if object.isDirty { result.append(object) }
        }
        roots.forEach(visit)
        return result
    }

    private func saveWave(_ wave: [RoostObject]) async throws {
        var firstError: Error?
        // New users are created one by one (sign-up answers carry a session); the rest go in batches.
        for user in wave.compactMap({ $0 as? RoostUser }) {
            do { try await user.saveAlone() } catch { firstError = firstError ?? error }
        }
        let others = wave.filter { !($0 is RoostUser) }
        for start in stride(from: 0, to: others.count, by: 50) {
            let chunk = Array(others[start..<min(start + 50, others.count)])
            do {
                if chunk.count == 1 { try await chunk[0].saveAlone() } else { try await saveBatch(chunk) }
            } catch {
                firstError = firstError ?? error
            }
        }
        if let firstError { throw firstError }
    }

    private func saveBatch(_ objects: [RoostObject]) async throws {
        let commands = try objects.map { try $0.beginSave() }
        let mount = client.transport.serverURL.path
        let requests: [JSON] = commands.map { command in
            ["method": .string(command.method), "path": .string(mount + "/" + command.path), "body": command.body]
        }
        let answer: JSON
        do {
            answer = try await client.transport.send("POST", "batch", body: ["requests": .array(requests)],
                                                     sessionToken: client.sessionToken)
            // One verdict per object, each shaped as its request's answer, or nothing is trusted.
            guard WriteReply.isWellFormedBatch(answer, count: commands.count),
                zip(answer.arrayValue ?? [], zip(commands, objects)).allSatisfy({ item, pair in
                    item["success"].map {
                        WriteReply.isWellFormed($0, method: pair.0.method, className: pair.1.className, status: nil)
                    } ?? true
                })
            else { throw WriteReply.unusable }
        } catch {
            objects.forEach { $0.endSave(.failure(error)) }
            client.handleSessionError(error)
            throw error
        }
        let results = answer.arrayValue ?? []
        var firstError: Error?
        for (index, object) in objects.enumerated() {
            let item = results[index]
            if let success = item["success"] {
                object.endSave(.success(success))
            } else {
                let error = RoostError.server(code: ParseErrorCode(rawValue: Int(item["error"]?["code"]?.numberValue ?? 1)),
                                              message: item["error"]?["error"]?.stringValue ?? "batch item failed")
                object.endSave(.failure(error))
                firstError = firstError ?? error
            }
        }
        if let firstError { throw firstError }
    }
}

/// One save request of one object, built from a snapshot of its edits.
struct SaveCommand {
    let method: String
    let path: String
    let body: JSON
}

extension RoostObject {
    /// The REST path of this class (`users` for `_User`, `classes/<C>` otherwise).
    var classPath: String { className == "_User" ? "users" : "classes/\(className)" }

    /// New objects this one points to (or names in its ACL).
    func pendingReferences() -> [RoostObject] {
        lock.withLock { state.unsavedReferences.values.filter { $0.objectId == nil } }
    }

    /// Freezes the unsaved edits as "in flight" and builds the request; edits made from now on wait for the next save.
    func beginSave() throws -> SaveCommand {
        try lock.withLock {
            // Pointers and ACL entries to new objects now carry their objectIds, in the request and locally.
            var operations: [String: FieldOperation] = [:]
            for (key, operation) in state.pending {
                operations[key] = try resolveLocalIds(operation, isACL: key == "ACL")
            }
            let body = operations.mapValues(OperationMerging.json)
            state.inFlight = operations
            state.pending = [:]
            if let objectId = state.objectId {
                return SaveCommand(method: "PUT", path: "\(classPath)/\(objectId)", body: .object(body))
            }
            return SaveCommand(method: "POST", path: classPath, body: .object(body))
        }
    }

    /// Applies the server's answer, or puts the in-flight edits back under any newer ones.
    func endSave(_ result: Result<JSON, Error>) {
        defer {
            if case .success = result {
                didSave()
                refreshPin()
            }
        }
        lock.withLock {
            let inFlight = state.inFlight ?? [:]
            state.inFlight = nil
            switch result {
            case .success(let answer):
                for (key, operation) in inFlight {
                    state.serverData[key] = try? operation.applied(to: state.serverData[key])
                }
                if case .object(var members) = answer {
                    if let id = members.removeValue(forKey: "objectId")?.stringValue { state.objectId = id }
                    if let created = members.removeValue(forKey: "createdAt") {
                        state.createdAt = Date(roostJSON: created)
                        state.updatedAt = state.createdAt
                    }
                    if let updated = members.removeValue(forKey: "updatedAt") { state.updatedAt = Date(roostJSON: updated) }
                    applyServerFields(members)
                    members.removeValue(forKey: "sessionToken")
                    for (key, value) in members { state.serverData[key] = value }  // Server-computed values win.
                }
                for key in Self.transientKeys { state.serverData.removeValue(forKey: key) }
                state.isDataAvailable = true
            case .failure:
                state.pending = OperationMerging.merge(state.pending, after: inFlight, base: state.serverData)
            }
        }
    }

    /// Sends this object's save on its own.
    func saveAlone() async throws {
        let command = try beginSave()
        do {
            let reply = try await client.transport.exchange(command.method, command.path, body: command.body,
                                                            sessionToken: client.sessionToken)
            guard WriteReply.isWellFormed(reply.json, method: command.method, className: className, status: reply.status) else {
                throw WriteReply.unusable
            }
            endSave(.success(reply.json))
        } catch {
            endSave(.failure(error))
            client.handleSessionError(error)
            throw error
        }
    }

    /// The operation with its localIds rewritten. Must hold `lock`.
    private func resolveLocalIds(_ operation: FieldOperation, isACL: Bool) throws -> FieldOperation {
        switch operation {
        case .set(let value): return .set(try resolveLocalIds(value, isACL: isACL))
        case .add(let values): return .add(try values.map { try resolveLocalIds($0, isACL: false) })
        case .addUnique(let values): return .addUnique(try values.map { try resolveLocalIds($0, isACL: false) })
        case .remove(let values): return .remove(try values.map { try resolveLocalIds($0, isACL: false) })
        default: return operation
        }
    }

    /// Rewrites localId pointers (and ACL entries) to the objectIds their objects now have. Must hold `lock`.
    private func resolveLocalIds(_ json: JSON, isACL: Bool) throws -> JSON {
        switch json {
        case .object(let members):
            if members["__type"] == "Pointer", let localId = members["localId"]?.stringValue {
                guard let object = state.unsavedReferences[localId], let id = object.objectId else {
                    throw RoostError.invalidArgument("Tried to save an object with a pointer to a new, unsaved object.")
                }
                return WireValue.pointer(object.className, id)
            }
            var result: [String: JSON] = [:]
            for (key, value) in members {
                var resolvedKey = key
                if isACL, key.hasPrefix("local_") {
                    guard let id = state.unsavedReferences[key]?.objectId else {
                        throw RoostError.invalidArgument("Tried to save an ACL naming a user that could not be created.")
                    }
                    resolvedKey = id
                }
                result[resolvedKey] = try resolveLocalIds(value, isACL: false)
            }
            return .object(result)
        case .array(let elements):
            return .array(try elements.map { try resolveLocalIds($0, isACL: false) })
        default:
            return json
        }
    }
}
