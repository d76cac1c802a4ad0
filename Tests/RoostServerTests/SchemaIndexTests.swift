import Foundation
import RoostCore
import Testing

/// Declaring and dropping indexes through `indexes` in `POST/PUT /schemas/<Class>`, as Parse does.
@Suite struct SchemaIndexTests {
    func server() async throws -> TestServer {
        let server = try TestServer()
        _ = try await server.createAll("Task", (0..<30).map { i in
            ["n": .number(Double(i)), "tag": .string("t\(i % 3)"), "title": .string("task \(i)"), "due": date("2026-01-01T00:00:00.000Z")]
        })
        return server
    }

    func putIndexes(_ server: TestServer, _ indexes: JSON, className: String = "Task") async throws -> TestResponse {
        try await server.request("PUT", "/schemas/\(className)", json: ["indexes": indexes], master: true)
    }

    func indexes(_ server: TestServer, className: String = "Task") async throws -> JSON? {
        let response = try await server.request("GET", "/schemas/\(className)", master: true)
        #expect(response.status == 200)
        return response.json["indexes"]
    }

    @Test func declareShowAndDeleteAnIndex() async throws {
        let s = try await server()
        let put = try await putIndexes(s, ["n_1": ["n": 1]])
        #expect(put.status == 200, "\(put.text)")
        #expect(put.json["indexes"]?["n_1"] == ["n": 1])
        #expect(put.json["className"] == "Task")
        #expect(try await indexes(s)?["n_1"] == ["n": 1])

        // Queries answer the same with the index.
        #expect(try await s.orderedNames("Task", ["where": ["n": ["$gte": 27]], "order": "-n"], key: "title")
                == ["task 29", "task 28", "task 27"])

        // Declaring it again is refused.
        expectParseError(try await putIndexes(s, ["n_1": ["n": 1]]), 102, "Index n_1 exists, cannot update.")

        // A compound index and a descending one, in one request.
        let more = try await putIndexes(s, ["tag_n": ["tag": 1, "n": -1], "due_1": ["due": -1]])
        #expect(more.status == 200, "\(more.text)")
        let all = try await indexes(s)
        #expect(all?["n_1"] == ["n": 1])
        #expect(all?["tag_n"] == ["tag": 1, "n": -1])
        #expect(all?["due_1"] == ["due": -1])

        // Deleting.
        let deleted = try await putIndexes(s, ["n_1": ["__op": "Delete"]])
        #expect(deleted.status == 200, "\(deleted.text)")
        let remaining = try await indexes(s)
        #expect(remaining?["n_1"] == nil)
        #expect(remaining?["tag_n"] == ["tag": 1, "n": -1])
        #expect(try await s.orderedNames("Task", ["where": ["n": ["$lt": 2]], "order": "n"], key: "title") == ["task 0", "task 1"])
        // A deleted index can be declared again.
        #expect(try await putIndexes(s, ["n_1": ["n": 1]]).status == 200)
        #expect(try await indexes(s)?["n_1"] == ["n": 1])
    }

    @Test func indexOnAMissingFieldIs102() async throws {
        let s = try await server()
        expectParseError(try await putIndexes(s, ["missing_1": ["missing": 1]]), 102, "Field missing does not exist, cannot add index.")
        expectParseError(try await putIndexes(s, ["mixed": ["n": 1, "missing": 1]]), 102,
                         "Field missing does not exist, cannot add index.")
        // Nothing was declared.
        #expect(try await indexes(s)?["missing_1"] == nil)
        #expect(try await indexes(s)?["mixed"] == nil)
        // Deleting an index that does not exist.
        expectParseError(try await putIndexes(s, ["nope": ["__op": "Delete"]]), 102, "Index nope does not exist, cannot delete.")
    }

    @Test func indexesOnBuiltInFields() async throws {
        let s = try await server()
        let response = try await putIndexes(s, ["created": ["createdAt": -1], "updated": ["updatedAt": 1]])
        #expect(response.status == 200, "\(response.text)")
        #expect(try await indexes(s)?["created"] == ["createdAt": -1])
        #expect(try await s.queryResults("Task", ["order": "-createdAt", "limit": 5]).count == 5)
    }

    @Test func indexesDeclaredWhenTheClassIsCreated() async throws {
        let s = try TestServer()
        let response = try await s.request("POST", "/schemas/Log", json: [
            "className": "Log", "fields": ["level": ["type": "Number"], "source": ["type": "String"]],
            "indexes": ["level_source": ["level": 1, "source": 1]],
        ], master: true)
        #expect(response.status == 200, "\(response.text)")
        #expect(response.json["indexes"]?["level_source"] == ["level": 1, "source": 1])
        #expect(try await indexes(s, className: "Log")?["level_source"] == ["level": 1, "source": 1])
        _ = try await s.create("Log", ["level": 3, "source": "x"])
        #expect(try await s.names("Log", where: ["level": 3], key: "source") == ["x"])
    }

    @Test func indexesSurviveARestart() async throws {
        let first = try await server()
        #expect(try await putIndexes(first, ["n_1": ["n": 1]]).status == 200)
        first.stop()
        let second = try TestServer(dataDirectory: first.dataDirectory)
        #expect(try await indexes(second)?["n_1"] == ["n": 1])
        // It is still there for SQL too: declaring it again is refused, deleting it works.
        expectParseError(try await putIndexes(second, ["n_1": ["n": 1]]), 102)
        #expect(try await putIndexes(second, ["n_1": ["__op": "Delete"]]).status == 200)
        #expect(try await second.queryResults("Task", ["where": ["n": 3]]).count == 1)
    }
}
