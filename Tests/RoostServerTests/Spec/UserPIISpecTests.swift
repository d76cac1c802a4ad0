import Foundation
import RoostCore
import Testing

/// Parse Server's spec/UserPII.spec.js over REST: which of a user's `email`, `zip` and `ssn` the user, the master key,
/// the public, another user and a privileged one see, with Parse's default protected fields (`email` only), with the
/// deprecated `userSensitiveFields` (`--user-sensitive-fields`) and with the `protectedFields` option
/// (`--protected-fields`). The JS SDK's reads become the requests it sends: `fetch()` a get by id, `first()` a find
/// with `limit=1`, `Query.get(id)` and `equalTo('objectId', id)` a find on the objectId.
@Suite struct UserPIISpecTests {
    private static let email = "foo@bar.com", zip = "10001", ssn = "999-99-9999"
    private static let all: Set<String> = ["email", "zip", "ssn"]

    /// The spec's `beforeEach`: `tester` signs up, logs in and saves its email, zip and ssn with a public-read ACL.
    private struct World {
        let api: RecordingServer
        let user: Account
    }

    private static func world(_ arguments: [String] = []) async throws -> World {
        let api = try RecordingServer(arguments: fastHashing + arguments)
        _ = try await api.signUp("tester", "abc")
        let user = try await api.logIn("tester", "abc")
        let saved = try await api.send("PUT", "/users/\(user.id)", json: [
            "email": .string(email), "zip": .string(zip), "ssn": .string(ssn), "ACL": ["*": ["read": true]],
        ], token: user.token)
        #expect(saved.status == 200, "\(saved.text)")
        return World(api: api, user: user)
    }

    /// How a case reads `tester`.
    private enum Read: CustomStringConvertible {
        case byId, first, findById

        var description: String {
            switch self {
            case .byId: "GET /classes/_User/<id>"
            case .first: "GET /classes/_User?limit=1"
            case .findById: "GET /classes/_User?where={objectId}"
            }
        }
    }

    /// Who reads.
    private enum Reader {
        case user, nobody, master, session(String)
    }

