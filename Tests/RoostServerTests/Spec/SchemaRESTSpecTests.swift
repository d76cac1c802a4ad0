import Foundation
import RoostCore
import Testing

/// Parse Server's spec/Schema.spec.js, the cases `SchemaSpecTests` does not carry: its `SchemaController` calls
/// (`validateObject`, `addClassIfNotExists`, `updateClass`, `deleteField`, `setPermissions`, `hasClass`, `getOneSchema`,
/// `buildMergedSchemaObject`) through the REST requests that reach them: saves to `/classes`, `POST`/`PUT /schemas/<C>`,
/// `GET /schemas/<C>`; and its "Class Level Permissions for requiredAuth" block.
@Suite struct SchemaRESTSpecTests {
    private static let invalidClassNameTail = ", classnames can only have alphanumeric characters and _, and must start with an alpha character "

    /// The spec's `hasAllPODobject()` as its save sends it (no ACL: readable by everyone).
    private static let allPOD: JSON = [
        "aNumber": 5, "aString": "string", "aBool": true, "aDate": ["__type": "Date", "iso": "2026-11-25T10:00:00.000Z"],
        "aObject": ["k1": "value", "k2": true, "k3": 5], "aArray": ["contents", true, 5],
        "aGeoPoint": ["__type": "GeoPoint", "latitude": 0, "longitude": 0], "aFile": ["__type": "File", "name": "f.txt"],
    ]

    // MARK: validateObject: the schema a save grows

    // spec: Schema.spec.js: can validate one object
    // spec: Schema.spec.js: can validate one object with dot notation
    // spec: Schema.spec.js: can validate two objects in a row
    // spec: Schema.spec.js: can validate Relation object
    // spec: Schema.spec.js: rejects inconsistent types
    // spec: Schema.spec.js: updates when new fields are added
    /// A save runs `validateObject`: it creates the class, adds the fields it brings and refuses a value of another type.
    @Test func savesAreValidatedAgainstTheSchema() async throws {
        let server = try TestServer()
        #expect(try await server.request("POST", "/classes/TestObject", json: ["a": 1, "b": "yo", "c": false]).status == 201)
        for body: JSON in [["x": true, "y": "yyy", "z": 0], ["x": false, "y": "YY", "z": 1]] {
            let saved = try await server.request("POST", "/classes/Foo", json: body)
            #expect(saved.status == 201, "\(saved.text)")
        }

        // `aObject.k1` is a key of the Object field `aObject`.
        let subDoc = try await server.create("TestObjectWithSubDoc", ["x": false, "y": "YY", "z": 1])
        let dotted = try await server.request("PUT", "/classes/TestObjectWithSubDoc/\(subDoc)", json: ["aObject.k1": "newValue"])
        #expect(dotted.status == 200, "\(dotted.text)")
        let subDocSchema = try await server.request("GET", "/schemas/TestObjectWithSubDoc", master: true)
        #expect(subDocSchema.json["fields"]?["aObject"] == ["type": "Object"], "\(subDocSchema.text)")
        #expect(try await server.fetch("TestObjectWithSubDoc", subDoc)["aObject"] == ["k1": "newValue"])

        // A Relation value makes a Relation field; a Pointer to the same class is then another type.
        let related = try await server.request("POST", "/classes/Stuff", json: ["aRelation": ["__type": "Relation", "className": "Stuff"]])
        #expect(related.status == 201, "\(related.text)")
        let stuff = try await server.request("GET", "/schemas/Stuff", master: true)
        #expect(stuff.json["fields"]?["aRelation"] == ["type": "Relation", "targetClass": "Stuff"], "\(stuff.text)")
        let relatedId = related.json["objectId"]?.stringValue ?? ""
        expectError(try await server.request("POST", "/classes/Stuff", json: ["aRelation": pointer("Stuff", relatedId)]),
                    111, "schema mismatch for Stuff.aRelation; expected Relation<Stuff> but got Pointer<Stuff>")

        _ = try await server.create("Bacon", ["bacon": 7])
        expectError(try await server.request("POST", "/classes/Bacon", json: ["bacon": "z"]), 111,
                    "schema mismatch for Bacon.bacon; expected Number but got String")
        _ = try await server.create("Sausage", ["bacon": 7])
        _ = try await server.create("Sausage", ["sausage": 8])
        expectError(try await server.request("POST", "/classes/Sausage", json: ["sausage": "ate"]), 111,
                    "schema mismatch for Sausage.sausage; expected Number but got String")
    }

