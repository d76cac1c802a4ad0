import Foundation
import Roost
import RoostCore
import Testing

@Suite struct ObjectTests {
    @Test func everyFieldTypeRoundTrips() async throws {
        let server = try ServerProcess()
        let client = try server.makeClient()
        let date = Date(timeIntervalSince1970: 1_700_000_000.123)
        let object = client.object("Everything")
        object["text"] = "héllo ✓"
        object["integer"] = 42
        object["double"] = 2.5
        object["flag"] = true
        object["when"] = date
        object["bytes"] = Data([0, 1, 2, 255])
        object["list"] = ["a", "b"]
        object["dictionary"] = ["k": 1.5]
        object["place"] = GeoPoint(latitude: 48.85, longitude: 2.35)
        let target = client.object("Target")
        try await target.save()
        object.set("target", pointerTo: target)
        try await object.save()
        #expect(object.objectId?.count == 10)
        #expect(object.createdAt != nil)

        let fetched = try await client.query("Everything").get(try #require(object.objectId))
        #expect(fetched["text"] == "héllo ✓")
        #expect(fetched["integer"] == 42)
        #expect(fetched["double"] == 2.5)
        #expect(fetched["flag"] == true)
        #expect((fetched["when"] as Date?)?.timeIntervalSince1970 == 1_700_000_000.123)
        #expect(fetched["bytes"] == Data([0, 1, 2, 255]))
        #expect(fetched["list"] == ["a", "b"])
        #expect(fetched["dictionary"] == ["k": 1.5])
        #expect(fetched["place"] == GeoPoint(latitude: 48.85, longitude: 2.35))
        #expect(fetched.pointer(forKey: "target")?.objectId == target.objectId)
    }

    @Test func aSaveSendsOnlyChangedFields() async throws {
        let server = try ServerProcess()
        let deviceA = try server.makeClient(), deviceB = try server.makeClient()
        let object = deviceA.object("Note")
        object["title"] = "first"
        object["body"] = "text"
        try await object.save()
        #expect(!object.isDirty)

        let copy = try await deviceB.query("Note").get(try #require(object.objectId))
        copy["body"] = "edited on B"
        try await copy.save()
        object["title"] = "edited on A"
        #expect(object.dirtyKeys == ["title"])
        try await object.save()  // Sends only `title`: B's edit of `body` survives.

        let result = try await deviceA.query("Note").get(try #require(object.objectId))
        #expect(result["title"] == "edited on A")
        #expect(result["body"] == "edited on B")
    }

    @Test func concurrentIncrementsFromTwoClientsReachTheExactSum() async throws {
        let server = try ServerProcess()
        let clientA = try server.makeClient(), clientB = try server.makeClient()
        let counter = clientA.object("Counter")
        counter["n"] = 0
        try await counter.save()
        let id = try #require(counter.objectId)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for client in [clientA, clientB] {
                group.addTask {
                    for _ in 0..<25 {
                        let object = RoostObject(className: "Counter", objectId: id, client: client)
                        object.increment("n")
                        try await object.save()
                    }
                }
            }
            try await group.waitForAll()
        }
        let result = try await clientA.query("Counter").get(id)
        #expect(result["n"] == 50)
    }

    @Test func incrementReplyIsApplied() async throws {
        let server = try ServerProcess()
        let client = try server.makeClient()
        let object = client.object("Score")
        object["points"] = 10
        try await object.save()
        let other = try await client.query("Score").get(try #require(object.objectId))
        other.increment("points", by: 5)
        try await other.save()
        object.increment("points", by: 1)
        try await object.save()
        #expect(object["points"] == 16)  // The server's result, not 10 + 1.
    }

    @Test func arrayOperationsAndUnset() async throws {
        let server = try ServerProcess()
        let client = try server.makeClient()
        let object = client.object("Tags")
        object["tags"] = ["a"]
        try await object.save()
        object.add("tags", ["b"])
        object.addUnique("tags", ["a", "c"])
        try await object.save()
        object.remove("tags", ["b"])
        object["temporary"] = "x"
        try await object.save()
        object.unset("temporary")
        try await object.save()
        let result = try await client.query("Tags").get(try #require(object.objectId))
        #expect(result["tags"] == ["a", "c"])
        #expect(result.value(forKey: "temporary") == nil)
    }

    @Test func aFailedSaveKeepsItsEditsAndEditsDuringTheSaveWait() async throws {
        let server = try ServerProcess()
        let client = try server.makeClient()
        let object = client.object("Draft")
        object["title"] = "one"
        try await object.save()

        server.stop()
        object["title"] = "two"
        object.increment("revisions")
        await #expect(throws: RoostError.self) { try await object.save() }
        #expect(object.dirtyKeys == ["title", "revisions"])
        object.increment("revisions")  // An edit after the failure merges with the kept one.

        try server.start()
        try await object.save()
        #expect(!object.isDirty)
        let result = try await client.query("Draft").get(try #require(object.objectId))
        #expect(result["title"] == "two")
        #expect(result["revisions"] == 2)
    }

    @Test func newObjectsPointedToAreSavedFirst() async throws {
        let server = try ServerProcess()
        let client = try server.makeClient()
        let author = client.object("Author")
        author["name"] = "Ann"
        let publisher = client.object("Publisher")
        author.set("publisher", pointerTo: publisher)
        let chapters = (1...3).map { number in
            let chapter = client.object("Chapter")
            chapter["number"] = number
            return chapter
        }
        let book = client.object("Book")
        book.set("author", pointerTo: author)
        book.set("chapters", pointersTo: chapters)
        try await book.save()

        #expect(author.objectId != nil)
        #expect(publisher.objectId != nil)
        #expect(chapters.allSatisfy { $0.objectId != nil })
        let stored = try await client.query("Book").include("author").get(try #require(book.objectId))
        #expect(stored.pointer(forKey: "author")?["name"] == "Ann")
        #expect(stored.value(forKey: "chapters")?.arrayValue?.count == 3)
    }

    @Test func aCycleOfNewObjectsIsRefused() async throws {
        let server = try ServerProcess()
        let client = try server.makeClient()
        let a = client.object("Node"), b = client.object("Node")
        a.set("next", pointerTo: b)
        b.set("next", pointerTo: a)
        await #expect(throws: RoostError.self) { try await a.save() }
        #expect(a.objectId == nil && b.objectId == nil)
    }

    @Test func fetchDeleteAndBatchHelpers() async throws {
        let server = try ServerProcess()
        let client = try server.makeClient()
        let objects = (0..<60).map { index -> RoostObject in
            let object = client.object("Bulk")
            object["index"] = index
            return object
        }
        try await client.saveAll(objects)
        #expect(objects.allSatisfy { $0.objectId != nil })
        #expect(try await client.query("Bulk").count() == 60)

        let pointer = RoostObject(className: "Bulk", objectId: try #require(objects[5].objectId), client: client)
        #expect(!pointer.isDataAvailable)
        try await pointer.fetchIfNeeded()
        #expect(pointer["index"] == 5)

        try await client.deleteAll(Array(objects[0..<55]))
        #expect(try await client.query("Bulk").count() == 5)
        try await objects[59].delete()
        await #expect(throws: RoostError.server(code: .objectNotFound, message: "Object not found.")) {
            try await objects[59].fetch()
        }
    }

    @Test func blockingAndBackgroundVariants() async throws {
        let server = try ServerProcess()
        let client = try server.makeClient()
        // A script's thread, not a task: blocking calls must never run on the async thread pool.
        let saved: Result<RoostObject, Error> = await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                let object = client.object("Script")
                object["ran"] = true
                continuation.resume(returning: Result { try object.saveBlocking(); return object })
            }
        }
        #expect(try saved.get().objectId != nil)

        let object = client.object("Callback")
        let result: Result<Void, Error> = await withCheckedContinuation { continuation in
            object.saveInBackground { continuation.resume(returning: $0) }
        }
        #expect((try? result.get()) != nil)
        #expect(object.objectId != nil)
    }

    @Test func transportAndServerErrorsAreDistinct() async throws {
        let server = try ServerProcess()
        let client = try server.makeClient()
        let wrongType = client.object("Typed")
        wrongType["n"] = 1
        try await wrongType.save()
        let mismatch = client.object("Typed")
        mismatch["n"] = "one"
        do {
            try await mismatch.save()
            Issue.record("expected a schema mismatch")
        } catch let error as RoostError {
            #expect(error.code == .incorrectType)
            #expect(!error.isTransport)
        }
        server.stop()
        do {
            try await client.object("Anything").save()
            Issue.record("expected a transport error")
        } catch let error as RoostError {
            #expect(error.isTransport)
        }
    }
}