    /// The fields among email, zip and ssn that `reader` sees of `tester` read as `read`.
    private static func seen(_ world: World, _ read: Read, as reader: Reader,
                             sourceLocation: SourceLocation = #_sourceLocation) async throws -> Set<String> {
        var token: String?
        var master = false
        switch reader {
        case .user: token = world.user.token
        case .nobody: break
        case .master: master = true
        case .session(let other): token = other
        }
        let object: JSON
        switch read {
        case .byId:
            let response = try await world.api.send("GET", "/classes/_User/\(world.user.id)", token: token, master: master)
            #expect(response.status == 200, "\(read): \(response.text)", sourceLocation: sourceLocation)
            object = response.json
        case .first, .findById:
            let query = read == .first ? ["limit": "1"] : ["where": "{\"objectId\":\"\(world.user.id)\"}"]
            let response = try await world.api.send("GET", "/classes/_User", token: token, master: master, query: query)
            #expect(response.status == 200, "\(read): \(response.text)", sourceLocation: sourceLocation)
            let results = response.json["results"]?.arrayValue ?? []
            object = results.first { $0["objectId"]?.stringValue == world.user.id } ?? .null
            #expect(object != .null, "\(read): tester is not among \(results)", sourceLocation: sourceLocation)
        }
        if object["email"] != nil { #expect(object["email"] == .string(email), sourceLocation: sourceLocation) }
        if object["zip"] != nil { #expect(object["zip"] == .string(zip), sourceLocation: sourceLocation) }
        if object["ssn"] != nil { #expect(object["ssn"] == .string(ssn), sourceLocation: sourceLocation) }
        return all.filter { object[$0] != nil }
    }

    /// The fifteen cases each section starts with, as (read, reader, fields seen) in the spec's order: the user sees its
    /// own, the master key everything, the public what `publicSees`.
    private static func expectOwnMasterAndPublic(_ world: World, publicSees: Set<String>,
                                                 sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let cases: [(Read, Reader, Set<String>)] = [
            (.byId, .user, all), (.byId, .nobody, publicSees), (.byId, .master, all),  // with object
            (.first, .user, all), (.first, .nobody, publicSees), (.first, .master, all),  // with Find
            (.findById, .user, all), (.findById, .nobody, publicSees), (.findById, .master, all),  // with Get
            (.first, .nobody, publicSees), (.first, .user, all), (.first, .master, all),  // REST
            (.byId, .nobody, publicSees), (.byId, .user, all), (.byId, .master, all),  // REST by ID
        ]
        for (index, (read, reader, expected)) in cases.enumerated() {
            let fields = try await seen(world, read, as: reader, sourceLocation: sourceLocation)
            #expect(fields == expected, "case \(index + 1): \(read) as \(reader)", sourceLocation: sourceLocation)
        }
    }

    /// The spec's `with privileged user` set-up: an `Administrator` role, a `managementOf_user<id>` role holding it,
    /// `tester` readable by that role only, and `administrator` logged in and made an Administrator. Its session.
    private static func privilegedUser(_ world: World) async throws -> String {
        let api = world.api
        let admins = try await api.send("POST", "/roles", json: ["name": "Administrator", "ACL": [:]], master: true)
        let adminsId = try #require(admins.json["objectId"]?.stringValue, "\(admins.text)")
        let management = try await api.send("POST", "/roles", json: [
            "name": .string("managementOf_user" + world.user.id),
            "ACL": .object([world.user.id: ["read": true, "write": true]]),
            "roles": ["__op": "AddRelation", "objects": [pointer("_Role", adminsId)]],
        ], master: true)
        #expect(management.status == 201, "\(management.text)")
        let locked = try await api.send("PUT", "/users/\(world.user.id)", json: [
            "ACL": .object(["role:managementOf_user" + world.user.id: ["read": true]]),
        ], master: true)
        #expect(locked.status == 200, "\(locked.text)")
        _ = try await api.signUp("administrator", "secure")
        let admin = try await api.logIn("administrator", "secure")
        let joined = try await api.send("PUT", "/roles/\(adminsId)", json: [
            "users": ["__op": "AddRelation", "objects": [pointer("_User", admin.id)]],
        ], master: true)
        #expect(joined.status == 200, "\(joined.text)")
        return admin.token
    }

    /// The spec's `with public read ACL` set-up: `tester` publicly readable again (by the master key).
    private static func publiclyReadable(_ world: World) async throws {
        let saved = try await world.api.send("PUT", "/users/\(world.user.id)", json: ["ACL": ["*": ["read": true]]], master: true)
        #expect(saved.status == 200, "\(saved.text)")
    }

    // spec: UserPII.spec.js: should be able to get own PII via API with object
    // spec: UserPII.spec.js: should not be able to get PII via API with object
    // spec: UserPII.spec.js: should be able to get PII via API with object using master key
    // spec: UserPII.spec.js: should be able to get own PII via API with Find
    // spec: UserPII.spec.js: should not get PII via API with Find
    // spec: UserPII.spec.js: should get PII via API with Find using master key
    // spec: UserPII.spec.js: should be able to get own PII via API with Get
    // spec: UserPII.spec.js: should not get PII via API with Get
    // spec: UserPII.spec.js: should get PII via API with Get using master key
    // spec: UserPII.spec.js: should not get PII via REST
    // spec: UserPII.spec.js: should get PII via REST with self credentials
    // spec: UserPII.spec.js: should get PII via REST using master key
    // spec: UserPII.spec.js: should not get PII via REST by ID
    // spec: UserPII.spec.js: should get PII via REST by ID  with self credentials
    // spec: UserPII.spec.js: should get PII via REST by ID  with master key
    /// Parse's default protected fields: only `email` is hidden from others.
    @Test func byDefaultOnlyTheEmailIsHidden() async throws {
        let world = try await Self.world()
        try await Self.expectOwnMasterAndPublic(world, publicSees: ["zip", "ssn"])
    }

    // spec: UserPII.spec.js: should be able to get own PII via API with object
    // spec: UserPII.spec.js: should not be able to get PII via API with object
    // spec: UserPII.spec.js: should be able to get PII via API with object using master key
    // spec: UserPII.spec.js: should be able to get own PII via API with Find
    // spec: UserPII.spec.js: should not get PII via API with Find
    // spec: UserPII.spec.js: should get PII via API with Find using master key
    // spec: UserPII.spec.js: should be able to get own PII via API with Get
    // spec: UserPII.spec.js: should not get PII via API with Get
    // spec: UserPII.spec.js: should get PII via API with Get using master key
    // spec: UserPII.spec.js: should not get PII via REST
    // spec: UserPII.spec.js: should get PII via REST with self credentials
    // spec: UserPII.spec.js: should get PII via REST using master key
    // spec: UserPII.spec.js: should not get PII via REST by ID
    // spec: UserPII.spec.js: should get PII via REST by ID  with self credentials
    // spec: UserPII.spec.js: should get PII via REST by ID  with master key
    // spec: UserPII.spec.js: privileged user should not be able to get user PII via API with object
    // spec: UserPII.spec.js: privileged user should not be able to get user PII via API with Find
    // spec: UserPII.spec.js: privileged user should not be able to get user PII via API with Get
    // spec: UserPII.spec.js: privileged user should not get user PII via REST by ID
    // spec: UserPII.spec.js: should not be able to get user PII via API with object
    // spec: UserPII.spec.js: should not be able to get user PII via API with Find
    // spec: UserPII.spec.js: should not be able to get user PII via API with Get
    // spec: UserPII.spec.js: should not get user PII via REST by ID
    // spec: UserPII.spec.js: should not be able to get user PII via API with object
    // spec: UserPII.spec.js: should not be able to get user PII via API with Find
    // spec: UserPII.spec.js: should not be able to get user PII via API with Get
    /// `userSensitiveFields: ['ssn', 'zip']`: all three hidden from everyone but the user and the master key, a user
    /// who may read `tester` through a role included.
    @Test func deprecatedSensitiveFieldsHideFromEveryoneElse() async throws {
        let world = try await Self.world(["--user-sensitive-fields", "ssn,zip"])
        try await Self.expectOwnMasterAndPublic(world, publicSees: [])

        let admin = try await Self.privilegedUser(world)
        for read in [Read.byId, .findById, .findById, .byId] {
            #expect(try await Self.seen(world, read, as: .session(admin)) == [], "privileged: \(read)")
        }

        try await Self.publiclyReadable(world)
        for read in [Read.byId, .findById, .findById, .byId] {
            #expect(try await Self.seen(world, read, as: .nobody) == [], "public read ACL: \(read)")
        }
        _ = try await world.api.signUp("another", "abc")
        let another = try await world.api.logIn("another", "abc")
        for read in [Read.byId, .findById, .findById] {
            #expect(try await Self.seen(world, read, as: .session(another.token)) == [], "another user: \(read)")
        }
    }

    // spec: UserPII.spec.js: should be able to get own PII via API with object
    // spec: UserPII.spec.js: should not be able to get PII via API with object
    // spec: UserPII.spec.js: should be able to get PII via API with object using master key
    // spec: UserPII.spec.js: should be able to get own PII via API with Find
    // spec: UserPII.spec.js: should not get PII via API with Find
    // spec: UserPII.spec.js: should get PII via API with Find using master key
    // spec: UserPII.spec.js: should be able to get own PII via API with Get
    // spec: UserPII.spec.js: should not get PII via API with Get
    // spec: UserPII.spec.js: should get PII via API with Get using master key
    // spec: UserPII.spec.js: should not get PII via REST
    // spec: UserPII.spec.js: should get PII via REST with self credentials
    // spec: UserPII.spec.js: should get PII via REST using master key
    // spec: UserPII.spec.js: should not get PII via REST by ID
    // spec: UserPII.spec.js: should get PII via REST by ID  with self credentials
    // spec: UserPII.spec.js: should get PII via REST by ID  with master key
    // spec: UserPII.spec.js: privileged user should be able to get user PII via API with object
    // spec: UserPII.spec.js: privileged user should be able to get user PII via API with Find
    // spec: UserPII.spec.js: privileged user should be able to get user PII via API with Get
    // spec: UserPII.spec.js: privileged user should get user PII via REST by ID
    // spec: UserPII.spec.js: should not be able to get user PII via API with object
    // spec: UserPII.spec.js: should not be able to get user PII via API with Find
    // spec: UserPII.spec.js: should not be able to get user PII via API with Get
    // spec: UserPII.spec.js: should not get user PII via REST by ID
    // spec: UserPII.spec.js: should not be able to get user PII via API with object
    // spec: UserPII.spec.js: should not be able to get user PII via API with Find
    // spec: UserPII.spec.js: should not be able to get user PII via API with Find without constraints
    // spec: UserPII.spec.js: should be able to get own PII via API with Find without constraints
    // spec: UserPII.spec.js: should not be able to get user PII via API with Get
    /// `protectedFields: {_User: {'*': ['ssn', 'zip'], 'role:Administrator': []}}`, with Parse's default `email` added to
    /// `*`: hidden from everyone but the user, the master key and Administrators.
    @Test func protectedFieldsOptionHidesFromAllButAdministrators() async throws {
        let option = #"{"_User": {"*": ["ssn", "zip"], "role:Administrator": []}}"#
        let world = try await Self.world(["--protected-fields", option])
        try await Self.expectOwnMasterAndPublic(world, publicSees: [])
        // The option joins the class's permission where it is checked; `GET /schemas` shows the stored one, as Parse's.
        let schema = try await world.api.send("GET", "/schemas/_User", master: true)
        #expect(schema.json["classLevelPermissions"]?["protectedFields"] == ["*": []], "\(schema.text)")

        let admin = try await Self.privilegedUser(world)
        for read in [Read.byId, .findById, .findById, .byId] {
            #expect(try await Self.seen(world, read, as: .session(admin)) == Self.all, "privileged: \(read)")
        }

        try await Self.publiclyReadable(world)
        for read in [Read.byId, .findById, .findById, .byId] {
            #expect(try await Self.seen(world, read, as: .nobody) == [], "public read ACL: \(read)")
        }
        _ = try await world.api.signUp("another", "abc")
        let another = try await world.api.logIn("another", "abc")
        let anotherEmail = "another@bar.com"
        let saved = try await world.api.send("PUT", "/users/\(another.id)", json: [
            "email": .string(anotherEmail), "zip": .string(Self.zip), "ssn": .string(Self.ssn),
        ], token: another.token)
        #expect(saved.status == 200, "\(saved.text)")
        for read in [Read.byId, .findById, .findById] {
            #expect(try await Self.seen(world, read, as: .session(another.token)) == [], "another user: \(read)")
        }
        // A find with no constraint: the others' PII hidden, the caller's own shown.
        let found = try await world.api.send("GET", "/classes/_User", token: another.token)
        let results = found.json["results"]?.arrayValue ?? []
        let others = results.filter { $0["objectId"]?.stringValue != another.id }
        #expect(!others.isEmpty && others.allSatisfy { $0["email"] == nil && $0["zip"] == nil && $0["ssn"] == nil }, "\(found.text)")
        let own = results.first { $0["objectId"]?.stringValue == another.id }
        #expect(own?["email"] == .string(anotherEmail) && own?["zip"] == .string(Self.zip) && own?["ssn"] == .string(Self.ssn),
                "\(found.text)")
    }

    /// The options refused at start, with the flag named.
    @Test func malformedOptionsAreRefusedAtStart() throws {
        for value in ["[]", "{\"_User\": [\"email\"]}", "{\"_User\": {\"*\": \"email\"}}", "{\"_User\": {\"*\": [1]}}", "{"] {
            let attempt = try StartAttempt(["--protected-fields", value])
            #expect(!attempt.started && attempt.status != 0, "\(value)")
            #expect(attempt.log.contains("invalid value for --protected-fields"), "\(value): \(attempt.log)")
        }
    }
}
