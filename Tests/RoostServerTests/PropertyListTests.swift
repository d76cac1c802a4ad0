import Foundation
import RoostCore
import Testing

@Suite struct PropertyListTests {
    @Test func objectsAndQueriesAnswerAsPropertyListsWhenAsked() async throws {
        let server = try TestServer()
        let id = try await server.create("Sonnet", ["number": 18, "line": "Shall I compare thee to a summer's day? <&>", "ratio": 1.5,
                                                    "public": true, "nothing": nil])
        let plist = ["Accept": "application/x-plist"]
        let object = try await server.request("GET", "/classes/Sonnet/\(id)", headers: plist)
        #expect(object.status == 200)
        #expect(object.headers["content-type"] == "application/x-plist")
        #expect(object.text.hasPrefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"))
        #expect(object.text.contains("<key>number</key><integer>18</integer>"))
        #expect(object.text.contains("<key>line</key><string>Shall I compare thee to a summer's day? &lt;&amp;&gt;</string>"))
        #expect(object.text.contains("<key>ratio</key><real>1.5</real>"))
        #expect(object.text.contains("<key>public</key><true/>"))
        #expect(!object.text.contains("<key>nothing</key>"))
        #expect(object.text.contains("<key>objectId</key><string>\(id)</string>"))

        // The same document parses as a property list (Foundation's reader).
        let parsed = try PropertyListSerialization.propertyList(from: object.body, options: [], format: nil) as? [String: Any]
        #expect(parsed?["number"] as? Int == 18)

        let query = try await server.request("GET", "/classes/Sonnet", headers: plist, query: ["count": "1"])
        #expect(query.text.contains("<key>count</key><integer>1</integer>"))
        #expect(query.text.contains("<key>results</key><array><dict>"))

        let json = try await server.request("GET", "/classes/Sonnet/\(id)")
        #expect(json.headers["content-type"]?.hasPrefix("application/json") == true)
        let error = try await server.request("GET", "/classes/Sonnet/missing", headers: plist)
        #expect(error.status == 404)
        #expect(error.code == 101)  // Errors stay JSON, as every Parse client reads them.
    }
}
