import Foundation
import RoostCore
import Testing

/// Parse Server's spec/schemas.spec.js, REST-observable cases (`/schemas` with the master key).
@Suite struct SchemasSpecTests {
    /// Parse's `defaultClassLevelPermissions` of a class created without any.
    static let defaultPermissions: JSON = [
        "find": ["*": true], "count": ["*": true], "create": ["*": true], "get": ["*": true], "update": ["*": true],
        "addField": ["*": true], "delete": ["*": true], "protectedFields": ["*": []],
    ]
    static let defaultFields: [String: JSON] = [
        "ACL": ["type": "ACL"], "createdAt": ["type": "Date"], "updatedAt": ["type": "Date"], "objectId": ["type": "String"],
    ]

    /// The spec's `hasAllPODobject()`, saved through REST.
    static let allPOD: JSON = [
        "aNumber": 5, "aString": "string", "aBool": true, "aDate": ["__type": "Date", "iso": "2026-11-25T10:00:00.000Z"],
        "aObject": ["k1": "value", "k2": true, "k3": 5], "aArray": ["contents", true, 5],
        "aGeoPoint": ["__type": "GeoPoint", "latitude": 0, "longitude": 0], "aFile": ["__type": "File", "name": "f.txt"],
        "ACL": [:],
    ]
    static var allPODSchema: JSON {
        ["className": "HasAllPOD", "classLevelPermissions": defaultPermissions, "fields": .object(defaultFields.merging([
            "aNumber": ["type": "Number"], "aString": ["type": "String"], "aBool": ["type": "Boolean"], "aDate": ["type": "Date"],
            "aObject": ["type": "Object"], "aArray": ["type": "Array"], "aGeoPoint": ["type": "GeoPoint"], "aFile": ["type": "File"],
        ]) { _, new in new })]
    }

    static func schema(_ className: String, _ fields: [String: JSON] = [:], permissions: JSON = defaultPermissions) -> JSON {
        ["className": .string(className), "fields": .object(defaultFields.merging(fields) { _, new in new }),
         "classLevelPermissions": permissions]
    }

    // spec: schemas.spec.js: requires the master key to get all schemas
    // spec: schemas.spec.js: requires the master key to get one schema
    // spec: schemas.spec.js: asks for the master key if you use the rest key
    // spec: schemas.spec.js: requires the master key to create a schema
    // spec: schemas.spec.js: requires the master key to modify schemas
    // spec: schemas.spec.js: requires the master key to delete schemas
    /// The spec's server has a REST API key: without it a request is "unauthorized"; with it, not master.
    @Test func everyRouteNeedsTheMasterKey() async throws {
        let server = try TestServer(arguments: ["--rest-api-key", "rest"])
        for (method, path) in [("GET", "/schemas"), ("POST", "/schemas"), ("PUT", "/schemas/NewClass"), ("DELETE", "/schemas/DoesntMatter")] {
            let response = try await server.request(method, path, json: method == "GET" || method == "DELETE" ? nil : ["className": "MyClass"])
            #expect(response.status == 403, "\(method) \(path)")
            #expect(response.json == ["error": "unauthorized"], "\(method) \(path)")
        }
        let refusals: [(String, String, JSON?)] = [
            ("GET", "/schemas", nil), ("GET", "/schemas/SomeSchema", nil), ("POST", "/schemas", ["className": "MyClass"]),
            ("PUT", "/schemas/NewClass", [:]), ("DELETE", "/schemas/DoesntMatter", nil),
        ]
        for (method, path, body) in refusals {
            let response = try await server.request(method, path, json: body, headers: ["X-Parse-REST-API-Key": "rest"])
            #expect(response.status == 403, "\(method) \(path)")
            #expect(response.json["error"] == "unauthorized: master key is required", "\(method) \(path)")
        }
    }