    // spec: Schema.spec.js: yields a proper schema mismatch error (#2661)
    // spec: Schema.spec.js: yields a proper schema mismatch error bis (#2661)
    // spec: Schema.spec.js: yields a proper schema mismatch error ter (#2661)
    @Test func schemaMismatchesNameBothTypes() async throws {
        let server = try TestServer()
        let anObject = try await server.create("AnObject", [:])
        let another = try await server.create("AnotherObject", [:])
        let some = try await server.create("SomeObject", [:])
        let path = "/classes/AnObject/\(anObject)"
        #expect(try await server.request("PUT", path, json: ["pointer": pointer("AnotherObject", another)]).status == 200)
        expectError(try await server.request("PUT", path, json: ["pointer": pointer("SomeObject", some)]), 111,
                    "schema mismatch for AnObject.pointer; expected Pointer<AnotherObject> but got Pointer<SomeObject>")
        #expect(try await server.request("PUT", path, json: ["number": 1]).status == 200)
        expectError(try await server.request("PUT", path, json: ["number": pointer("SomeObject", some)]), 111,
                    "schema mismatch for AnObject.number; expected Number but got Pointer<SomeObject>")

        let other = try await server.create("OtherObject", [:])
        let otherPath = "/classes/OtherObject/\(other)"
        #expect(try await server.request("PUT", otherPath, json: ["pointer": pointer("SomeObject", some)]).status == 200)
        expectError(try await server.request("PUT", otherPath, json: ["pointer": 1]), 111,
                    "schema mismatch for OtherObject.pointer; expected Pointer<SomeObject> but got Number")
    }

    // MARK: addClassIfNotExists: POST /schemas

