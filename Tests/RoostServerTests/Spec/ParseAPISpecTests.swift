import Foundation
import RoostCore
import Testing

/// Parse Server's spec/ParseAPI.spec.js ("miscellaneous"), REST-observable cases.
@Suite struct ParseAPISpecTests {
    private static let restKey = ["X-Parse-REST-API-Key": "rest"]

    // spec: ParseAPI.spec.js: db contains document after successful save
    // spec: ParseAPI.spec.js: create a GameScore object
    // spec: ParseAPI.spec.js: get a TestObject
    // spec: ParseAPI.spec.js: save various data types
    // spec: ParseAPI.spec.js: query with limit
    // spec: ParseAPI.spec.js: query without limit get default 100 records
    // spec: ParseAPI.spec.js: basic saveAll
    // spec: ParseAPI.spec.js: doesnt convert interior keys of objects that use special names
    // spec: ParseAPI.spec.js: does not change inner object keys named _auth_data_something
    // spec: ParseAPI.spec.js: does not change inner object key names _p_somethign
    // spec: ParseAPI.spec.js: does not change inner object key names _rperm, _wperm
    // spec: ParseAPI.spec.js: does not change inner objects if the key has the same name as a geopoint field on the class, and the value is an array of length 2, or if the key has the same name as a file field on the class, and the value is a string
    // spec: ParseAPI.spec.js: bans interior keys containing . or $
    @Test func objectsRoundTrip() async throws {
        let server = try TestServer()
        let score = try await server.request("POST", "/classes/GameScore", json: ["score": 1337])
        #expect(score.status == 201)
        #expect(score.json["objectId"]?.stringValue != nil && isParseISODate(score.json["createdAt"]?.stringValue))
        let foo = try await server.create("TestObject", ["foo": "bar"])
        #expect(try await server.results("TestObject").map { $0["foo"] } == ["bar"])
        let bloop = try await server.create("TestObject", ["bloop": "blarg"])
        let fetched = try await server.fetch("TestObject", bloop)
        #expect(fetched["bloop"] == "blarg" && fetched["objectId"] == .string(bloop))

        let typed = try await server.create("Typed", ["date": date("2026-11-25T10:00:00.000Z"), "array": [1, 2, 3], "object": ["one": 1, "two": 2]])
        let stored = try await server.fetch("Typed", typed)
        #expect(stored["date"] == date("2026-11-25T10:00:00.000Z"))
        #expect(stored["array"] == [1, 2, 3])
        #expect(stored["object"] == ["one": 1, "two": 2])

        #expect(try await server.results("TestObject", ["limit": 1]).count == 1)
        _ = try await server.createAll("Many", (0..<150).map { ["name": .string("name\($0)")] })
        #expect(try await server.results("Many").count == 100)
        let saved = try await server.createAll("Letters", [["letter": "alpha"], ["letter": "beta"]])
        #expect(saved.count == 2 && !saved[0].isEmpty)
        #expect(try await server.results("Letters").count == 2)

        let inner: [JSON] = [
            ["createdAt": "a", "updatedAt": 1], ["_auth_data_facebook": 7], ["_p_data": 7], ["_rperm": 7, "_wperm": 8],
        ]
        for value in inner {
            let id = try await server.create("Obj", ["val": value])
            #expect(try await server.fetch("Obj", id)["val"] == value)
        }
        let odd = try await server.create("O", [
            "fileField": ["__type": "File", "name": "myfile.txt"], "geoField": ["__type": "GeoPoint", "latitude": 0, "longitude": 0],
            "innerObj": ["fileField": "data", "geoField": [1, 2]],
        ])
        #expect(try await server.fetch("O", odd)["innerObj"] == ["fileField": "data", "geoField": [1, 2]])

        let banned: [JSON] = [
            ["key with a $": "fails"], ["key with a .": "fails"], ["innerInnerObj": ["key with $": "fails"]], ["innerInnerObj": ["key with .": "fails"]],
        ]
        for value in banned {
            #expect(try await server.request("POST", "/classes/Obj", json: ["innerObj": value]).code == 121, "\(value.jsonText)")
        }
        _ = foo
    }