    // spec: schemas.spec.js: treats class names case sensitively
    // spec: schemas.spec.js: sends an error if you use mismatching class names
    // spec: schemas.spec.js: sends an error if you use no class name
    // spec: schemas.spec.js: sends an error if you try to create the same class twice
    // spec: schemas.spec.js: responds with all fields when you create a class
    // spec: schemas.spec.js: lets you specify class name in both places
    // spec: schemas.spec.js: rejects class name mis-matches in put
    // spec: schemas.spec.js: refuses to add fields to non-existent classes
    // spec: schemas.spec.js: responds with a single schema
    @Test func createAndReadClasses() async throws {
        let server = try TestServer()
        _ = try await server.create("HasAllPOD", Self.allPOD)
        #expect(try await server.request("GET", "/schemas/HasAllPOD", master: true).json == Self.allPODSchema)
        let wrongCase = try await server.request("GET", "/schemas/HASALLPOD", master: true)
        #expect(wrongCase.status == 400)
        #expect(wrongCase.json == ["code": 103, "error": "Class HASALLPOD does not exist."])

        let mismatch = try await server.request("POST", "/schemas/A", json: ["className": "B"], master: true)
        #expect(mismatch.status == 400)
        #expect(mismatch.json == ["code": 103, "error": "Class name mismatch between B and A."])
        let unnamed = try await server.request("POST", "/schemas", json: [:], master: true)
        #expect(unnamed.status == 400)
        #expect(unnamed.json == ["code": 135, "error": "POST /schemas needs a class name."])

        #expect(try await server.request("POST", "/schemas", json: ["className": "A"], master: true).status == 200)
        let twice = try await server.request("POST", "/schemas", json: ["className": "A"], master: true)
        #expect(twice.status == 400)
        #expect(twice.json == ["code": 103, "error": "Class A already exists."])

        let created = try await server.request("POST", "/schemas", json: [
            "className": "NewClass", "fields": ["foo": ["type": "Number"], "ptr": ["type": "Pointer", "targetClass": "SomeClass"]],
        ], master: true)
        #expect(created.json == Self.schema("NewClass", ["foo": ["type": "Number"], "ptr": ["type": "Pointer", "targetClass": "SomeClass"]]))
        let both = try await server.request("POST", "/schemas/BothPlaces", json: ["className": "BothPlaces"], master: true)
        #expect(both.json == Self.schema("BothPlaces"))

        let putMismatch = try await server.request("PUT", "/schemas/NewClass", json: ["className": "WrongClassName"], master: true)
        expectError(putMismatch, 103, "Class name mismatch between WrongClassName and NewClass.")
        let noClass = try await server.request("PUT", "/schemas/NoClass", json: ["fields": ["newField": ["type": "String"]]], master: true)
        expectError(noClass, 103, "Class NoClass does not exist.")
    }

    // spec: schemas.spec.js: refuses to put to existing fields with different type, even if it would not be a change
    // spec: schemas.spec.js: refuses to delete non-existent fields
    // spec: schemas.spec.js: refuses to add a geopoint to a class that already has one
    // spec: schemas.spec.js: put with no modifications returns all fields
    // spec: schemas.spec.js: will not delete any fields if the additions are invalid
    // spec: schemas.spec.js: refuses to delete non-empty collection
    // spec: schemas.spec.js: lets you delete multiple fields and add fields
    @Test func changeFieldsOfAClassWithData() async throws {
        let server = try TestServer()
        let first = try await server.create("HasAllPOD", Self.allPOD)
        expectError(try await server.request("PUT", "/schemas/HasAllPOD", json: ["fields": ["aString": ["type": "Number"]]], master: true),
                    255, "Field aString exists, cannot update.")
        expectError(try await server.request("PUT", "/schemas/HasAllPOD", json: ["fields": ["nonExistentKey": ["__op": "Delete"]]], master: true),
                    255, "Field nonExistentKey does not exist, cannot delete.")
        expectError(try await server.request("PUT", "/schemas/HasAllPOD", json: ["fields": ["newGeo": ["type": "GeoPoint"]]], master: true),
                    111, "currently, only one GeoPoint field may exist in an object. Adding newGeo when aGeoPoint already exists.")
        #expect(try await server.request("PUT", "/schemas/HasAllPOD", json: [:], master: true).json == Self.allPODSchema)
        let invalid = try await server.request("PUT", "/schemas/HasAllPOD", json: [
            "fields": ["fakeNewField": ["type": "fake type"], "aString": ["__op": "Delete"]],
        ], master: true)
        expectError(invalid, 111, "invalid field type: fake type")
        #expect(try await server.request("PUT", "/schemas/HasAllPOD", json: [:], master: true).json == Self.allPODSchema)

        let notEmpty = try await server.request("DELETE", "/schemas/HasAllPOD", master: true)
        expectError(notEmpty, 255)
        #expect(notEmpty.json["error"]?.stringValue?.contains("HasAllPOD") == true)
        #expect(notEmpty.json["error"]?.stringValue?.contains("contains 1") == true)

        let changed = try await server.request("PUT", "/schemas/HasAllPOD", json: ["fields": [
            "aString": ["__op": "Delete"], "aNumber": ["__op": "Delete"], "aNewString": ["type": "String"],
            "aNewNumber": ["type": "Number"], "aNewRelation": ["type": "Relation", "targetClass": "HasAllPOD"],
            "aNewPointer": ["type": "Pointer", "targetClass": "HasAllPOD"],
        ]], master: true)
        var expected = Self.allPODSchema.objectValue!
        var fields = expected["fields"]!.objectValue!
        fields["aString"] = nil
        fields["aNumber"] = nil
        fields["aNewString"] = ["type": "String"]
        fields["aNewNumber"] = ["type": "Number"]
        fields["aNewRelation"] = ["type": "Relation", "targetClass": "HasAllPOD"]
        fields["aNewPointer"] = ["type": "Pointer", "targetClass": "HasAllPOD"]
        expected["fields"] = .object(fields)
        #expect(changed.json == .object(expected))
        let second = try await server.request("POST", "/classes/HasAllPOD", json: [
            "aNewPointer": pointer("HasAllPOD", first),
            "aNewRelation": ["__op": "AddRelation", "objects": [pointer("HasAllPOD", first)]],
        ])
        #expect(second.status == 201, "\(second.text)")
    }

