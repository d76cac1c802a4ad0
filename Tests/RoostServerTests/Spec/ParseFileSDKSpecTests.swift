import Foundation
import RoostCore
import Testing

/// Parse Server's spec/ParseFile.spec.js: the cases that save a `Parse.File` through the JS SDK, as the SDK sends
/// them over REST (`POST /files/<name>`, a `text/plain` JSON body with the keys, the type, the bytes as base64 and
/// `fileData: {metadata, tags}`), then save it in objects. The spec's server lets anyone upload
/// (`fileUpload.enableForPublic`); Roost keeps Parse's default (registered users and the master key), so the saves
/// here carry a user's session, as `ParseFileSpecTests` does. The spec's spies on `FilesController.createFile` (the
/// options it is handed) are internal: what is checked of the tags cases is that the upload is taken.
@Suite struct ParseFileSDKSpecTests {
    /// "Hello World!" as base64: the spec's `data` bytes.
    static let helloWorld = "SGVsbG8gV29ybGQh"

    private struct SDK {
        let server: TestServer
        let token: String

        init() async throws {
            server = try TestServer(arguments: fastHashing)
            let user = try await server.request("POST", "/users", json: ["username": "uploader", "password": "password"])
            token = try #require(user.json["sessionToken"]?.stringValue, "\(user.text)")
        }

        /// `new Parse.File(name, data, type).save({sessionToken})` as the uploader.
        func saveFile(_ name: String, tags: JSON = [:]) async throws -> TestResponse {
            try await ParseFileSDKSpecTests.saveFile(on: server, name, sessionToken: token, tags: tags)
        }

        /// GET of a file's URL (no keys, as a browser).
        func download(_ url: String, range: String? = nil) async throws -> TestResponse {
            let path = String(url.dropFirst(server.baseURL.count))
            return try await server.request("GET", path, headers: range.map { ["Range": $0] } ?? [:], appId: false)
        }
    }

    /// `new Parse.File(name, data, 'text/plain').save()`, as the JS SDK sends it: `POST /files/<name>` (a name with
    /// spaces goes out percent-encoded, as the SDK's HTTP layer sends it) with a `text/plain` JSON body; the session,
    /// when there is one, travels as `_SessionToken`.
    static func saveFile(on server: TestServer, _ name: String, sessionToken: String?, tags: JSON = [:]) async throws -> TestResponse {
        let path = "/files/" + (name.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? name)
        var body: [String: JSON] = [
            "_ApplicationId": .string(TestServer.applicationId), "_JavaScriptKey": "test", "_ClientVersion": "js5.3.0",
            "_InstallationId": "5f1c3b52-0d5a-4f4e-9a63-0c5e3a7f2b11", "base64": .string(helloWorld),
            "fileData": ["metadata": [:], "tags": tags], "_ContentType": "text/plain",
        ]
        if let sessionToken { body["_SessionToken"] = .string(sessionToken) }
        return try await server.request("POST", path, json: .object(body), headers: ["Content-Type": "text/plain"], appId: false)
    }

    /// The File JSON the SDK puts in an object it saves: `{__type, name, url}` from the upload's answer.
    private static func fileJSON(_ saved: TestResponse) -> JSON {
        ["__type": "File", "name": saved.json["name"] ?? .null, "url": saved.json["url"] ?? .null]
    }

    // spec: ParseFile.spec.js: save file
    // spec: ParseFile.spec.js: saves the file with tags
    // spec: ParseFile.spec.js: does not pass empty file tags while saving
    @Test func savingAFileGivesItANewNameAndAURL() async throws {
        let sdk = try await SDK()
        let tagSets: [JSON] = [[:], ["hello": "world"]]
        for tags in tagSets {
            let saved = try await sdk.saveFile("hello.txt", tags: tags)
            #expect(saved.status == 201, "\(tags.jsonText): \(saved.text)")
            let name = try #require(saved.json["name"]?.stringValue, "\(saved.text)")
            #expect(name != "hello.txt" && name.hasSuffix("hello.txt"), "\(name)")
            let url = try #require(saved.json["url"]?.stringValue, "\(saved.text)")
            #expect(url == "\(sdk.server.baseURL)/files/\(TestServer.applicationId)/\(name)")
            #expect(saved.headers["location"] == url)
            #expect(try await sdk.download(url).text == "Hello World!")
        }
    }