    // spec: ParseAPI.spec.js: return the updated fields on PUT
    // spec: ParseAPI.spec.js: properly returns incremented values (#1554)
    // spec: ParseAPI.spec.js: gets relation fields
    // spec: ParseAPI.spec.js: ignores _RevocableSession "header" send by JS SDK
    @Test func updatesAndReplies() async throws {
        let server = try TestServer()
        let child = try await server.create("Child", [:])
        let created = try await server.request("POST", "/classes/GameScore", json: [
            "a": "hello", "c": 1, "d": ["1"], "e": ["1"], "f": ["1", "2"],
            "point": ["__type": "GeoPoint", "latitude": 37.4848, "longitude": -122.1483], "array": ["obj1", "obj2"],
            "objects": ["a": "b"], "string": "abc", "bool": true, "number": 1, "date": date("2026-11-25T10:00:00.000Z"),
            "pointer": pointer("Child", child),
        ], headers: Self.restKey.merging(["X-Parse-Installation-Id": "yolo"]) { $1 })
        #expect(created.json.objectValue?.keys.sorted() == ["createdAt", "objectId"])
        let id = try #require(created.json["objectId"]?.stringValue)
        let updated = try await server.request("PUT", "/classes/GameScore/\(id)", json: [
            "a": "b", "c": ["__op": "Increment", "amount": 2], "d": ["__op": "Add", "objects": ["2"]],
            "e": ["__op": "AddUnique", "objects": ["1", "2"]], "f": ["__op": "Remove", "objects": ["2"]],
            "selfThing": pointer("GameScore", id),
        ])
        #expect(updated.json.objectValue?.keys.sorted() == ["c", "d", "e", "f", "updatedAt"])
        #expect(updated.json["c"] == 3)
        #expect(Set(updated.json["d"]?.arrayValue ?? []) == ["1", "2"])
        #expect(Set(updated.json["e"]?.arrayValue ?? []) == ["1", "2"])
        #expect(updated.json["f"] == ["1"])

        let counter = try await server.create("AnObject", [:])
        for (amount, expected) in [(1, 1), (-1, 0)] {
            let reply = try await server.request("PUT", "/classes/AnObject/\(counter)", json: ["key": ["__op": "Increment", "amount": .number(Double(amount))]])
            #expect(reply.json["key"] == .number(Double(expected)))
        }

        let related = try await server.create("RelatedObject", [:])
        let owner = try await server.create("Owner", [:])
        _ = try await server.request("PUT", "/classes/Owner/\(owner)", json: ["related": ["__op": "AddRelation", "objects": [pointer("RelatedObject", related)]]])
        let listed = try await server.request("GET", "/classes/Owner", headers: Self.restKey)
        #expect(listed.json["results"]?.arrayValue?.count == 1)
        #expect(listed.json["results"]?.arrayValue?.first?["related"] == ["__type": "Relation", "className": "RelatedObject"])

        _ = try await server.create("Revocable", ["a": "b"])
        let jsSDK = try await server.request("POST", "/classes/Revocable", json: [
            "_method": "GET", "_ApplicationId": .string(TestServer.applicationId), "_JavaScriptKey": "test", "_ClientVersion": "js1.8.3",
            "_InstallationId": "iid", "_RevocableSession": "1",
        ], appId: false)
        #expect(jsSDK.json["error"] == nil, "\(jsSDK.text)")
        #expect(jsSDK.json["results"]?.arrayValue?.map { $0["a"] } == ["b"])
    }

    // spec: ParseAPI.spec.js: create a valid parse user
    // spec: ParseAPI.spec.js: fail to create a duplicate username
    // spec: ParseAPI.spec.js: ensure that email is uniquely indexed
    // spec: ParseAPI.spec.js: succeed in logging in
    // spec: ParseAPI.spec.js: increment with a user object
    // spec: ParseAPI.spec.js: android login providing empty authData block works
    @Test func users() async throws {
        let server = try TestServer(arguments: fastHashing)
        let user = try await server.request("POST", "/users", json: ["username": "test", "password": "moon-y"])
        #expect(user.json["objectId"]?.stringValue != nil && user.json["sessionToken"]?.stringValue != nil)
        #expect(user.json["password"] == nil)
        let login = try await server.request("POST", "/login", json: ["username": "test", "password": "moon-y"])
        #expect(login.json["objectId"] == user.json["objectId"] && login.json["sessionToken"]?.stringValue != nil)
        #expect(login.json["password"] == nil)
        let id = try #require(user.json["objectId"]?.stringValue)
        let token = ["X-Parse-Session-Token": user.json["sessionToken"]?.stringValue ?? ""]
        for expected in [1, 2] {
            _ = try await server.request("PUT", "/users/\(id)", json: ["foo": ["__op": "Increment", "amount": 1]], headers: token)
            #expect(try await server.request("POST", "/login", json: ["username": "test", "password": "moon-y"]).json["foo"] == .number(Double(expected)))
        }

        for (second, code) in [(["username": "u1", "email": "email@other.email"], 202), (["username": "u2", "email": "dupe@dupe.dupe"], 203)] as [([String: JSON], Int)] {
            let server = try TestServer(arguments: fastHashing)
            async let first = server.request("POST", "/users", json: ["password": "asdf", "username": "u1", "email": "dupe@dupe.dupe"])
            async let other = server.request("POST", "/users", json: .object(second.merging(["password": "otherpassword"]) { $1 }))
            let replies = try await [first, other]
            #expect(replies.filter { $0.status == 201 }.count == 1)
            #expect(replies.filter { $0.code == code }.count == 1, "\(replies.map(\.text))")
        }

        let android: JSON = ["username": "pulse1989", "password": "password1234", "authData": [:]]
        #expect(try await server.request("POST", "/users", json: android, headers: Self.restKey).status == 201)
        #expect(try await server.request("POST", "/login", json: android, headers: Self.restKey).json["sessionToken"]?.stringValue != nil)
    }