    // spec: schemas.spec.js: refuses to add two geopoints
    // spec: schemas.spec.js: allows you to delete and add a geopoint in the same request
    // spec: schemas.spec.js: lets you add fields
    // spec: schemas.spec.js: lets you delete multiple fields and check schema
    @Test func addAndDeleteFields() async throws {
        let server = try TestServer()
        _ = try await server.create("NewClass", ["aString": "aString"])
        expectError(try await server.request("PUT", "/schemas/NewClass", json: [
            "fields": ["newGeo1": ["type": "GeoPoint"], "newGeo2": ["type": "GeoPoint"]],
        ], master: true), 111, "currently, only one GeoPoint field may exist in an object. Adding newGeo2 when newGeo1 already exists.")

        _ = try await server.create("GeoClass", ["geo1": ["__type": "GeoPoint", "latitude": 0, "longitude": 0]])
        let swapped = try await server.request("PUT", "/schemas/GeoClass", json: [
            "fields": ["geo2": ["type": "GeoPoint"], "geo1": ["__op": "Delete"]],
        ], master: true)
        #expect(swapped.json == Self.schema("GeoClass", ["geo2": ["type": "GeoPoint"]]), "\(swapped.text)")

        #expect(try await server.request("POST", "/schemas/Empty", json: [:], master: true).status == 200)
        let added = try await server.request("PUT", "/schemas/Empty", json: ["fields": ["newField": ["type": "String"]]], master: true)
        #expect(added.json == Self.schema("Empty", ["newField": ["type": "String"]]))
        #expect(try await server.request("GET", "/schemas/Empty", master: true).json == Self.schema("Empty", ["newField": ["type": "String"]]))

        _ = try await server.create("SimpleOne", ["aNumber": 5, "aString": "string", "aBool": true])
        let deleted = try await server.request("PUT", "/schemas/SimpleOne", json: [
            "fields": ["aString": ["__op": "Delete"], "aNumber": ["__op": "Delete"]],
        ], master: true)
        #expect(deleted.json == Self.schema("SimpleOne", ["aBool": ["type": "Boolean"]]))
    }

    // spec: schemas.spec.js: fails when deleting collections with invalid class names
    // spec: schemas.spec.js: does not fail when deleting nonexistant collections
    // spec: schemas.spec.js: deletes collections including join tables
    // spec: schemas.spec.js: deletes schema when actual collection does not exist
    // spec: schemas.spec.js: deletes schema when actual collection exists
    @Test func dropClasses() async throws {
        let server = try TestServer()
        let invalid = try await server.request("DELETE", "/schemas/_GlobalConfig", master: true)
        expectError(invalid, 103, "Invalid classname: _GlobalConfig, classnames can only have alphanumeric characters and _, and must start with an alpha character ")
        let missing = try await server.request("DELETE", "/schemas/Missing", master: true)
        #expect(missing.status == 200)
        #expect(missing.json == [:])

        let target = try await server.create("MyClass", ["data": "data"])
        let owner = try await server.create("MyOtherClass", ["aRelation": ["__op": "AddRelation", "objects": [pointer("MyClass", target)]]])
        #expect(try await server.request("DELETE", "/classes/MyOtherClass/\(owner)").status == 200)
        let dropped = try await server.request("DELETE", "/schemas/MyOtherClass", master: true)
        #expect(dropped.status == 200)
        #expect(dropped.json == [:])
        expectError(try await server.request("GET", "/schemas/MyOtherClass", master: true), 103, "Class MyOtherClass does not exist.")
        // A class of the same name starts without the old relation pairs.
        let again = try await server.create("MyOtherClass", ["n": 1])
        let related = try await server.find("MyClass", ["where": ["$relatedTo": ["object": pointer("MyOtherClass", again), "key": "aRelation"]]], master: true)
        #expect(related.json["results"]?.arrayValue?.isEmpty == true, "\(related.text)")

        let made = try await server.request("POST", "/schemas/NewClassForDelete", json: ["className": "NewClassForDelete"], master: true)
        #expect(made.json["className"] == "NewClassForDelete")
        #expect(try await server.request("DELETE", "/schemas/NewClassForDelete", master: true).json == [:])
        expectError(try await server.request("GET", "/schemas/NewClassForDelete", master: true), 103)

        _ = try await server.request("POST", "/schemas/NewClassForDelete", json: ["className": "NewClassForDelete"], master: true)
        let object = try await server.create("NewClassForDelete", [:])
        #expect(try await server.request("DELETE", "/classes/NewClassForDelete/\(object)").status == 200)
        #expect(try await server.request("DELETE", "/schemas/NewClassForDelete", master: true).json == [:])
        expectError(try await server.request("GET", "/schemas/NewClassForDelete", master: true), 103)
    }

    /// `POST /schemas/<C>` with only `classLevelPermissions`.
    private static func setPermissions(_ server: TestServer, _ className: String, _ permissions: JSON,
                                       method: String = "POST") async throws -> TestResponse {
        try await server.request(method, "/schemas/\(className)", json: ["classLevelPermissions": permissions], master: true)
    }

