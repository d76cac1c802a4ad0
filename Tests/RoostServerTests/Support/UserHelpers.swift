import Foundation
import RoostCore
import Testing

/// Server flags for suites that are not about the cost of the password hash: 1,000 PBKDF2 rounds
/// instead of 600,000 (about 150 ms per hash).
let fastHashing = ["--password-iterations", "1000"]

/// A user with a session, as sign-up or log-in returned them.
struct Account {
    let id: String
    let token: String
}

/// A server with three signed-up users, `user1` to `user3` (password `password`), as Parse's permission specs start.
struct ThreeUsers {
    let api: RecordingServer
    let user1: Account, user2: Account, user3: Account

    static func signedUp() async throws -> ThreeUsers {
        let api = try RecordingServer()
        return ThreeUsers(api: api, user1: try await api.signUp("user1", "password"), user2: try await api.signUp("user2", "password"),
                          user3: try await api.signUp("user3", "password"))
    }
}

/// A test server whose every response (status line, headers and body) is kept, so a test can check
/// at the end that a secret never left the server, neither in a reply nor in its log.
final class RecordingServer: @unchecked Sendable {
    let server: TestServer
    private let lock = NSLock()
    private var seen: [String] = []

    init(arguments: [String] = fastHashing, dataDirectory: URL? = nil, environment: [String: String] = [:]) throws {
        server = try TestServer(arguments: arguments, environment: environment, dataDirectory: dataDirectory)
    }

    /// Records the requests to a server started otherwise (on a given database).
    init(server: TestServer) { self.server = server }

    /// `TestServer.request`, with `token` sent as `X-Parse-Session-Token`; the response is recorded.
    @discardableResult
    func send(_ method: String, _ path: String, json: JSON? = nil, token: String? = nil, master: Bool = false,
              query: [String: String] = [:], headers: [String: String] = [:]) async throws -> TestResponse {
        var headers = headers
        if let token { headers["X-Parse-Session-Token"] = token }
        let response = try await server.request(method, path, json: json, headers: headers, master: master, query: query)
        let entry = "\(response.status)\n" + response.headers.map { "\($0.key): \($0.value)" }.joined(separator: "\n")
            + "\n" + response.text
        record(entry)
        return response
    }

    private func record(_ entry: String) {
        lock.lock()
        seen.append(entry)
        lock.unlock()
    }

    /// Every response recorded so far.
    var responses: [String] {
        lock.lock()
        defer { lock.unlock() }
        return seen
    }

    /// Signs up and returns the new user's id and token, failing the caller when the server refuses.
    func signUp(_ username: String, _ password: String, _ extra: [String: JSON] = [:],
                headers: [String: String] = [:]) async throws -> Account {
        var body = extra
        body["username"] = .string(username)
        body["password"] = .string(password)
        let response = try await send("POST", "/users", json: .object(body), headers: headers)
        guard response.status == 201, let id = response.json["objectId"]?.stringValue,
            let token = response.json["sessionToken"]?.stringValue
        else { throw TestServerError.unexpected(response.status, response.text) }
        return Account(id: id, token: token)
    }

    /// `POST /login`; returns the user's id and the new token, failing the caller when refused.
    func logIn(_ username: String, _ password: String, headers: [String: String] = [:]) async throws -> Account {
        let response = try await send("POST", "/login", json: ["username": .string(username), "password": .string(password)],
                                      headers: headers)
        guard response.status == 200, let id = response.json["objectId"]?.stringValue,
            let token = response.json["sessionToken"]?.stringValue
        else { throw TestServerError.unexpected(response.status, response.text) }
        return Account(id: id, token: token)
    }

    /// `POST /users` with anonymous auth data.
    func anonymous(_ anonymousId: String, headers: [String: String] = [:]) async throws -> TestResponse {
        try await send("POST", "/users", json: ["authData": ["anonymous": ["id": .string(anonymousId)]]], headers: headers)
    }

    /// `GET /users/me` with `token`.
    func me(_ token: String?) async throws -> TestResponse {
        try await send("GET", "/users/me", token: token)
    }

    /// Records an issue for every secret found in a recorded response or in the server's log.
    func expectNeverShown(_ secrets: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        let log = server.log()
        let all = responses
        #expect(!all.isEmpty, sourceLocation: sourceLocation)
        for secret in secrets {
            let leaks = all.filter { $0.contains(secret) }
            #expect(leaks.isEmpty, "\(secret) appears in \(leaks.count) responses: \(leaks.prefix(3))", sourceLocation: sourceLocation)
            #expect(!log.contains(secret), "\(secret) appears in the server log", sourceLocation: sourceLocation)
        }
        // Nor any password hash, in any form.
        // (`"password":{"type":"String"}` in `/schemas/_User` is a field declaration, not a value.)
        for marker in ["pbkdf2", "_hashed_password", "\"password\":\""] {
            let leaks = all.filter { $0.contains(marker) }
            #expect(leaks.isEmpty, "\(marker) appears in \(leaks.count) responses: \(leaks.prefix(3))", sourceLocation: sourceLocation)
        }
        #expect(!log.contains("pbkdf2"), "a password hash appears in the server log", sourceLocation: sourceLocation)
    }

    /// The bytes of every file in the data directory (database, WAL, log), concatenated.
    func storedBytes() throws -> Data {
        var result = Data()
        let files = FileManager.default.enumerator(at: server.dataDirectory, includingPropertiesForKeys: nil)
        while let file = files?.nextObject() as? URL {
            if let data = try? Data(contentsOf: file) { result.append(data) }
        }
        return result
    }
}

/// Records an issue unless `response` is the Parse error `code` with its HTTP status (404 for 101,
/// 400 for the others) and, when given, exactly `message`.
func expectError(_ response: TestResponse, _ code: Int, _ message: String? = nil,
                 sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(response.status == (code == 101 ? 404 : 400), "\(response.status) \(response.text)", sourceLocation: sourceLocation)
    #expect(response.code == code, "\(response.text)", sourceLocation: sourceLocation)
    if let message {
        #expect(response.json["error"]?.stringValue == message, "\(response.text)", sourceLocation: sourceLocation)
    }
}

/// Whether `token` has the shape of a Roost session token: `r:` and 32 characters from `A–Z a–z 0–9`.
func isSessionToken(_ token: String?) -> Bool {
    guard let token else { return false }
    return token.range(of: #"^r:[0-9a-f]{32}$"#, options: .regularExpression) != nil
}

/// A fresh anonymous id, as the SDKs make them (a lowercase UUID).
func newAnonymousId() -> String { UUID().uuidString.lowercased() }

/// A unique user name (tests share no server, but a readable name helps in failure reports).
func uniqueName(_ prefix: String) -> String { "\(prefix)_\(UUID().uuidString.prefix(8))" }