    // spec: Schema.spec.js: can add classes without needing an object
    // spec: Schema.spec.js: will create classes
    // spec: Schema.spec.js: will fail to create a class if that class was already created by an object
    // spec: Schema.spec.js: can check if a class exists
    // spec: Schema.spec.js: creates non-custom classes which include relation field
    @Test func classesAreCreatedWithoutAnObject() async throws {
        let server = try TestServer()
        let created = try await server.request("POST", "/schemas/NewClass", json: ["fields": ["foo": ["type": "String"]]], master: true)
        #expect(created.json == SchemasSpecTests.schema("NewClass", ["foo": ["type": "String"]]), "\(created.text)")

        let allTypes: [String: JSON] = [
            "aNumber": ["type": "Number"], "aString": ["type": "String"], "aBool": ["type": "Boolean"], "aDate": ["type": "Date"],
            "aObject": ["type": "Object"], "aArray": ["type": "Array"], "aGeoPoint": ["type": "GeoPoint"], "aFile": ["type": "File"],
            "aPointer": ["type": "Pointer", "targetClass": "ThisClassDoesNotExistYet"],
            "aRelation": ["type": "Relation", "targetClass": "AllTypes"], "aBytes": ["type": "Bytes"], "aPolygon": ["type": "Polygon"],
        ]
        let everyType = try await server.request("POST", "/schemas/AllTypes", json: ["fields": .object(allTypes)], master: true)
        #expect(everyType.json == SchemasSpecTests.schema("AllTypes", allTypes), "\(everyType.text)")

        _ = try await server.create("FromAnObject", ["foo": 7])
        expectError(try await server.request("POST", "/schemas/FromAnObject", json: ["fields": ["foo": ["type": "String"]]], master: true),
                    103, "Class FromAnObject already exists.")

        _ = try await server.request("POST", "/schemas/Empty", json: [:], master: true)
        #expect(try await server.request("GET", "/schemas/Empty", master: true).json == SchemasSpecTests.schema("Empty"))
        expectError(try await server.request("GET", "/schemas/NonexistantClass", master: true), 103, "Class NonexistantClass does not exist.")

        let role = try await server.request("GET", "/schemas/_Role", master: true)
        #expect(role.json == SchemasSpecTests.schema("_Role", [
            "name": ["type": "String"], "users": ["type": "Relation", "targetClass": "_User"],
            "roles": ["type": "Relation", "targetClass": "_Role"],
        ]), "\(role.text)")
    }

    // spec: Schema.spec.js: will resolve class creation races appropriately
    /// Two creations of one class at once: one gets the schema, the other the answer it would have had second.
    @Test func racingCreationsGetOneSchemaAndOneRefusal() async throws {
        let server = try TestServer()
        let body: JSON = ["fields": ["foo": ["type": "String"]]]
        async let first = server.request("POST", "/schemas/NewClass", json: body, master: true)
        async let second = server.request("POST", "/schemas/NewClass", json: body, master: true)
        let answers = try await [first, second]
        let won = answers.filter { $0.status == 200 }, lost = answers.filter { $0.status != 200 }
        #expect(won.count == 1 && lost.count == 1, "\(answers.map(\.text))")
        #expect(won.first?.json == SchemasSpecTests.schema("NewClass", ["foo": ["type": "String"]]))
        if let refused = lost.first { expectError(refused, 103, "Class NewClass already exists.") }
    }

    // spec-differs: Schema.spec.js: creates non-custom classes which include pointer field -- Roost's _Session is its own table, not a class: it is not declared through POST /schemas (103) and is listed by GET /schemas once a session exists, with the same fields Parse declares
    @Test func sessionClassIsNotDeclaredButListedOnceInUse() async throws {
        let server = try TestServer(arguments: fastHashing)
        let expected = SchemasSpecTests.schema("_Session", [
            "user": ["type": "Pointer", "targetClass": "_User"], "installationId": ["type": "String"], "sessionToken": ["type": "String"],
            "expiresAt": ["type": "Date"], "createdWith": ["type": "Object"],
        ])
        let created = try await server.request("POST", "/schemas/_Session", json: [:], master: true)
        #expect(created.status == 400 && created.json["code"] == 103, "\(created.text)")
        let account = try await server.signUpAccount("after-declaring")
        let me = try await server.request("GET", "/sessions/me", headers: ["X-Parse-Session-Token": account.token])
        #expect(me.status == 200 && me.json["sessionToken"]?.stringValue == account.token, "\(me.text)")
        let listed = try await server.request("GET", "/schemas/_Session", master: true)
        #expect(listed.json["fields"] == expected["fields"], "\(listed.text)")
    }

    // spec: Schema.spec.js: refuses to create classes with invalid names
    // spec: Schema.spec.js: refuses to add fields with invalid names
    // spec: Schema.spec.js: refuses to explicitly create the default fields for custom classes
    // spec: Schema.spec.js: refuses to add fields with invalid types
    // spec: Schema.spec.js: refuses to add fields with invalid pointer types
    // spec: Schema.spec.js: refuses to add fields with invalid Relation type
    // spec: Schema.spec.js: refuses to add fields with unknown types
    // spec: Schema.spec.js: refuses to create two geopoints
    @Test func invalidClassesAndFieldsAreRefused() async throws {
        let server = try TestServer()
        expectError(try await server.request("POST", "/schemas/_InvalidName", json: ["fields": ["foo": ["type": "String"]]], master: true),
                    103, "Invalid classname: _InvalidName" + Self.invalidClassNameTail)
        let refusals: [(JSON, Int, String)] = [
            (["0InvalidName": ["type": "String"]], 105, "invalid field name: 0InvalidName"),
            (["objectId": ["type": "String"]], 136, "field objectId cannot be added"),
            (["foo": ["type": 7]], 107, "invalid JSON"),
            (["foo": ["type": "Pointer"]], 135, "type Pointer needs a class name"),
            (["foo": ["type": "Relation", "uselessKey": 7]], 135, "type Relation needs a class name"),
            (["foo": ["type": "Unknown"]], 111, "invalid field type: Unknown"),
            (["geo1": ["type": "GeoPoint"], "geo2": ["type": "GeoPoint"]], 111,
             "currently, only one GeoPoint field may exist in an object. Adding geo2 when geo1 already exists."),
        ]
        for (fields, code, message) in refusals {
            expectError(try await server.request("POST", "/schemas/NewClass", json: ["fields": fields], master: true), code, message)
        }
        // None of them made the class.
        expectError(try await server.request("GET", "/schemas/NewClass", master: true), 103, "Class NewClass does not exist.")
    }

    // MARK: updateClass and setPermissions: PUT /schemas

    // spec: Schema.spec.js: can update classes without needing an object
    // spec: Schema.spec.js: can update class level permission
    @Test func classesAreUpdatedWithoutAnObject() async throws {
        let server = try TestServer()
        _ = try await server.create("NewClass", ["foo": 2])
        let added: [String: JSON] = [
            "fooOne": ["type": "Number"], "fooTwo": ["type": "Array"], "fooThree": ["type": "Date"], "fooFour": ["type": "Object"],
            "fooFive": ["type": "Relation", "targetClass": "_User"], "fooSix": ["type": "String"], "fooSeven": ["type": "Object"],
            "fooEight": ["type": "String"], "fooNine": ["type": "String"], "fooTeen": ["type": "Number"], "fooEleven": ["type": "String"],
            "fooTwelve": ["type": "String"], "fooThirteen": ["type": "String"], "fooFourteen": ["type": "String"],
            "fooFifteen": ["type": "String"], "fooSixteen": ["type": "String"], "fooEighteen": ["type": "String"],
            "fooNineteen": ["type": "String"],
        ]
        // The spec's updateClass is given `indexes: {}`: the class then lists Parse's `_id_`.
        let updated = try await server.request("PUT", "/schemas/NewClass", json: [
            "fields": .object(added), "classLevelPermissions": SchemasSpecTests.defaultPermissions, "indexes": [:],
        ], master: true)
        var expected = SchemasSpecTests.schema("NewClass", added.merging(["foo": ["type": "Number"]]) { $1 }).objectValue!
        expected["indexes"] = ["_id_": ["_id": 1]]
        #expect(updated.json == .object(expected), "\(updated.text)")

        _ = try await server.create("Locked", ["foo": 2])
        let permissions: JSON = [
            "find": [:], "get": ["*": true], "count": [:], "create": ["*": true], "update": [:], "delete": ["*": true], "addField": [:],
            "protectedFields": ["*": []],
        ]
        let locked = try await server.request("PUT", "/schemas/Locked", json: ["classLevelPermissions": permissions], master: true)
        #expect(locked.json["classLevelPermissions"] == permissions, "\(locked.text)")
    }

    // spec: Schema.spec.js: can merge schemas
    // spec: Schema.spec.js: can merge deletions
    /// Parse's `buildMergedSchemaObject`: the fields sent are merged into the class's, deletions taken out.
    @Test func fieldsSentAreMergedIntoTheClass() async throws {
        let server = try TestServer()
        _ = try await server.request("POST", "/schemas/SomeClass", json: ["fields": ["someType": ["type": "Number"]]], master: true)
        let merged = try await server.request("PUT", "/schemas/SomeClass", json: ["fields": ["newType": ["type": "Number"]]], master: true)
        #expect(merged.json == SchemasSpecTests.schema("SomeClass", ["someType": ["type": "Number"], "newType": ["type": "Number"]]),
                "\(merged.text)")

        _ = try await server.request("POST", "/schemas/OtherClass", json: ["fields": [
            "someType": ["type": "Number"], "outDatedType": ["type": "String"]]], master: true)
        let deleted = try await server.request("PUT", "/schemas/OtherClass", json: ["fields": [
            "newType": ["type": "GeoPoint"], "outDatedType": ["__op": "Delete"]]], master: true)
        #expect(deleted.json == SchemasSpecTests.schema("OtherClass", ["someType": ["type": "Number"], "newType": ["type": "GeoPoint"]]),
                "\(deleted.text)")
    }

    // spec: Schema.spec.js: refuses to add CLP with incorrect find
    // spec: Schema.spec.js: refuses to add CLP when incorrectly sending a string to protectedFields object value instead of an array
    @Test func malformedPermissionsAreRefused() async throws {
        let server = try TestServer()
        _ = try await server.create("NewClass", [:])
        var permissions = openPermissions(["find": ["*": false], "protectedFields": ["*": ["email"]]]).objectValue!
        permissions.removeValue(forKey: "count")  // The spec's has none.
        expectError(try await server.request("PUT", "/schemas/NewClass", json: ["classLevelPermissions": .object(permissions)], master: true),
                    107, "'false' is not a valid value for class level permissions find:*:false")
        permissions = openPermissions(["protectedFields": ["*": "email"]]).objectValue!
        permissions.removeValue(forKey: "count")
        expectError(try await server.request("PUT", "/schemas/NewClass", json: ["classLevelPermissions": .object(permissions)], master: true),
                    107, "'email' is not a valid value for protectedFields[*] - expected an array.")
        // The class keeps its permissions.
        let kept = try await server.request("GET", "/schemas/NewClass", master: true)
        #expect(kept.json["classLevelPermissions"] == SchemasSpecTests.defaultPermissions, "\(kept.text)")
    }

    // spec: Schema.spec.js: class-level permissions test find
    // spec: Schema.spec.js: class-level permissions test user
    // spec: Schema.spec.js: class-level permissions test get
    // spec: Schema.spec.js: class-level permissions test count
    /// `setPermissions` with some operations only: those left out are the master key's.
    @Test func permissionsSetThroughSchemasApply() async throws {
        let server = try TestServer(arguments: fastHashing)
        let user = try await server.signUpAccount("clp-user")
        func declare(_ className: String, _ permissions: JSON) async throws {
            _ = try await server.request("POST", "/schemas/\(className)", json: ["fields": ["foo": ["type": "String"]]], master: true)
            let set = try await server.request("PUT", "/schemas/\(className)", json: ["classLevelPermissions": permissions], master: true)
            #expect(set.status == 200, "\(set.text)")
        }

        try await declare("StuffFind", ["find": [:]])
        expectError(try await server.query("StuffFind"), 119, "Permission denied for action find on class StuffFind.")

        try await declare("StuffUser", ["find": .object([user.id: true])])
        let mine = try await server.query("StuffUser", token: user.token)
        #expect(mine.status == 200 && mine.json["results"] == [], "\(mine.text)")

        try await declare("StuffGet", ["create": ["*": true], "find": [:], "get": .object([user.id: true])])
        let id = try await server.create("StuffGet", ["foo": "bar"], token: user.token)
        expectError(try await server.query("StuffGet", token: user.token), 119, "Permission denied for action find on class StuffGet.")
        let got = try await server.request("GET", "/classes/StuffGet/\(id)", headers: ["X-Parse-Session-Token": user.token])
        #expect(got.status == 200 && got.json["foo"] == "bar", "\(got.text)")

        try await declare("StuffCount", ["create": ["*": true], "find": ["*": true], "count": [:]])
        _ = try await server.create("StuffCount", ["foo": "bar"])
        #expect(try await server.queryResults("StuffCount").count == 1)
        expectError(try await server.query("StuffCount", ["count": 1, "limit": 0]), 119, "Permission denied for action count on class StuffCount.")
    }

    // MARK: deleteField: PUT /schemas with {"__op": "Delete"}

    // spec: Schema.spec.js: refuses to delete fields from invalid class names
    // spec: Schema.spec.js: refuses to delete fields from nonexistant classes
    // spec: Schema.spec.js: refuses to delete fields that dont exist
    @Test func deletingAFieldNeedsTheClassAndTheField() async throws {
        let server = try TestServer()
        let deletion: JSON = ["fields": ["field": ["__op": "Delete"]]]
        expectError(try await server.request("PUT", "/schemas/invalid%20class%20name", json: deletion, master: true),
                    103, "Class invalid class name does not exist.")
        expectError(try await server.request("PUT", "/schemas/NoClass", json: deletion, master: true), 103, "Class NoClass does not exist.")
        _ = try await server.create("HasAllPOD", Self.allPOD)
        expectError(try await server.request("PUT", "/schemas/HasAllPOD", json: ["fields": ["missingField": ["__op": "Delete"]]], master: true),
                    255, "Field missingField does not exist, cannot delete.")
    }

    // spec: Schema.spec.js: drops related collection when deleting relation field
    // spec: Schema.spec.js: can delete relation field when related _Join collection not exist
    /// A relation deleted takes its members with it: declared again, it is empty.
    @Test func deletingARelationDropsItsMembers() async throws {
        let server = try TestServer()
        let member = try await server.create("HasAllPOD", Self.allPOD)
        let owner = try await server.create("HasPointersAndRelations", [
            "aPointer": pointer("HasAllPOD", member),
            "aRelation": ["__op": "AddRelation", "objects": [pointer("HasAllPOD", member)]],
        ])
        let related: JSON = ["$relatedTo": ["object": pointer("HasPointersAndRelations", owner), "key": "aRelation"]]
        #expect(try await server.results("HasAllPOD", ["where": related]).compactMap { $0["objectId"]?.stringValue } == [member])
        let deleted = try await server.request("PUT", "/schemas/HasPointersAndRelations", json: ["fields": ["aRelation": ["__op": "Delete"]]],
                                               master: true)
        #expect(deleted.status == 200 && deleted.json["fields"]?["aRelation"] == nil, "\(deleted.text)")
        _ = try await server.request("PUT", "/schemas/HasPointersAndRelations", json: ["fields": [
            "aRelation": ["type": "Relation", "targetClass": "HasAllPOD"]]], master: true)
        #expect(try await server.results("HasAllPOD", ["where": related]).isEmpty)

        // A relation that never had a member is deleted as well.
        let relationField: [String: JSON] = ["relationField": ["type": "Relation", "targetClass": "_User"]]
        let created = try await server.request("POST", "/schemas/NewClass", json: ["fields": .object(relationField)], master: true)
        #expect(created.json == SchemasSpecTests.schema("NewClass", relationField), "\(created.text)")
        let emptied = try await server.request("PUT", "/schemas/NewClass", json: ["fields": ["relationField": ["__op": "Delete"]]], master: true)
        #expect(emptied.status == 200, "\(emptied.text)")
        #expect(try await server.request("GET", "/schemas/NewClass", master: true).json == SchemasSpecTests.schema("NewClass"))
    }

    // spec: Schema.spec.js: can delete string fields and resave as number field
    // spec: Schema.spec.js: can delete pointer fields and resave as string
    /// A field deleted leaves every object, and may come back with another type.
    @Test func deletedFieldsComeBackWithAnotherType() async throws {
        let server = try TestServer()
        let ids = try await server.createAll("HasAllPOD", [Self.allPOD, Self.allPOD])
        let deleted = try await server.request("PUT", "/schemas/HasAllPOD", json: ["fields": ["aString": ["__op": "Delete"]]], master: true)
        #expect(deleted.status == 200, "\(deleted.text)")
        #expect(try await server.fetch("HasAllPOD", ids[0])["aString"] == nil)
        try await server.update("HasAllPOD", ids[0], ["aString": ["not a string", "this time"]])
        #expect(try await server.fetch("HasAllPOD", ids[0])["aString"] == ["not a string", "this time"])
        #expect(try await server.fetch("HasAllPOD", ids[1])["aString"] == nil)
        #expect(try await server.request("GET", "/schemas/HasAllPOD", master: true).json["fields"]?["aString"] == ["type": "Array"])

        let id = try await server.create("NewClass", [:])
        try await server.update("NewClass", id, ["aPointer": pointer("NewClass", id)])
        #expect(try await server.fetch("NewClass", id)["aPointer"] == pointer("NewClass", id))
        _ = try await server.request("PUT", "/schemas/NewClass", json: ["fields": ["aPointer": ["__op": "Delete"]]], master: true)
        #expect(try await server.fetch("NewClass", id)["aPointer"] == nil)
        try await server.update("NewClass", id, ["aPointer": "Now a string"])
        #expect(try await server.fetch("NewClass", id)["aPointer"] == "Now a string")
    }

    // MARK: Class Level Permissions for requiredAuth

    // spec: Schema.spec.js: required auth test find
    // spec: Schema.spec.js: required auth test find authenticated
    // spec: Schema.spec.js: required auth should allow create authenticated
    // spec: Schema.spec.js: required auth should reject create when not authenticated
    // spec: Schema.spec.js: required auth test create/get/update/delete authenticated
    // spec: Schema.spec.js: required auth test get not authenticated
    // spec: Schema.spec.js: required auth test find not authenticated
    @Test func requiresAuthenticationLetsAnyUserIn() async throws {
        let server = try TestServer(arguments: fastHashing)
        let needsUser = "Permission denied, user needs to be authenticated."
        let auth: JSON = ["requiresAuthentication": true]
        func declare(_ className: String, _ permissions: JSON) async throws {
            _ = try await server.request("POST", "/schemas/\(className)", json: ["fields": ["foo": ["type": "String"]]], master: true)
            let set = try await server.request("PUT", "/schemas/\(className)", json: ["classLevelPermissions": permissions], master: true)
            #expect(set.status == 200, "\(set.text)")
        }
        try await declare("FindNeedsUser", ["find": auth])
        expectError(try await server.query("FindNeedsUser"), 101, needsUser)
        let user = try await server.signUpAccount("hello", password: "world")
        let found = try await server.query("FindNeedsUser", token: user.token)
        #expect(found.status == 200 && found.json["results"] == [], "\(found.text)")

        try await declare("CreateNeedsUser", ["create": auth])
        _ = try await server.create("CreateNeedsUser", ["foo": "bar"], token: user.token)
        expectError(try await server.request("POST", "/classes/CreateNeedsUser", json: ["foo": "bar"]), 101, needsUser)

        try await declare("AllNeedUser", ["create": auth, "get": auth, "delete": auth, "update": auth])
        let session = ["X-Parse-Session-Token": user.token]
        let id = try await server.create("AllNeedUser", ["foo": "bar"], token: user.token)
        #expect(try await server.request("GET", "/classes/AllNeedUser/\(id)", headers: session).json["foo"] == "bar")
        #expect(try await server.request("PUT", "/classes/AllNeedUser/\(id)", json: ["foo": "baz"], headers: session).status == 200)
        #expect(try await server.request("DELETE", "/classes/AllNeedUser/\(id)", headers: session).status == 200)

        try await declare("GetNeedsUser", ["get": auth, "create": ["*": true]])
        let unread = try await server.create("GetNeedsUser", ["foo": "bar"])
        expectError(try await server.request("GET", "/classes/GetNeedsUser/\(unread)"), 101, needsUser)

        try await declare("OnlyGet", ["find": auth, "create": ["*": true], "get": ["*": true]])
        let readable = try await server.create("OnlyGet", ["foo": "bar"])
        #expect(try await server.request("GET", "/classes/OnlyGet/\(readable)").json["foo"] == "bar")
        expectError(try await server.query("OnlyGet"), 101, needsUser)
    }

    // spec: Schema.spec.js: required auth test create/get/update/delete with roles (#3753)
    @Test func requiresAuthenticationBesideARole() async throws {
        let server = try TestServer(arguments: fastHashing)
        _ = try await server.request("POST", "/schemas/Stuff", json: ["fields": ["foo": ["type": "String"]]], master: true)
        let admin: JSON = ["role:admin": true], userOrAdmin: JSON = ["requiresAuthentication": true, "role:admin": true]
        _ = try await server.request("PUT", "/schemas/Stuff", json: ["classLevelPermissions": [
            "find": userOrAdmin, "create": admin, "update": admin, "delete": admin, "get": userOrAdmin]], master: true)
        let id = try await server.create("Stuff", ["foo": "bar"], token: nil, master: true)
        #expect(try await server.request("GET", "/classes/Stuff/\(id)").status != 200)
        #expect(try await server.query("Stuff").status != 200)
        let user = try await server.signUpAccount("user", password: "password")
        let got = try await server.request("GET", "/classes/Stuff/\(id)", headers: ["X-Parse-Session-Token": user.token])
        #expect(got.json["foo"] == "bar", "\(got.text)")
        #expect(try await server.queryResults("Stuff", token: user.token).count == 1)
    }
}