    // spec: schemas.spec.js: should fail setting schema permissions with invalid key
    // spec: schemas.spec.js: should throw with invalid userId (invalid char)
    // spec: schemas.spec.js: should throw with invalid * (spaces before)
    // spec: schemas.spec.js: should throw with invalid * (spaces after)
    // spec: schemas.spec.js: should throw if permission is number
    // spec: schemas.spec.js: should throw if permission is empty string
    // spec: schemas.spec.js: should be rejected if CLP operation is not an object
    // spec: schemas.spec.js: should be rejected if CLP protectedFields is not an object
    // spec: schemas.spec.js: should be rejected if CLP read/writeUserFields is not an array
    // spec: schemas.spec.js: should be rejected if CLP pointerFields is not an array
    @Test func invalidClassLevelPermissionsAreRefused() async throws {
        let server = try TestServer()
        _ = try await server.create("AClass", [:])
        let invalidOperation = try await Self.setPermissions(server, "AClass", [
            "find": ["*": true], "create": ["role:admin": true], "dummy": ["some": true],
        ], method: "PUT")
        expectError(invalidOperation, 107, "dummy is not a valid operation for class level permissions")
        let refusals: [(JSON, String)] = [
            (["find": ["12345_6789": true]], "'12345_6789' is not a valid key for class level permissions"),
            (["find": [" *": true]], "' *' is not a valid key for class level permissions"),
            (["find": ["* ": true]], "'* ' is not a valid key for class level permissions"),
            (["find": ["*": 1]], "'1' is not a valid value for class level permissions find:*:1"),
            (["find": ["*": ""]], "'' is not a valid value for class level permissions find:*:"),
            (["get": true], "'true' is not a valid value for class level permissions get - must be an object"),
            (["get": "wrongtype"], "'wrongtype' is not a valid value for class level permissions get - must be an object"),
            (["readUserFields": true], "'true' is not a valid value for class level permissions readUserFields - must be an array"),
            (["get": ["pointerFields": [:]]], "'[object Object]' is not a valid value for get[pointerFields] - expected an array."),
        ]
        for (permissions, message) in refusals {
            expectError(try await Self.setPermissions(server, "BClass", permissions), 107, message)
            expectError(try await Self.setPermissions(server, "AClass", permissions, method: "PUT"), 107, message)
        }
        // Nothing was stored: the class was not created, and AClass keeps its permissions.
        expectError(try await server.request("GET", "/schemas/BClass", master: true), 103)
        let reset = try await server.request("GET", "/schemas/AClass", master: true)
        #expect(reset.json["classLevelPermissions"] == Self.defaultPermissions, "\(reset.text)")
    }

    /// Parse's other `validateCLP` refusals: pointer permissions name Pointer<_User> or Array fields; protected fields exist
    /// and are not default fields. Accepted forms are stored as sent.
    @Test func pointerAndProtectedFieldPermissionsAreChecked() async throws {
        let server = try TestServer()
        _ = try await server.create("Doc", ["owner": pointer("_User", "u000000001"), "team": pointer("Team", "t000000001"),
                                            "editors": [], "secret": "s"])
        expectError(try await Self.setPermissions(server, "Doc", ["get": ["pointerFields": ["team"]]], method: "PUT"), 107,
                    "'team' is not a valid column for class level pointer permissions [object Object]")
        expectError(try await Self.setPermissions(server, "Doc", ["readUserFields": ["missing"]], method: "PUT"), 107,
                    "'missing' is not a valid column for class level pointer permissions readUserFields")
        expectError(try await Self.setPermissions(server, "Doc", ["protectedFields": ["*": ["objectId"]]], method: "PUT"), 107,
                    "Default field 'objectId' can not be protected")
        expectError(try await Self.setPermissions(server, "Doc", ["protectedFields": ["*": ["nope"]]], method: "PUT"), 107,
                    "Field 'nope' in protectedFields:* does not exist")
        expectError(try await Self.setPermissions(server, "Doc", ["protectedFields": ["*": "secret"]], method: "PUT"), 107,
                    "'secret' is not a valid value for protectedFields[*] - expected an array.")
        expectError(try await Self.setPermissions(server, "Doc", ["protectedFields": ["some one": ["secret"]]], method: "PUT"), 107,
                    "'some one' is not a valid key for class level permissions")
        let accepted: JSON = [
            "get": ["pointerFields": ["owner", "editors"]], "find": ["requiresAuthentication": true, "role:admin": true, "u000000001": true],
            "writeUserFields": ["owner"], "protectedFields": ["*": ["secret"], "userField:owner": [], "authenticated": ["secret"]],
        ]
        let put = try await Self.setPermissions(server, "Doc", accepted, method: "PUT")
        #expect(put.status == 200, "\(put.text)")
        // Read back as Parse stores them: the operations left out are locked to the master key.
        var stored = accepted.objectValue ?? [:]
        for operation in ["count", "create", "update", "delete", "addField"] { stored[operation] = [:] }
        #expect(put.json["classLevelPermissions"] == .object(stored))
        // A new class's permissions may name the fields it declares in the same request.
        let created = try await server.request("POST", "/schemas/Note", json: [
            "fields": ["author": ["type": "Pointer", "targetClass": "_User"]],
            "classLevelPermissions": ["update": ["pointerFields": ["author"]]],
        ], master: true)
        #expect(created.status == 200, "\(created.text)")
    }

