@testable import RoostServer
import Foundation
import RoostCore
import Testing

/// Parse Server's spec/DefinedSchemas.spec.js over REST: each `new DefinedSchemas(options).execute()` of the spec is a
/// start of the server on the same data with `--schema` naming a file of those options (Parse applies its `schema`
/// option at start), and each `new Parse.Schema(c).get()` a `GET /schemas/<c>`. The migration functions
/// (`beforeMigration`, `afterMigration`), the logger and cache adapter spies have no counterpart.
@Suite struct DefinedSchemasSpecTests {
    private static let defaultFields: JSON = [
        "objectId": ["type": "String"], "createdAt": ["type": "Date"], "updatedAt": ["type": "Date"], "ACL": ["type": "ACL"],
    ]

    /// The servers started so far on one data directory (kept until the test ends: the first one's goes with it).
    private final class App {
        private var servers: [TestServer] = []
        private var starts = 0

        /// Stops the running server and starts one on the same data with `options` as its `--schema` file.
        @discardableResult
        func start(_ options: JSON) throws -> TestServer {
            let directory = servers.first?.dataDirectory ?? FileManager.default.temporaryDirectory
                .appendingPathComponent("roost-test-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            starts += 1
            let file = directory.appendingPathComponent("schema-\(starts).json")
            try Data(options.encoded()).write(to: file)
            _ = servers.last?.stop()
            let server = try TestServer(arguments: fastHashing + ["--schema", file.path], dataDirectory: directory)
            servers.append(server)
            return server
        }

        var server: TestServer { servers[servers.count - 1] }

        func schema(_ className: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> JSON {
            let response = try await server.request("GET", "/schemas/\(className)", master: true)
            #expect(response.status == 200, "\(response.text)", sourceLocation: sourceLocation)
            return response.json
        }

        /// The class's indexes without the primary key's (the spec's `cleanUpIndexes`).
        func indexes(_ className: String) async throws -> JSON? {
            guard var indexes = try await schema(className)["indexes"]?.objectValue else { return nil }
            indexes["_id_"] = nil
            return indexes.isEmpty ? nil : .object(indexes)
        }
    }

    private static func definitions(_ list: [JSON], _ options: [String: JSON] = [:]) -> JSON {
        var members = options
        members["definitions"] = .array(list)
        return .object(members)
    }

    // spec: DefinedSchemas.spec.js: should keep default fields if not provided
    // spec: DefinedSchemas.spec.js: should use default CLP
    @Test func aBareDefinitionHasTheDefaultFieldsAndIsClosedToClients() async throws {
        let app = App()
        let closed: JSON = ["find": [:], "count": [:], "get": [:], "create": [:], "update": [:], "delete": [:], "addField": [:],
                            "protectedFields": [:]]
        for _ in 0..<2 {  // Created, then updated.
            try app.start(Self.definitions([["className": "Test"]]))
            let schema = try await app.schema("Test")
            #expect(schema["fields"] == Self.defaultFields, "\(schema)")
            #expect(schema["classLevelPermissions"] == closed, "\(schema)")
        }
        let refused = try await app.server.request("POST", "/classes/Test", json: ["a": 1])
        expectParseError(refused, 119, "Permission denied for action create on class Test.")
    }

    // spec: DefinedSchemas.spec.js: should protect default fields
    @Test func builtInFieldsAreLeftAlone() async throws {
        let app = App()
        let options = Self.definitions([
            ["className": "_User", "fields": ["email": "Object"]],
            ["className": "_Role", "fields": ["users": "Object"]],
            ["className": "_Installation", "fields": ["installationId": "Object"]],
            ["className": "Test", "fields": ["createdAt": ["type": "Object"], "objectId": ["type": "Number"],
                                             "updatedAt": ["type": "String"], "ACL": ["type": "String"]]],
        ])
        func fields(_ extra: [String: JSON]) -> JSON { .object(Self.defaultFields.objectValue!.merging(extra) { $1 }) }
        let user = fields(["username": ["type": "String"], "password": ["type": "String"], "email": ["type": "String"],
                           "emailVerified": ["type": "Boolean"], "authData": ["type": "Object"]])
        let role = fields(["name": ["type": "String"], "users": ["type": "Relation", "targetClass": "_User"],
                           "roles": ["type": "Relation", "targetClass": "_Role"]])
        let installation = fields([
            "installationId": ["type": "String"], "deviceToken": ["type": "String"], "channels": ["type": "Array"],
            "deviceType": ["type": "String"], "pushType": ["type": "String"], "GCMSenderId": ["type": "String"],
            "timeZone": ["type": "String"], "localeIdentifier": ["type": "String"], "badge": ["type": "Number"],
            "appVersion": ["type": "String"], "appName": ["type": "String"], "appIdentifier": ["type": "String"],
            "parseVersion": ["type": "String"],
        ])
        for _ in 0..<2 {
            try app.start(options)
            #expect(try await app.schema("Test")["fields"] == Self.defaultFields)
            #expect(try await app.schema("_User")["fields"] == user)
            #expect(try await app.schema("_Role")["fields"] == role)
            #expect(try await app.schema("_Installation")["fields"] == installation)
        }
    }

    // spec: DefinedSchemas.spec.js: should create new fields
    @Test func newFieldsAreCreatedWithTheirOptions() async throws {
        let app = App()
        var fields = Self.defaultFields.objectValue!.merging([
            "aString": ["type": "String"],
            "aStringWithDefault": ["type": "String", "defaultValue": "Test"],
            "aStringWithRequired": ["type": "String", "required": true],
            "aStringWithRequiredAndDefault": ["type": "String", "required": true, "defaultValue": "Test"],
            "aBoolean": ["type": "Boolean"], "aFile": ["type": "File"], "aNumber": ["type": "Number"],
            "aRelation": ["type": "Relation", "targetClass": "_User"], "aPointer": ["type": "Pointer", "targetClass": "_Role"],
            "aDate": ["type": "Date"], "aGeoPoint": ["type": "GeoPoint"], "aPolygon": ["type": "Polygon"],
            "aArray": ["type": "Array"], "aObject": ["type": "Object"],
        ]) { $1 }
        try app.start(Self.definitions([["className": "Test", "fields": .object(fields)]]))
        #expect(try await app.schema("Test")["fields"] == .object(fields))
        fields["anotherObject"] = ["type": "Object"]
        try app.start(Self.definitions([["className": "Test", "fields": .object(fields)]]))
        #expect(try await app.schema("Test")["fields"] == .object(fields))
    }

    // spec: DefinedSchemas.spec.js: should not delete removed fields when "deleteExtraFields" is false
    // spec: DefinedSchemas.spec.js: should delete removed fields when "deleteExtraFields" is true
    @Test func fieldsLeftOutAreDroppedOnlyWhenAsked() async throws {
        let app = App()
        try app.start(Self.definitions([["className": "Test", "fields": ["aField": ["type": "String"]]]]))
        #expect(try await app.schema("Test")["fields"]?["aField"] == ["type": "String"])
        try app.start(Self.definitions([["className": "Test"]]))
        #expect(try await app.schema("Test")["fields"] == .object(Self.defaultFields.objectValue!.merging(["aField": ["type": "String"]]) { $1 }))
        try app.start(Self.definitions([["className": "Test"]], ["deleteExtraFields": true]))
        #expect(try await app.schema("Test")["fields"] == Self.defaultFields)
    }

    // spec: DefinedSchemas.spec.js: should re create fields with changed type when "recreateModifiedFields" is true
    // spec: DefinedSchemas.spec.js: should not re create fields with changed type when "recreateModifiedFields" is not true
    // spec: DefinedSchemas.spec.js: should just update classic fields with changed params
    @Test func changedFieldsAreRetypedOnlyWhenAskedAndTheirOptionsAlways() async throws {
        let app = App()
        try app.start(Self.definitions([["className": "Test", "fields": ["aField": ["type": "String"]]]]))
        let created = try await app.server.request("POST", "/classes/Test", json: ["aField": "Hello"], master: true)
        let id = try #require(created.json["objectId"]?.stringValue, "\(created.text)")
        func stored() async throws -> JSON? { try await app.server.request("GET", "/classes/Test/\(id)", master: true).json["aField"] }

        try app.start(Self.definitions([["className": "Test", "fields": ["aField": ["type": "Number"]]]]))
        #expect(try await app.schema("Test")["fields"]?["aField"] == ["type": "String"])
        #expect(try await stored() == "Hello")

        try app.start(Self.definitions([["className": "Test", "fields": ["aField": ["type": "String", "required": true]]]]))
        #expect(try await app.schema("Test")["fields"]?["aField"] == ["type": "String", "required": true])
        #expect(try await stored() == "Hello")

        try app.start(Self.definitions([["className": "Test", "fields": ["aField": ["type": "Number"]]]], ["recreateModifiedFields": true]))
        #expect(try await app.schema("Test")["fields"]?["aField"] == ["type": "Number"])
        #expect(try await stored() == nil)
    }

    // spec: DefinedSchemas.spec.js: should create new indexes
    // spec: DefinedSchemas.spec.js: should re create changed indexes
    // spec: DefinedSchemas.spec.js: should delete removed indexes
    @Test func indexesFollowTheDefinition() async throws {
        let app = App()
        var indexes: JSON = ["complex": ["createdAt": 1, "updatedAt": 1]]
        try app.start(Self.definitions([["className": "Test", "fields": ["aField": ["type": "String"]], "indexes": indexes]]))
        #expect(try await app.indexes("Test") == indexes)
        indexes = ["complex": ["createdAt": 1, "updatedAt": 1], "complex2": ["createdAt": 1, "aField": 1]]
        try app.start(Self.definitions([["className": "Test", "fields": ["aField": ["type": "String"]], "indexes": indexes]]))
        #expect(try await app.indexes("Test") == indexes)

        for _ in 0..<2 {  // Changed, then unchanged.
            indexes = ["complex": ["createdAt": 1]]
            try app.start(Self.definitions([["className": "Test", "fields": ["aField": ["type": "String"]], "indexes": indexes]]))
            #expect(try await app.indexes("Test") == indexes)
        }
        for _ in 0..<2 {
            try app.start(Self.definitions([["className": "Test", "fields": ["aField": ["type": "String"]], "indexes": [:]]]))
            #expect(try await app.indexes("Test") == nil)
        }
    }

    // spec: DefinedSchemas.spec.js: should detect protected indexes for _User class
    // spec: DefinedSchemas.spec.js: should detect protected indexes for _Role class
    // spec: DefinedSchemas.spec.js: should detect protected indexes for _Idempotency class
    // spec: DefinedSchemas.spec.js: should not detect protected indexes on user defined class
    @Test func protectedIndexes() {
        for name in ["_id_", "case_insensitive_email", "username_1", "email_1"] {
            #expect(SchemaMigration.isProtectedIndex("_User", name))
        }
        #expect(!SchemaMigration.isProtectedIndex("_User", "test"))
        #expect(SchemaMigration.isProtectedIndex("_Role", "name_1"))
        #expect(!SchemaMigration.isProtectedIndex("_Role", "test"))
        #expect(SchemaMigration.isProtectedIndex("_Idempotency", "reqId_1"))
        #expect(!SchemaMigration.isProtectedIndex("_Idempotency", "test"))
        for name in ["case_insensitive_email", "username_1", "email_1", "reqId_1", "name_1"] {
            #expect(!SchemaMigration.isProtectedIndex("ExampleClass", name))
        }
        #expect(SchemaMigration.isProtectedIndex("ExampleClass", "_id_"))
    }

    // spec: DefinedSchemas.spec.js: should save CLP
    // spec: DefinedSchemas.spec.js: should force addField to empty
    @Test func permissionsAreTheDefinitionsWithAddFieldClosed() async throws {
        let app = App()
        var permissions: [String: JSON] = [
            "find": [:], "count": ["requiresAuthentication": true], "get": ["role:Admin": true],
            "create": ["role:ARole": true, "requiresAuthentication": true], "update": ["requiresAuthentication": true],
            "delete": ["requiresAuthentication": true], "addField": [:],
            "protectedFields": ["*": ["aField"], "role:Admin": ["anotherField"]],
        ]
        func define() -> JSON {
            Self.definitions([["className": "Test", "fields": ["aField": ["type": "String"], "anotherField": ["type": "Object"]],
                               "classLevelPermissions": .object(permissions)]])
        }
        try app.start(define())
        #expect(try await app.schema("Test")["classLevelPermissions"] == .object(permissions))
        permissions["update"] = [:]
        permissions["create"] = ["requiresAuthentication": true]
        try app.start(define())
        #expect(try await app.schema("Test")["classLevelPermissions"] == .object(permissions))

        let other = App()
        let closed: JSON = ["find": [:], "count": [:], "get": [:], "create": [:], "update": [:], "delete": [:], "addField": [:],
                            "protectedFields": [:]]
        for _ in 0..<2 {
            try other.start(Self.definitions([["className": "Test", "classLevelPermissions": ["addField": ["*": true]]]]))
            #expect(try await other.schema("Test")["classLevelPermissions"] == closed)
        }
    }

    // spec: DefinedSchemas.spec.js: should not delete classes automatically
    @Test func classesLeftOutStayClosedToNewFields() async throws {
        let app = App()
        try app.start(Self.definitions([["className": "_User"], ["className": "Test", "classLevelPermissions": ["find": ["*": true]]]]))
        try app.start(Self.definitions([["className": "_User"]]))
        let schema = try await app.schema("Test")
        #expect(schema["className"] == "Test")
        #expect(schema["classLevelPermissions"]?["find"] == ["*": true] && schema["classLevelPermissions"]?["addField"] == [:], "\(schema)")
    }

    // spec-differs: DefinedSchemas.spec.js: should disable class PUT/POST endpoint when lockSchemas provided to avoid dual source of truth -- GET /schemas lists _User, _Role and Test: _Session is listed once a session exists (Parse's migration makes and deletes one)
    @Test func lockedSchemasRefuseCreatesAndUpdates() async throws {
        let app = App()
        try app.start(Self.definitions([["className": "_User"], ["className": "Test"]], ["lockSchemas": true]))
        #expect(try await app.schema("Test")["className"] == "Test")
        let all = try await app.server.request("GET", "/schemas", master: true)
        #expect(all.json["results"]?.arrayValue?.compactMap { $0["className"]?.stringValue } == ["Test", "_Role", "_User"], "\(all.text)")
        let message = "Cannot perform this operation when schemas options is used."
        expectParseError(try await app.server.request("POST", "/schemas/TheNewTest", json: [:], master: true), 119, message)
        expectParseError(try await app.server.request("POST", "/schemas", json: ["className": "TheNewTest"], master: true), 119, message)
        expectParseError(try await app.server.request("PUT", "/schemas/_User", json: [:], master: true), 119, message)
        #expect(try await app.server.request("DELETE", "/schemas/Test", master: true).status == 200)
    }

    // spec-differs: DefinedSchemas.spec.js: should only enable delete class endpoint since -- GET /schemas lists 3 classes, then 2 (Parse's 4, then 3, counting the _Session its migration made)
    @Test func classesLeftOutCanStillBeDropped() async throws {
        let app = App()
        try app.start(Self.definitions([["className": "_User"], ["className": "Test"]]))
        try app.start(Self.definitions([["className": "_User"]]))
        func listed() async throws -> Int { try await app.server.request("GET", "/schemas", master: true).json["results"]?.arrayValue?.count ?? -1 }
        #expect(try await listed() == 3)
        #expect(try await app.server.request("DELETE", "/schemas/_User", master: true).status == 200)
        #expect(try await listed() == 2)
    }

    // spec: DefinedSchemas.spec.js: should perform migration in parallel without failing
    /// Nodes starting together on one PostgreSQL database each apply the file: all start, and the class is as defined.
    @Test(.enabled(if: TestServer.onPostgres)) func nodesStartingTogetherApplyTheSameFile() async throws {
        let first = try TestServer(arguments: fastHashing)
        let file = first.dataDirectory.appendingPathComponent("schema.json")
        try Data(Self.definitions([["className": "Test", "fields": ["aField": ["type": "String"]], "indexes": ["aField": ["aField": 1]],
                                    "classLevelPermissions": ["create": ["requiresAuthentication": true]]]]).encoded()).write(to: file)
        let nodes = try await withThrowingTaskGroup(of: TestServer.self) { group in
            for _ in 0..<3 { group.addTask { try TestServer(arguments: fastHashing + ["--schema", file.path], sharingDatabaseWith: first) } }
            return try await group.reduce(into: [TestServer]()) { $0.append($1) }
        }
        #expect(nodes.count == 3)
        let schema = try await first.request("GET", "/schemas/Test", master: true).json
        #expect(schema["indexes"]?["aField"] == ["aField": 1], "\(schema)")
        #expect(schema["fields"]?["aField"] == ["type": "String"], "\(schema)")
        #expect(schema["classLevelPermissions"]?["create"] == ["requiresAuthentication": true], "\(schema)")
        for node in nodes { #expect(!node.log().contains("error"), "\(node.log())") }
    }

    /// Automatic indexes are Roost's own: a definition that names no index leaves them, as it leaves the system ones.
    @Test func automaticIndexesAreLeftAlone() async throws {
        let environment = ["ROOST_TEST_AUTO_INDEX_MIN_OBJECTS": "20", "ROOST_TEST_AUTO_INDEX_AFTER_QUERIES": "3"]
        let first = try TestServer(environment: environment)
        try await AutoIndexTests.seed(first)
        for _ in 0..<4 { _ = try await first.find("Task", AutoIndexTests.rangeQuery) }
        let made = try await AutoIndexTests.waitForIndexes(first) { !$0.isEmpty }
        try #require(!made.isEmpty)
        _ = first.stop()
        let file = first.dataDirectory.appendingPathComponent("schema.json")
        try Data(Self.definitions([["className": "Task", "indexes": [:]]]).encoded()).write(to: file)
        let second = try TestServer(arguments: ["--schema", file.path], environment: environment, dataDirectory: first.dataDirectory)
        #expect(try await AutoIndexTests.automaticIndexes(second) == made)
    }

    /// What cannot be applied, or read, stops the start with the file and the reason.
    @Test func badDefinitionsStopTheStart() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("roost-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let cases: [(String, String)] = [
            (#"{"definitions": {}}"#, #""schema.definitions" must be an array of schemas"#),
            (#"{"definitions": [{"className": "A"}, {"className": "A"}]}"#, "the class A is defined twice"),
            (#"{"definitions": [], "beforeMigration": 1}"#, #"unknown key "beforeMigration""#),
            (#"{"definitions": [{"className": "A", "fields": {"b": {"type": "Nope"}}}]}"#, "the class A could not be created"),
        ]
        for (index, (text, message)) in cases.enumerated() {
            let file = directory.appendingPathComponent("schema-\(index).json")
            try Data(text.utf8).write(to: file)
            let attempt = try StartAttempt(["--schema", file.path])
            #expect(!attempt.started, "\(text)")
            #expect(attempt.log.contains(message) && attempt.log.contains(file.path), "\(text): \(attempt.log)")
        }
        let missing = try StartAttempt(["--schema", directory.appendingPathComponent("none.json").path])
        #expect(!missing.started && missing.log.contains("cannot read --schema"), "\(missing.log)")
    }
}
