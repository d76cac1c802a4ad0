import Foundation
import RoostCore

/// Saving, fetching and deleting: `async` first, blocking twins for scripts, and `InBackground`
/// variants whose completion runs on a background thread (a CLI needs no main run loop).
extension RoostObject {
    /// Saves the edits (and, first, any new object this one points to).
    /// Saves of one object run one at a time, in call order.
    /// - Throws: `RoostError`; on failure the edits stay, to be sent by the next save.
    public func save() async throws {
        await saveGate.acquire()
        do {
            try await SaveEngine(client: client).save([self])
            await saveGate.release()
        } catch {
            await saveGate.release()
            throw error
        }
    }

    /// Blocking `save()`, for scripts. Do not call from async code.
    public func saveBlocking() throws {
        try runBlocking { try await self.save() }
    }

    /// Saves in the background and reports on a background thread.
    public func saveInBackground(_ completion: @escaping @Sendable (Result<Void, Error>) -> Void) {
        runInBackground({ try await self.save() }, completion: completion)
    }

    /// Loads the server's fields (unsaved local edits stay on top).
    /// - Throws: `RoostError.server` 101 when the object is gone or not readable.
    public func fetch() async throws {
        guard let objectId else { throw RoostError.invalidArgument("Cannot fetch an object that has not been saved.") }
        let answer = try await client.request("GET", "\(classPath)/\(objectId)")
        guard WriteReply.isObject(answer, withId: objectId) else { throw WriteReply.unusable }  // Else it would become that object.
        applyServerObject(answer)
    }

    public func fetchBlocking() throws { try runBlocking { try await self.fetch() } }

    /// Fetches only when the fields were never loaded.
    public func fetchIfNeeded() async throws {
        if !isDataAvailable { try await fetch() }
    }

    /// Deletes the object on the server.
    public func delete() async throws {
        guard let objectId else { throw RoostError.invalidArgument("Cannot delete an object that has not been saved.") }
        _ = try await client.request("DELETE", "\(classPath)/\(objectId)")
    }

    public func deleteBlocking() throws { try runBlocking { try await self.delete() } }

    public func deleteInBackground(_ completion: @escaping @Sendable (Result<Void, Error>) -> Void) {
        runInBackground({ try await self.delete() }, completion: completion)
    }
}

extension RoostClient {
    /// Saves many objects with as few requests as possible (`/batch`, 50 per request).
    public func saveAll(_ objects: [RoostObject]) async throws {
        try await SaveEngine(client: self).save(objects)
    }

    /// Deletes many saved objects through `/batch`, 50 per request.
    /// - Throws: the first error; the other deletes still run.
    public func deleteAll(_ objects: [RoostObject]) async throws {
        let mount = transport.serverURL.path
        var firstError: Error?
        for start in stride(from: 0, to: objects.count, by: 50) {
            let chunk = objects[start..<min(start + 50, objects.count)]
            let requests: [JSON] = chunk.compactMap { object in
                object.objectId.map { ["method": "DELETE", "path": .string("\(mount)/\(object.classPath)/\($0)")] }
            }
            let answer = try await request("POST", "batch", body: ["requests": .array(requests)])
            for item in answer.arrayValue ?? [] {
                if let error = item["error"], firstError == nil {
                    firstError = RoostError.server(code: ParseErrorCode(rawValue: Int(error["code"]?.numberValue ?? 1)),
                                                   message: error["error"]?.stringValue ?? "")
                }
            }
        }
        if let firstError { throw firstError }
    }
}
