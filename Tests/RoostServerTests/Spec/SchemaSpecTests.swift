import Foundation
import RoostCore
import Testing

/// Parse Server's spec/Schema.spec.js (its `SchemaController`), through the REST calls that reach the same code:
/// `POST`/`PUT /schemas/<C>`. (spec/schemas.spec.js, the router's own, is `SchemasSpecTests`.)
@Suite struct SchemaSpecTests {
    private let invalidClassName = "Invalid classname: not a valid class name, classnames can only have alphanumeric characters and _, and must start with an alpha character "

    // spec: Schema.spec.js: refuses to explicitly create the default fields for non-custom classes
    // spec: Schema.spec.js: creates the default fields for non-custom classes
    @Test func installationsSchemaIsCreatedWithItsDefaultFields() async throws {
        let server = try TestServer()
        expectError(try await server.request("POST", "/schemas/_Installation", json: ["fields": ["localeIdentifier": ["type": "String"]]], master: true),
                    136, "field localeIdentifier cannot be added")
        let created = try await server.request("POST", "/schemas/_Installation", json: ["fields": ["foo": ["type": "Number"]]], master: true)
        #expect(created.status == 200, "\(created.text)")
        let fields = try #require(created.json["fields"]?.objectValue)
        #expect(fields["foo"] == ["type": "Number"] && fields["localeIdentifier"] == ["type": "String"] && fields["channels"] == ["type": "Array"])
        #expect(fields.count == 18, "\(fields.keys.sorted())")
        #expect(created.json["classLevelPermissions"]?["find"] == ["*": true])
        expectError(try await server.request("POST", "/schemas/_Installation", json: [:], master: true), 103, "Class _Installation already exists.")
        // Devices are saved into it as usual.
        let device = try await server.request("POST", "/installations", json: ["installationId": "i-1", "deviceType": "ios", "foo": 3])
        #expect(device.status == 201, "\(device.text)")
    }

    // spec: Schema.spec.js: refuses to add fields with invalid pointer target
    // spec: Schema.spec.js: refuses to add fields with invalid relation target
    // spec: Schema.spec.js: refuses to add fields with uncreatable pointer target class
    // spec: Schema.spec.js: refuses to add fields with uncreatable relation target class
    @Test func pointerAndRelationTargetsAreChecked() async throws {
        let server = try TestServer()
        for type in ["Pointer", "Relation"] {
            let declare = { (target: JSON) in
                try await server.request("POST", "/schemas/NewClass", json: ["fields": ["foo": ["type": .string(type), "targetClass": target]]], master: true)
            }
            expectError(try await declare(7), 107, "invalid JSON")
            expectError(try await declare(""), 135, "type \(type) needs a class name")
            expectError(try await declare("not a valid class name"), 103, invalidClassName)
            expectError(try await declare("_Bogus"), 103)
        }
        #expect(try await server.request("GET", "/schemas/NewClass", master: true).status == 400)
        // Parse's other system classes are valid targets.
        let pushes = try await server.request("POST", "/schemas/NewClass", json: ["fields": ["push": ["type": "Pointer", "targetClass": "_PushStatus"]]],
                                             master: true)
        #expect(pushes.json["fields"]?["push"] == ["type": "Pointer", "targetClass": "_PushStatus"], "\(pushes.text)")
    }

    // spec: Schema.spec.js: refuses to delete the default fields
    @Test func defaultFieldsCannotBeDeleted() async throws {
        let server = try TestServer()
        _ = try await server.create("Custom", ["a": 1])
        let attempts: [(String, String)] = [("_User", "username"), ("_User", "emailVerified"), ("_User", "password"), ("_Role", "name"),
                                            ("Custom", "objectId"), ("Custom", "createdAt"), ("Custom", "ACL")]
        for (className, field) in attempts {
            expectError(try await server.request("PUT", "/schemas/\(className)", json: ["fields": [field: ["__op": "Delete"]]], master: true),
                        136, "field \(field) cannot be changed")
        }
        let user = try await server.request("GET", "/schemas/_User", master: true)
        #expect(user.json["fields"]?["username"] == ["type": "String"], "\(user.text)")
        expectError(try await server.request("PUT", "/schemas/Custom", json: ["fields": ["nothing": ["__op": "Delete"]]], master: true),
                    255, "Field nothing does not exist, cannot delete.")
    }

