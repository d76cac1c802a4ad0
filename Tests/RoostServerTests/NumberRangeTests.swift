import Foundation
import RoostCore
import Testing

/// A number is never turned into `null`: JSON numbers beyond a Double's range are refused (107), and so
/// is an Increment whose result overflows (it used to store infinity, which reads back as `null`).
@Suite struct NumberRangeTests {
    @Test func anOverflowingIncrementIsRefusedAndChangesNothing() async throws {
        let server = try TestServer()
        let id = try await server.create("Score", ["n": 1.7e308, "m": -1.7e308])
        for (key, amount) in [("n", 1.7e308), ("m", -1.7e308)] {
            let refused = try await server.request("PUT", "/classes/Score/\(id)",
                                                   json: [key: ["__op": "Increment", "amount": .number(amount)]])
            #expect(refused.status == 400 && refused.code == 107, "\(refused.text)")
        }
        let stored = try await server.request("GET", "/classes/Score/\(id)")
        #expect(stored.json["n"] == 1.7e308 && stored.json["m"] == -1.7e308, "\(stored.text)")
        // Within range it still adds.
        let fine = try await server.request("PUT", "/classes/Score/\(id)", json: ["n": ["__op": "Increment", "amount": -1.7e308]])
        #expect(fine.status == 200 && fine.json["n"] == 0)
    }

    @Test func anOverflowingIncrementInABatchFailsOnlyItsItem() async throws {
        let server = try TestServer()
        let id = try await server.create("Score", ["n": 1.7e308])
        let requests: [JSON] = [
            ["method": "PUT", "path": .string("/parse/classes/Score/\(id)"), "body": ["n": ["__op": "Increment", "amount": 1.7e308]]],
            ["method": "PUT", "path": .string("/parse/classes/Score/\(id)"), "body": ["other": 1]],
        ]
        let reply = try await server.request("POST", "/batch", json: ["requests": .array(requests)])
        let results = reply.json.arrayValue ?? []
        #expect(results.first?["error"]?["code"] == 107, "\(reply.text)")
        #expect(results.last?["success"] != nil)
        #expect(try await server.request("GET", "/classes/Score/\(id)").json["n"] == 1.7e308)
        let transaction = try await server.request("POST", "/batch", json: ["requests": .array(requests), "transaction": true])
        #expect(transaction.status == 400 && transaction.code == 107, "\(transaction.text)")
    }

    /// `1e400` is not read as infinity anywhere a body carries numbers.
    @Test(arguments: [
        ("POST", "/classes/Score", #"{"n":1e400}"#),
        ("POST", "/classes/Score", #"{"n":{"__op":"Increment","amount":1e400}}"#),
        ("POST", "/classes/Score", #"{"list":{"__op":"Add","objects":[1,-1e400]}}"#),
        ("POST", "/batch", #"{"requests":[{"method":"POST","path":"/parse/classes/Score","body":{"n":{"__op":"Increment","amount":1e999}}}]}"#),
    ])
    func numbersOutOfRangeAreInvalidJSON(method: String, path: String, body: String) async throws {
        let server = try TestServer()
        let refused = try await server.request(method, path, body: Data(body.utf8))
        #expect(refused.status == 400 && refused.code == 107, "\(refused.text)")
        let found = try await server.request("GET", "/classes/Score", master: true)
        #expect(found.json["results"]?.arrayValue?.isEmpty ?? true)
    }
}