    // spec: ParseFile.spec.js: save file in object
    // spec: ParseFile.spec.js: save file in object with escaped characters in filename
    // spec: ParseFile.spec.js: autosave file in object
    @Test func aSavedFileComesBackInItsObject() async throws {
        let sdk = try await SDK()
        for name in ["hello.txt", "hello . txt"] {
            let saved = try await sdk.saveFile(name)
            #expect(saved.status == 201, "\(name): \(saved.text)")
            let storedName = try #require(saved.json["name"]?.stringValue, "\(saved.text)")
            #expect(storedName != name && storedName.hasSuffix(name), "\(storedName)")
            let url = try #require(saved.json["url"]?.stringValue)
            #expect(url.hasSuffix(storedName.replacingOccurrences(of: " ", with: "%20")), "\(url)")
            let file = Self.fileJSON(saved)
            let id = try await sdk.server.create("TestObject", ["file": file])
            let again = try await sdk.server.fetch("TestObject", id)
            #expect(again["file"] == file, "\(again.jsonText)")
            #expect(try await sdk.download(url).text == "Hello World!")
        }
    }

    // spec: ParseFile.spec.js: autosave file in object in object
    /// The SDK saves the file, then the unsaved child (a batch), then the parent; the parent fetched with
    /// `include=child` holds the child and its file.
    @Test func aFileInAnIncludedChildComesBack() async throws {
        let sdk = try await SDK()
        let saved = try await sdk.saveFile("hello.txt")
        #expect(saved.status == 201, "\(saved.text)")
        let file = Self.fileJSON(saved)
        let child = try await sdk.server.createAll("Child", [["file": file]])
        let parent = try await sdk.server.create("Parent", ["child": pointer("Child", child[0])])
        let again = try await sdk.server.request("GET", "/classes/Parent/\(parent)", query: ["include": "child"])
        #expect(again.status == 200, "\(again.text)")
        #expect(again.json["child"]?["className"] == "Child")
        #expect(again.json["child"]?["file"] == file, "\(again.text)")
        #expect(again.json["child"]?["file"]?["name"]?.stringValue != "hello.txt")
    }

    // spec: ParseFile.spec.js: allows file upload only for authenticated user
    /// The spec's `fileUpload: {enableForPublic: false, enableForAnonymousUser: false, enableForAuthenticatedUser: true}`
    /// is Roost's fixed policy (Parse's default), so this case needs no option.
    @Test func onlyRegisteredUsersMayUpload() async throws {
        let server = try TestServer(arguments: fastHashing)
        expectError(try await Self.saveFile(on: server, "hello.txt", sessionToken: nil), 130, "File upload by public is disabled.")
        let anonymous = try await server.request("POST", "/users", json: ["authData": ["anonymous": ["id": .string(newAnonymousId())]]])
        let anonymousToken = try #require(anonymous.json["sessionToken"]?.stringValue, "\(anonymous.text)")
        expectError(try await Self.saveFile(on: server, "hello.txt", sessionToken: anonymousToken), 130,
                    "File upload by anonymous user is disabled.")
        let user = try await server.signUpAccount("user", password: "password")
        #expect(try await Self.saveFile(on: server, "hello.txt", sessionToken: user.token).status == 201)
    }

    // spec-differs: ParseFile.spec.js: fallback to regular request -- Parse runs it only on Postgres, where its spec server stores files with the FS adapter, which cannot stream, so the Range header is ignored and the whole file comes back; Roost's file store answers ranges on both databases, as Parse's default GridFS adapter does ("supports range requests")
    @Test func aRangeIsAnsweredOnEitherDatabase() async throws {
        let sdk = try await SDK()
        let uploaded = try await sdk.server.request("POST", "/files/file.txt", body: Data("argle bargle".utf8), headers: [
            "Content-Type": "application/octet-stream", "X-Parse-REST-API-Key": "rest", "X-Parse-Session-Token": sdk.token,
        ])
        let url = try #require(uploaded.json["url"]?.stringValue, "\(uploaded.text)")
        let part = try await sdk.download(url, range: "bytes=0-5")
        #expect(part.status == 206)
        #expect(part.text == "argle ")
    }
}