    // spec: ParseAPI.spec.js: fails on invalid client key
    // spec: ParseAPI.spec.js: fails on invalid windows key
    // spec: ParseAPI.spec.js: fails on invalid javascript key
    // spec: ParseAPI.spec.js: fails on invalid rest api key
    // spec: ParseAPI.spec.js: fails on invalid function
    // spec: ParseAPI.spec.js: dedupes an installation properly and returns updatedAt
    @Test func keysFunctionsAndInstallations() async throws {
        let server = try TestServer(arguments: ["--rest-api-key", "rest"])
        for header in ["X-Parse-Client-Key", "X-Parse-Windows-Key", "X-Parse-Javascript-Key", "X-Parse-REST-API-Key"] {
            let refused = try await server.request("GET", "/classes/TestObject", headers: [header: "notakey", "Content-Type": "application/octet-stream"])
            #expect(refused.status == 403, "\(header)")
            #expect(refused.json["error"] == "unauthorized", "\(header)")
        }
        let function = try await server.request("POST", "/functions/somethingThatDoesDefinitelyNotExist", json: [:], headers: Self.restKey)
        expectError(function, 141, "Invalid function: \"somethingThatDoesDefinitelyNotExist\"")

        let installation: JSON = ["installationId": "lkjsahdfkjhsdfkjhsdfkjhsdf", "deviceType": "embedded"]
        let first = try await server.request("POST", "/installations", json: installation, headers: Self.restKey)
        #expect(first.json["objectId"]?.stringValue != nil)
        let again = try await server.request("POST", "/installations", json: installation, headers: Self.restKey)
        #expect(again.json["updatedAt"]?.stringValue != nil, "\(again.text)")
    }

    // spec: ParseAPI.spec.js: purge all objects in class
    // spec: ParseAPI.spec.js: fail on purge all objects in class without master key
    // spec: ParseAPI.spec.js: purge all objects in _Role also purge cache
    // spec: ParseAPI.spec.js: purge empty class
    @Test func purge() async throws {
        let server = try TestServer(arguments: fastHashing)
        _ = try await server.createAll("TestObject", [["foo": "bar"], ["alice": "wonderland"]])
        #expect(try await server.find("TestObject", ["count": 1, "limit": 0]).json["count"] == 2)
        let refused = try await server.request("DELETE", "/purge/TestObject", headers: Self.restKey)
        #expect(refused.json["error"] == "unauthorized: master key is required")
        #expect(try await server.request("DELETE", "/purge/TestObject", master: true).status == 200)
        #expect(try await server.find("TestObject", ["count": 1, "limit": 0]).json["count"] == 0)
        #expect(try await server.request("DELETE", "/purge/UnknownClass", master: true).status == 200)

        let user = try await server.request("POST", "/users", json: ["username": "test", "password": "moon-y"])
        let userId = try #require(user.json["objectId"]?.stringValue)
        let session = ["X-Parse-Session-Token": user.json["sessionToken"]?.stringValue ?? ""]
        let role = try await server.request("POST", "/roles", json: [
            "name": "TestRole", "ACL": ["*": ["read": true]], "users": ["__op": "AddRelation", "objects": [pointer("_User", userId)]],
        ], master: true)
        #expect(role.status == 201, "\(role.text)")
        let secret = try await server.create("Secret", ["ACL": ["role:TestRole": ["read": true, "write": true]]])
        #expect(try await server.request("GET", "/classes/Secret/\(secret)", headers: session).status == 200)
        #expect(try await server.request("DELETE", "/purge/_Role", master: true).status == 200)
        expectError(try await server.request("GET", "/classes/Secret/\(secret)", headers: session), 101)
    }
}