    // spec: Schema.spec.js: ignore default field when merge with system class
    @Test func fieldsSentAgainWithTheirTypeAreKept() async throws {
        let server = try TestServer()
        let merged = try await server.request("PUT", "/schemas/_User", json: ["fields": [
            "emailVerified": ["type": "Boolean"], "customField": ["type": "String"]]], master: true)
        #expect(merged.status == 200 && merged.json["fields"]?["customField"] == ["type": "String"], "\(merged.text)")
        _ = try await server.create("Custom", ["n": 1, "owner": ["__type": "Pointer", "className": "_User", "objectId": "u1"]])
        // A fetched schema's fields sent back whole: nothing changes.
        let fetched = try await server.request("GET", "/schemas/Custom", master: true)
        let again = try await server.request("PUT", "/schemas/Custom", json: ["fields": fetched.json["fields"] ?? [:]], master: true)
        #expect(again.status == 200 && again.json["fields"] == fetched.json["fields"], "\(again.text)")
        expectError(try await server.request("PUT", "/schemas/Custom", json: ["fields": ["n": ["type": "String"]]], master: true),
                    255, "Field n exists, cannot update.")
        expectError(try await server.request("PUT", "/schemas/Custom", json: ["fields": ["owner": ["type": "Pointer", "targetClass": "_Role"]]],
                                             master: true),
                    111, "schema mismatch for Custom.owner; expected Pointer<_User> but got Pointer<_Role>")
    }

    // spec: Schema.spec.js: properly handles volatile _Schemas
    @Test func volatileClassesHaveFixedSchemas() async throws {
        let server = try TestServer()
        let push = try await server.request("GET", "/schemas/_PushStatus", master: true)
        #expect(push.status == 200, "\(push.text)")
        #expect(push.json["className"] == "_PushStatus" && push.json["classLevelPermissions"] == [:])
        #expect(push.json["fields"]?["numSent"] == ["type": "Number"] && push.json["fields"]?["objectId"] == ["type": "String"])
        #expect(try await server.request("GET", "/schemas/_JobStatus", master: true).json["fields"]?["finishedAt"] == ["type": "Date"])
        expectError(try await server.request("POST", "/schemas/_Audience", json: [:], master: true), 103, "Class _Audience already exists.")
        // An audience saved keeps `_Audience` out of the list, as Parse stores no schema for it.
        _ = try await server.create("_Audience", ["name": "All", "query": "{}"])
        let listed = try await server.request("GET", "/schemas", master: true)
        let names = listed.json["results"]?.arrayValue?.compactMap { $0["className"]?.stringValue } ?? []
        #expect(names == ["_Role", "_User"], "\(listed.text)")
    }

    // spec: schemas.spec.js: try to set a relation field as a required field
    // spec: schemas.spec.js: try to set a relation field with a default value
    // spec: schemas.spec.js: try to update schemas with a relation field with options
    // spec: schemas.spec.js: validated the data type of default values when creating a new class
    // spec: schemas.spec.js: validated the data type of default values when adding new fields
    @Test func fieldOptionsAreChecked() async throws {
        let server = try TestServer()
        let relation: JSON = ["type": "Relation", "targetClass": "SomeClass"]
        for options: [String: JSON] in [["required": true], ["defaultValue": ["__type": "Relation", "className": "_User"]]] {
            let declared = relation.objectValue!.merging(options) { $1 }
            expectError(try await server.request("POST", "/schemas", json: ["className": "WithRelation", "fields": ["relation": .object(declared)]],
                                                 master: true), 111)
        }
        expectError(try await server.request("POST", "/schemas", json: ["className": "NewClassWithValidation",
                                                                         "fields": ["foo": ["type": "String", "defaultValue": 10]]], master: true),
                    111, "schema mismatch for NewClassWithValidation.foo default value; expected String but got Number")
        let created = try await server.request("POST", "/schemas", json: ["className": "NewClassWithValidation",
                                                                         "fields": ["foo": ["type": "String", "defaultValue": "some value"]]], master: true)
        #expect(created.json["fields"]?["foo"] == ["type": "String", "defaultValue": "some value"], "\(created.text)")
        expectError(try await server.request("PUT", "/schemas/NewClassWithValidation", json: ["fields": ["foo2": ["type": "String", "defaultValue": 10]]],
                                             master: true),
                    111, "schema mismatch for NewClassWithValidation.foo2 default value; expected String but got Number")
        expectError(try await server.request("PUT", "/schemas/NewClassWithValidation", json: ["fields": ["relation": .object(relation.objectValue!.merging(["required": true]) { $1 })]],
                                             master: true), 111)
    }