    // spec: schemas.spec.js: should aceept class-level permission with userid of any length
    // spec: schemas.spec.js: should allow set class-level permission for custom userid of any length and chars
    // spec: schemas.spec.js: should allow set ACL for custom userid
    @Test func userIdKeysFollowTheObjectIdOption() async throws {
        let plain = try TestServer()
        let eleven = try await Self.setPermissions(plain, "AClass", ["find": ["e1evenChars": true]])
        #expect(eleven.json["classLevelPermissions"]?["find"]?["e1evenChars"] == true, "\(eleven.text)")
        expectError(try await Self.setPermissions(plain, "BClass", ["find": ["set:ID+symbol$=@llowed": true]]), 107,
                    "'set:ID+symbol$=@llowed' is not a valid key for class level permissions")

        let custom = try TestServer(arguments: ["--allow-custom-object-id"])
        let symbols = try await Self.setPermissions(custom, "AClass", ["find": ["set:ID+symbol$=@llowed": true, "1": true]])
        #expect(symbols.json["classLevelPermissions"]?["find"]?["set:ID+symbol$=@llowed"] == true, "\(symbols.text)")
        #expect(symbols.json["classLevelPermissions"]?["find"]?["1"] == true)
        let acl: JSON = ["symbols:id@allowed=": ["read": true, "write": true], "1": ["read": true, "write": true],
                         "tensymbols": ["read": true, "write": true]]
        let object = try await custom.request("POST", "/classes/AClass", json: ["ACL": acl], master: true)
        let id = try #require(object.json["objectId"]?.stringValue)
        #expect(try await custom.request("GET", "/classes/AClass/\(id)", master: true).json["ACL"] == acl)
    }

