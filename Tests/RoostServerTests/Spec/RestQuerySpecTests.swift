import Foundation
import RoostCore
import Testing

/// Parse Server's spec/RestQuery.spec.js over REST. The spec calls `rest.find` with no user ("nobody"); here that
/// is a request without a session. Cases that write `_User` rows with legacy credentials straight into MongoDB,
/// or exercise `RestQuery.each` and Cloud Code triggers, are not carried; "query internal field" is in
/// `RestQueryRESTSpecTests`.
@Suite struct RestQuerySpecTests {
    // spec: RestQuery.spec.js: basic query
    // spec: RestQuery.spec.js: query with limit
    // spec: RestQuery.spec.js: query with limit = 0
    // spec: RestQuery.spec.js: query with limit = 0 and count = 1
    @Test func limitsAndCounts() async throws {
        let server = try TestServer()
        _ = try await server.create("TestObject", ["foo": "baz"])
        #expect(try await server.results("TestObject").count == 1)
        _ = try await server.create("TestObject", ["foo": "qux"])
        let one = try await server.results("TestObject", ["limit": "1"])
        #expect(one.count == 1 && one.first?["foo"]?.stringValue != nil)
        #expect(try await server.results("TestObject", ["limit": "0"]).isEmpty)
        let counted = try await server.find("TestObject", ["limit": "0", "count": "1"])
        #expect(counted.json["results"] == [] && counted.json["count"] == 2, "\(counted.text)")
    }

    // spec: RestQuery.spec.js: query with include
    @Test func includeOnAPointerToAUser() async throws {
        let server = try TestServer(arguments: fastHashing)
        let photo = try await server.create("TestPhoto", ["foo": "bar"])
        let user = try await server.request("POST", "/users", json: ["username": "aUsername", "password": "aPassword",
                                                                     "ACL": ["*": ["read": true]]])
        let userId = try #require(user.json["objectId"]?.stringValue, "\(user.text)")
        _ = try await server.create("TestActivity", ["type": "comment", "photo": pointer("TestPhoto", photo), "fromUser": pointer("_User", userId)])
        let results = try await server.results("TestActivity", ["where": ["photo": pointer("TestPhoto", photo), "type": "comment"],
                                                                "include": "fromUser", "order": "createdAt", "limit": "30"])
        #expect(results.count == 1)
        #expect(results.first?["objectId"]?.stringValue != nil && results.first?["photo"]?.objectValue != nil)
        #expect(results.first?["fromUser"]?["username"] == "aUsername")
    }

    // spec: RestQuery.spec.js: query non-existent class when disabled client class creation
    // spec: RestQuery.spec.js: query existent class when disabled client class creation
    @Test func withoutClientClassCreationOnlyExistingClassesAreQueried() async throws {
        let server = try TestServer(arguments: ["--no-allow-client-class-creation"])
        expectParseError(try await server.find("ClientClassCreation"), 119,
                         "This user is not allowed to access non-existent class: ClientClassCreation")
        #expect(try await server.request("POST", "/schemas/ClientClassCreation", json: [:], master: true).status == 200)
        #expect(try await server.results("ClientClassCreation").isEmpty)
    }

    // spec: RestQuery.spec.js: query protected field with matchesQuery
    @Test func internalUserFieldsCannotBeQueriedInASubquery() async throws {
        let api = try RecordingServer()
        let user = try await api.signUp("username1", "password")
        _ = try await api.server.create("TestObject", ["user": pointer("_User", user.id)])
        let subquery: JSON = ["$inQuery": ["className": "_User", "where": ["_perishable_token": ["$exists": true]]]]
        expectParseError(try await api.server.find("TestObject", ["where": ["user": subquery]]), 105, "Invalid key name: _perishable_token")
    }

    // spec: RestQuery.spec.js: query protected field
    @Test func aProtectedFieldCannotBeQueried() async throws {
        let server = try TestServer(arguments: fastHashing)
        let user = try await server.signUpAccount("username1", password: "password")
        _ = try await server.create("Test", ["owner": pointer("_User", user.id), "test": "test", "zip": 1234], token: user.token)
        let permissions: JSON = ["get": ["*": true], "find": ["*": true], "protectedFields": .object([user.id: ["zip"]])]
        let schema = try await server.request("PUT", "/schemas/Test", json: ["classLevelPermissions": permissions], master: true)
        #expect(schema.status == 200, "\(schema.text)")
        let allowed = try await server.query("Test", ["where": ["test": ["$exists": true]]], token: user.token)
        #expect(allowed.status == 200, "\(allowed.text)")
        expectParseError(try await server.query("Test", ["where": ["zip": ["$exists": true]]], token: user.token), 119,
                         "This user is not allowed to query zip on class Test")
    }

    // spec: RestQuery.spec.js: query with wrongly encoded parameter
    @Test func aParameterWithAnEncodedEqualsSignIsRefused() async throws {
        let server = try TestServer()
        _ = try await server.createAll("TestParameterEncode", [["foo": "bar"], ["foo": "baz"]])
        // `querystring.stringify(...).replace('=', '%3D')`: the first `=` is sent encoded, so the name swallows the value.
        let whereFirst = "where%3D%7B%22foo%22%3A%7B%22%24ne%22%3A%20%22baz%22%7D%7D&limit=1"
        for query in [whereFirst, "limit%3D1"] {
            let response = try await server.request("GET", "/classes/TestParameterEncode?\(query)")
            #expect(response.status == 400 && response.code == 102, "\(query): \(response.text)")
        }
    }

    // spec: RestQuery.spec.js: makes sure null pointers are handed correctly #2189
    @Test func includeKeepsNullsInAnArrayOfPointers() async throws {
        let server = try TestServer()
        let another = try await server.create("AnotherObject", [:])
        _ = try await server.create("AnObject", ["values": [nil, nil, pointer("AnotherObject", another)]])
        let first = try await server.results("AnObject", ["include": "values", "limit": "1"]).first
        let values = first?["values"]?.arrayValue ?? []
        #expect(values.count == 3)
        #expect(values.filter { $0 == .null }.count == 2)
        #expect(values.contains { $0["__type"] == "Object" && $0["objectId"] == .string(another) }, "\(values)")
    }
}