    // spec: schemas.spec.js: should validate required fields
    @Test func requiredFieldsAndDefaultValuesApplyToSaves() async throws {
        let server = try TestServer()
        _ = try await server.request("POST", "/schemas/NewClass", json: [:], master: true)
        let declared = try await server.request("PUT", "/schemas/NewClass", json: ["fields": [
            "newRequiredField": ["type": "String", "required": true],
            "newRequiredFieldWithDefaultValue": ["type": "String", "required": true, "defaultValue": "some value"],
            "newNotRequiredField": ["type": "String", "required": false],
            "newNotRequiredFieldWithDefaultValue": ["type": "String", "required": false, "defaultValue": "some value"],
            "newRegularFieldWithDefaultValue": ["type": "String", "defaultValue": "some value"],
            "newRegularField": ["type": "String"],
        ]], master: true)
        #expect(declared.json["fields"]?["newRequiredFieldWithDefaultValue"] == ["type": "String", "required": true, "defaultValue": "some value"],
                "\(declared.text)")
        expectError(try await server.request("POST", "/classes/NewClass", json: [:]), 142, "newRequiredField is required")
        let created = try await server.request("POST", "/classes/NewClass", json: ["newRequiredField": "some value"])
        #expect(created.status == 201, "\(created.text)")
        // The defaults come back with the create's answer, as a trigger's changes do.
        #expect(created.json["newRequiredFieldWithDefaultValue"] == "some value" && created.json["newNotRequiredFieldWithDefaultValue"] == "some value"
                && created.json["newRegularFieldWithDefaultValue"] == "some value" && created.json["newNotRequiredField"] == nil, "\(created.text)")
        let id = try #require(created.json["objectId"]?.stringValue)
        let path = "/classes/NewClass/\(id)"
        for value: JSON in [.null, ["__op": "Delete"]] {
            expectError(try await server.request("PUT", path, json: ["newRequiredField": value]), 142, "newRequiredField is required")
        }
        for value: JSON in [["__op": "Delete"], ""] {
            expectError(try await server.request("PUT", path, json: ["newRequiredFieldWithDefaultValue": value]), 142,
                        "newRequiredFieldWithDefaultValue is required")
        }
        let updated = try await server.request("PUT", path, json: ["newRequiredFieldWithDefaultValue": "some value2", "newNotRequiredField": "",
                                                                    "newNotRequiredFieldWithDefaultValue": .null, "newRegularField": ["__op": "Delete"]])
        #expect(updated.status == 200, "\(updated.text)")
        let read = try await server.request("GET", path)
        #expect(read.json["newRequiredField"] == "some value" && read.json["newRequiredFieldWithDefaultValue"] == "some value2"
                && read.json["newNotRequiredField"] == "" && read.json["newNotRequiredFieldWithDefaultValue"] == .null
                && read.json["newRegularField"] == nil, "\(read.text)")
        let given = try await server.request("POST", "/classes/NewClass", json: ["newRequiredField": "v3", "newRequiredFieldWithDefaultValue": "v3",
                                                                               "newNotRequiredFieldWithDefaultValue": "v3"])
        #expect(given.status == 201 && given.json["newNotRequiredFieldWithDefaultValue"] == nil, "\(given.text)")
        let stored = try await server.request("GET", "/classes/NewClass/\(given.json["objectId"]?.stringValue ?? "")")
        #expect(stored.json["newRequiredFieldWithDefaultValue"] == "v3" && stored.json["newNotRequiredFieldWithDefaultValue"] == "v3")
        // Sending a field back as fetched keeps its options; sending it without them drops them (Parse's updateFieldOptions).
        let fetched = try await server.request("GET", "/schemas/NewClass", master: true)
        #expect(try await server.request("PUT", "/schemas/NewClass", json: ["fields": fetched.json["fields"] ?? [:]], master: true).json["fields"]
                == fetched.json["fields"])
        _ = try await server.request("PUT", "/schemas/NewClass", json: ["fields": ["newRequiredField": ["type": "String"]]], master: true)
        #expect(try await server.request("POST", "/classes/NewClass", json: [:]).status == 201)
    }

    /// Users' own fields take options too (a sign-up is a create, a user update an update); their credentials are not
    /// changes and keep their own rules.
    @Test func userFieldsTakeOptions() async throws {
        let server = try TestServer(arguments: fastHashing)
        _ = try await server.request("PUT", "/schemas/_User", json: ["fields": [
            "nickname": ["type": "String", "required": true], "level": ["type": "Number", "defaultValue": 1]]], master: true)
        expectError(try await server.request("POST", "/users", json: ["username": "ann", "password": "pw"]), 142, "nickname is required")
        let ann = try await server.request("POST", "/users", json: ["username": "ann", "password": "pw", "nickname": "A"])
        #expect(ann.status == 201 && ann.json["level"] == 1 && ann.json["sessionToken"] != nil, "\(ann.text)")
        let id = ann.json["objectId"]?.stringValue ?? "", token = ann.json["sessionToken"]?.stringValue ?? ""
        expectError(try await server.request("PUT", "/users/\(id)", json: ["nickname": ""], headers: ["X-Parse-Session-Token": token]),
                    142, "nickname is required")
        let me = try await server.request("GET", "/users/me", headers: ["X-Parse-Session-Token": token])
        #expect(me.json["nickname"] == "A" && me.json["level"] == 1, "\(me.text)")
    }
}