    // spec: schemas.spec.js: should set/get schema permissions
    // spec: schemas.spec.js: should not be able to add a field
    // spec: schemas.spec.js: should be able to add a field
    // spec: schemas.spec.js: can add field as master (issue #1257)
    // spec: schemas.spec.js: gives correct response when deleting a schema with CLPs (regression test #1919)
    @Test func permissionsAreStoredAndApplied() async throws {
        let server = try TestServer()
        let set = try await Self.setPermissions(server, "AClass", ["find": ["*": true], "create": ["role:admin": true]])
        #expect(set.status == 200)
        let read = try await server.request("GET", "/schemas/AClass", master: true)
        // What the write leaves out is locked to the master key, and read back so.
        #expect(read.json["classLevelPermissions"] == ["find": ["*": true], "create": ["role:admin": true], "get": [:], "count": [:],
                                                       "update": [:], "delete": [:], "addField": [:], "protectedFields": [:]])

        _ = try await Self.setPermissions(server, "NoAdd", ["create": ["*": true], "find": ["*": true], "addField": ["role:admin": true]])
        let refused = try await server.request("POST", "/classes/NoAdd", json: ["hello": "world"])
        expectError(refused, 119, "Permission denied for action addField on class NoAdd.")
        _ = try await Self.setPermissions(server, "MayAdd", ["create": ["*": true], "addField": ["*": true]])
        #expect(try await server.request("POST", "/classes/MayAdd", json: ["hello": "world"]).status == 201)
        _ = try await Self.setPermissions(server, "MasterAdds", ["addField": [:]])
        let master = try await server.request("POST", "/classes/MasterAdds", json: ["key": "value"], master: true)
        #expect(master.status == 201, "\(master.text)")

        let doomed = try await server.create("MyClass", ["data": "foo"])
        #expect(try await server.request("DELETE", "/classes/MyClass/\(doomed)").status == 200)
        #expect(try await Self.setPermissions(server, "MyClass", ["find": [:], "get": [:]], method: "PUT").status == 200)
        let dropped = try await server.request("DELETE", "/schemas/MyClass", master: true)
        #expect(dropped.status == 200)
        #expect(dropped.json == [:])
    }

    static var userSchema: JSON {
        schema("_User", ["username": ["type": "String"], "password": ["type": "String"], "email": ["type": "String"],
                         "emailVerified": ["type": "Boolean"], "authData": ["type": "Object"]])
    }
    static var roleSchema: JSON {
        schema("_Role", ["name": ["type": "String"], "users": ["type": "Relation", "targetClass": "_User"],
                         "roles": ["type": "Relation", "targetClass": "_Role"]])
    }

    /// `GET /schemas` without `indexes`, sorted by class name.
    private static func allSchemas(_ server: TestServer) async throws -> [JSON] {
        let listed = try await server.request("GET", "/schemas", master: true).json["results"]?.arrayValue ?? []
        return listed.compactMap { schema -> JSON? in
            guard var members = schema.objectValue else { return nil }
            members["indexes"] = nil
            return .object(members)
        }.sorted { ($0["className"]?.stringValue ?? "") < ($1["className"]?.stringValue ?? "") }
    }

    // spec: schemas.spec.js: creates _User schema when server starts
    // spec: schemas.spec.js: responds with a list of schemas after creating objects
    // spec: schemas.spec.js: ensure refresh cache after creating a class
    // spec: schemas.spec.js: ensure refresh cache after deleting a class
    // spec: schemas.spec.js: lets you add fields to system schema
    @Test func systemClassesExistFromTheStart() async throws {
        let server = try TestServer()
        #expect(try await Self.allSchemas(server) == [Self.roleSchema, Self.userSchema])

        #expect(try await server.request("POST", "/schemas", json: ["className": "A"], master: true).status == 200)
        #expect(try await Self.allSchemas(server) == [Self.schema("A"), Self.roleSchema, Self.userSchema])
        #expect(try await server.request("DELETE", "/schemas/A", master: true).status == 200)
        #expect(try await Self.allSchemas(server) == [Self.roleSchema, Self.userSchema])

        let first = try await server.create("HasAllPOD", Self.allPOD)
        let second = try await server.request("POST", "/classes/HasPointersAndRelations", json: [
            "aPointer": pointer("HasAllPOD", first), "aRelation": ["__op": "AddRelation", "objects": [pointer("HasAllPOD", first)]],
        ])
        #expect(second.status == 201)
        let pointersAndRelations = Self.schema("HasPointersAndRelations", [
            "aPointer": ["type": "Pointer", "targetClass": "HasAllPOD"], "aRelation": ["type": "Relation", "targetClass": "HasAllPOD"],
        ])
        #expect(try await Self.allSchemas(server) == [Self.allPODSchema, pointersAndRelations, Self.roleSchema, Self.userSchema])

        expectError(try await server.request("POST", "/schemas/_User", json: [:], master: true), 103, "Class _User already exists.")
        let added = try await server.request("PUT", "/schemas/_User", json: ["fields": ["newField": ["type": "String"]]], master: true)
        var withNewField = Self.userSchema.objectValue!
        withNewField["fields"] = .object(withNewField["fields"]!.objectValue!.merging(["newField": ["type": "String"]]) { $1 })
        #expect(added.json == .object(withNewField))
        #expect(try await server.request("GET", "/schemas/_User", master: true).json == .object(withNewField))
    }

    // spec: schemas.spec.js: cannot create index if field does not exist
    // spec: schemas.spec.js: can create index on default field
    // spec: schemas.spec.js: cannot create compound index if field does not exist
    // spec: schemas.spec.js: allows add index when you create a class
    // spec: schemas.spec.js: empty index returns nothing
    // spec: schemas.spec.js: lets you add indexes
    // spec: schemas.spec.js: lets you add multiple indexes
    // spec: schemas.spec.js: lets you delete indexes
    // spec: schemas.spec.js: lets you delete multiple indexes
    // spec: schemas.spec.js: lets you add and delete indexes
    // spec: schemas.spec.js: cannot delete index that does not exist
    // spec: schemas.spec.js: cannot update index that exist
    @Test func indexes() async throws {
        let server = try TestServer()
        func put(_ className: String, _ body: JSON) async throws -> TestResponse {
            try await server.request("PUT", "/schemas/\(className)", json: body, master: true)
        }
        #expect(try await server.request("POST", "/schemas/NewClass", json: [:], master: true).status == 200)
        expectError(try await put("NewClass", ["indexes": ["name1": ["aString": 1]]]), 102, "Field aString does not exist, cannot add index.")
        #expect(try await put("NewClass", ["indexes": ["name1": ["createdAt": 1]]]).json["indexes"]?["name1"] == ["createdAt": 1])
        expectError(try await put("NewClass", ["fields": ["aString": ["type": "String"]], "indexes": ["name2": ["aString": 1, "bString": 1]]]),
                    102, "Field bString does not exist, cannot add index.")

        let created = try await server.request("POST", "/schemas", json: [
            "className": "Indexed", "fields": ["aString": ["type": "String"]], "indexes": ["name1": ["aString": 1]],
        ], master: true)
        var expected = Self.schema("Indexed", ["aString": ["type": "String"]]).objectValue!
        expected["indexes"] = ["name1": ["aString": 1]]
        #expect(created.json == .object(expected))
        let empty = try await server.request("POST", "/schemas", json: [
            "className": "Unindexed", "fields": ["aString": ["type": "String"]], "indexes": [:],
        ], master: true)
        #expect(empty.json == Self.schema("Unindexed", ["aString": ["type": "String"]]))

        let strings: [String: JSON] = ["aString": ["type": "String"], "bString": ["type": "String"], "cString": ["type": "String"],
                                       "dString": ["type": "String"]]
        _ = try await server.request("POST", "/schemas/Multi", json: [:], master: true)
        let added = try await put("Multi", ["fields": .object(strings), "indexes": [
            "name1": ["aString": 1], "name2": ["bString": 1], "name3": ["cString": 1],
        ]])
        var multi = Self.schema("Multi", strings).objectValue!
        multi["indexes"] = ["_id_": ["_id": 1], "name1": ["aString": 1], "name2": ["bString": 1], "name3": ["cString": 1]]
        #expect(added.json == .object(multi))
        #expect(try await server.request("GET", "/schemas/Multi", master: true).json == .object(multi))
        let deleted = try await put("Multi", ["indexes": ["name1": ["__op": "Delete"], "name2": ["__op": "Delete"]]])
        #expect(deleted.json["indexes"] == ["_id_": ["_id": 1], "name3": ["cString": 1]])
        let again = try await put("Multi", ["indexes": ["name4": ["dString": 1]]])
        #expect(again.json["indexes"] == ["_id_": ["_id": 1], "name3": ["cString": 1], "name4": ["dString": 1]])
        #expect(try await put("Multi", ["indexes": ["name3": ["__op": "Delete"], "name4": ["__op": "Delete"]]]).json["indexes"] == ["_id_": ["_id": 1]])

        expectError(try await put("Multi", ["indexes": ["unknownIndex": ["__op": "Delete"]]]), 102, "Index unknownIndex does not exist, cannot delete.")
        _ = try await put("Multi", ["indexes": ["name1": ["aString": 1]]])
        expectError(try await put("Multi", ["indexes": ["name1": ["bString": 1]]]), 102, "Index name1 exists, cannot update.")
    }

    // spec: schemas.spec.js: validate CLP 1
    // spec: schemas.spec.js: validate CLP 2
    // spec: schemas.spec.js: validate CLP 3
    // spec: schemas.spec.js: validate CLP 4
    // spec: schemas.spec.js: regression test for #1991
    // spec: schemas.spec.js: can login when addFields is false (issue #1355)
    // spec: schemas.spec.js: can query with include and CLP (issue #2005)
    // spec: schemas.spec.js: regression test for #2246
    @Test func rolesAndPermissions() async throws {
        let server = try TestServer(arguments: fastHashing)
        func signUp(_ name: String) async throws -> (id: String, token: [String: String]) {
            let response = try await server.request("POST", "/users", json: ["username": .string(name), "password": .string(name)])
            return (response.json["objectId"]?.stringValue ?? "", ["X-Parse-Session-Token": response.json["sessionToken"]?.stringValue ?? ""])
        }
        let user = try await signUp("user"), admin = try await signUp("admin")
        let role = try await server.request("POST", "/roles", json: [
            "name": "admin", "ACL": [:], "users": ["__op": "AddRelation", "objects": [pointer("_User", admin.id)]],
        ], master: true)
        #expect(role.status == 201, "\(role.text)")
        func find(_ session: [String: String]) async throws -> TestResponse {
            try await server.request("GET", "/classes/AClass", headers: session)
        }
        let denied = "Permission denied for action find on class AClass."
        #expect(try await Self.setPermissions(server, "AClass", ["find": ["role:admin": true]]).status == 200)
        _ = try await server.request("POST", "/classes/AClass", json: [:], master: true)
        expectError(try await find(user.token), 119, denied)
        #expect(try await find(admin.token).json["results"]?.arrayValue?.count == 1)
        // A misspelt operation is refused and changes nothing.
        #expect(try await Self.setPermissions(server, "AClass", ["found": ["role:admin": true]], method: "PUT").status == 400)
        expectError(try await find(user.token), 119, denied)
        _ = try await Self.setPermissions(server, "AClass", ["find": ["role:admin": true, "*": true]], method: "PUT")
        #expect(try await find(user.token).json["results"]?.arrayValue?.count == 1)
        _ = try await Self.setPermissions(server, "AClass", ["find": ["role:admin": true]], method: "PUT")
        expectError(try await find(user.token), 119, denied)
        // null: back to the defaults.
        #expect(try await Self.setPermissions(server, "AClass", .null, method: "PUT").status == 200)
        #expect(try await find(user.token).json["results"]?.arrayValue?.count == 1)
        let reset = try await server.request("GET", "/schemas/AClass", master: true)
        #expect(reset.json["classLevelPermissions"] == Self.defaultPermissions, "\(reset.text)")

        // #1991: a role member deletes what only the role may delete.
        _ = try await Self.setPermissions(server, "AnObject", [
            "get": ["*": true], "find": ["*": true], "create": ["*": true], "update": ["role:admin": true], "delete": ["role:admin": true],
        ])
        let object = try await server.create("AnObject", [:])
        expectError(try await server.request("DELETE", "/classes/AnObject/\(object)", headers: user.token), 119)
        #expect(try await server.request("DELETE", "/classes/AnObject/\(object)", headers: admin.token).status == 200)
        #expect(try await server.results("AnObject").isEmpty)

        // #1355: signing up creates no field the class-level permissions would have to allow.
        _ = try await Self.setPermissions(server, "_User", ["create": ["*": true], "addField": [:]], method: "PUT")
        #expect(try await server.request("POST", "/users", json: ["username": "foo", "password": "bar"]).json["username"] == nil)
        #expect(try await server.request("POST", "/login", json: ["username": "foo", "password": "bar"]).json["username"] == "foo")
        // (Each spec case starts afresh: the permissions above locked every other _User operation to the master key.)
        #expect(try await Self.setPermissions(server, "_User", .null, method: "PUT").status == 200)

        // #2005: an included object whose class may not be found is still included (a get).
        _ = try await Self.setPermissions(server, "AnotherObject", [
            "get": ["*": true], "find": [:], "create": ["*": true], "update": ["*": true], "delete": ["*": true], "addField": ["*": true],
        ])
        let another = try await server.create("AnotherObject", [:])
        _ = try await server.create("Holder", ["anotherObject": pointer("AnotherObject", another)])
        let included = try await server.find("Holder", ["include": "anotherObject"])
        #expect(included.json["results"]?.arrayValue?.first?["anotherObject"]?["createdAt"] != nil, "\(included.text)")

        // #2246: readUserFields/writeUserFields on a profile do not hide it from its user's own include.
        let profile = try await server.request("POST", "/classes/UserProfile", json: ["user": pointer("_User", user.id)], headers: user.token)
        let profileId = try #require(profile.json["objectId"]?.stringValue)
        _ = try await server.request("PUT", "/users/\(user.id)", json: ["userProfile": pointer("UserProfile", profileId)], master: true)
        _ = try await Self.setPermissions(server, "UserProfile", ["readUserFields": ["user"], "writeUserFields": ["user"]], method: "PUT")
        let me = try await server.request("GET", "/users/\(user.id)", headers: user.token, query: ["include": "userProfile"])
        #expect(me.json["userProfile"]?["createdAt"] != nil, "\(me.text)")
    }

    // spec: schemas.spec.js: addField permission not required for adding a nested property
    // spec: schemas.spec.js: addField permission not required for modifying a nested property
    @Test func nestedKeysNeedNoAddField() async throws {
        let server = try TestServer()
        let created = try await server.request("POST", "/schemas/test_7371", json: [
            "fields": ["a": ["type": "Object"]],
            "classLevelPermissions": ["create": ["*": true], "update": ["*": true], "addField": [:]],
        ], master: true)
        #expect(created.status == 200, "\(created.text)")
        for start: JSON in [[:], ["b": 1]] {
            let id = try await server.create("test_7371", ["a": start])
            let update = try await server.request("PUT", "/classes/test_7371/\(id)", json: ["a.b": 2])
            #expect(update.status == 200, "\(update.text)")
            #expect(try await server.request("GET", "/classes/test_7371/\(id)", master: true).json["a"] == ["b": 2])
        }
    }

    // spec: schemas.spec.js: responds with all fields when getting incomplete schema
    // spec: schemas.spec.js: regression test for #4409 (indexes override the clp)
    @Test func systemClassFieldsAndPermissions() async throws {
        let server = try TestServer()
        let installation = try await server.request("POST", "/installations", json: ["installationId": "a1b2c3", "deviceType": "ios"])
        #expect(installation.status == 201, "\(installation.text)")
        let expected = Self.schema("_Installation", [
            "installationId": ["type": "String"], "deviceToken": ["type": "String"], "channels": ["type": "Array"],
            "deviceType": ["type": "String"], "pushType": ["type": "String"], "GCMSenderId": ["type": "String"],
            "timeZone": ["type": "String"], "badge": ["type": "Number"], "appIdentifier": ["type": "String"],
            "localeIdentifier": ["type": "String"], "appVersion": ["type": "String"], "appName": ["type": "String"],
            "parseVersion": ["type": "String"],
        ])
        var schema = try await server.request("GET", "/schemas/_Installation", master: true).json.objectValue ?? [:]
        schema["indexes"] = nil
        #expect(JSON.object(schema) == expected)

        let permissions: JSON = ["get": ["*": true], "find": ["*": true], "count": ["*": true], "create": ["*": true]]
        #expect(try await Self.setPermissions(server, "_Role", permissions, method: "PUT").status == 200)
        let locked: JSON = ["get": ["*": true], "find": ["*": true], "count": ["*": true], "create": ["*": true],
                            "update": [:], "delete": [:], "addField": [:], "protectedFields": [:]]
        #expect(try await server.request("GET", "/schemas/_Role", master: true).json["classLevelPermissions"] == locked)
        // What the write left out is the master key's: a client may create a role but not update it.
        let role = try await server.request("POST", "/roles", json: ["name": "Editors", "ACL": ["*": ["read": true, "write": true]]])
        let id = try #require(role.json["objectId"]?.stringValue)
        expectError(try await server.request("PUT", "/roles/\(id)", json: ["note": "x"]), 119)
    }

    // spec: schemas.spec.js: should reject creating class schema with field with invalid key
    // spec: schemas.spec.js: should reject creating invalid field name
    @Test func invalidFieldNames() async throws {
        let server = try TestServer()
        let schema = try await server.request("POST", "/schemas/AnObject", json: ["fields": ["1invalid": ["type": "String"]]], master: true)
        expectError(schema, 105, "invalid field name: 1invalid")
        expectError(try await server.request("POST", "/classes/AnObject", json: ["!12field": "field"]), 105)
    }
}
