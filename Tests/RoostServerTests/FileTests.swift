import Foundation
import RoostCore
import Testing

/// `/files` (REST guide, "Files"), with Parse Server's default upload rules.
@Suite struct FileTests {
    let text = Data("Hello, World!".utf8)

    func signUp(_ server: TestServer, _ body: JSON) async throws -> String {
        let response = try await server.request("POST", "/users", json: body)
        return try #require(response.json["sessionToken"]?.stringValue)
    }

    @Test func registeredUsersUploadAndAnyoneWithTheURLDownloads() async throws {
        let server = try TestServer(arguments: fastHashing)
        let token = try await signUp(server, ["username": "uploader", "password": "pw-uploader"])
        let upload = try await server.request("POST", "/files/hello.txt", body: text,
                                              headers: ["Content-Type": "text/plain", "X-Parse-Session-Token": token])
        #expect(upload.status == 201, "\(upload.text)")
        let name = try #require(upload.json["name"]?.stringValue)
        let url = try #require(upload.json["url"]?.stringValue)
        #expect(name.hasSuffix("_hello.txt"))
        #expect(name.count == 32 + 1 + "hello.txt".count)
        #expect(url == "\(server.baseURL)/files/\(TestServer.applicationId)/\(name)")
        #expect(upload.headers["location"] == url)

        // Downloads need no keys: the app id is in the URL.
        let download = try await server.request("GET", "/files/\(TestServer.applicationId)/\(name)", appId: false)
        #expect(download.status == 200)
        #expect(download.body == text)
        #expect(download.headers["content-type"] == "text/plain")

        // An object can point to it; reads answer the file's URL whatever URL the client stored, as
        // Parse's `expandFilesInObject` (the stored value keeps the name only).
        let object = try await server.request("POST", "/classes/Post", json: ["attachment": ["__type": "File", "name": .string(name), "url": "http://elsewhere.example/x"]])
        #expect(object.status == 201)
        let postId = try #require(object.json["objectId"]?.stringValue)
        let expected: JSON = ["__type": "File", "name": .string(name), "url": .string(url)]
        #expect(try await server.request("GET", "/classes/Post/\(postId)").json["attachment"] == expected)
        #expect(try await server.request("GET", "/classes/Post").json["results"]?.arrayValue?.first?["attachment"] == expected)
        let comment = try await server.create("Comment", ["post": pointer("Post", postId)])
        let included = try await server.request("GET", "/classes/Comment/\(comment)", query: ["include": "post"])
        #expect(included.json["post"]?["attachment"] == expected)

        // Parse's answers for metadata (no adapter keeps any) and for an upload without a name.
        let metadata = try await server.request("GET", "/files/\(TestServer.applicationId)/metadata/\(name)", appId: false)
        #expect(metadata.status == 200)
        #expect(metadata.json == [:])
        let unnamed = try await server.request("POST", "/files", body: text, headers: ["X-Parse-Session-Token": token])
        #expect(unnamed.json == ["code": 122, "error": "Filename not provided."])
        #expect(unnamed.status == 400)

        let missing = try await server.request("GET", "/files/\(TestServer.applicationId)/nothing.txt", appId: false)
        #expect(missing.status == 404)
        #expect(missing.text == "File not found.")
        let wrongApp = try await server.request("GET", "/files/other-app/\(name)", appId: false)
        #expect(wrongApp.status == 403)
        #expect(wrongApp.json == ["code": 119, "error": "Invalid application ID."])

        // Deleting takes the master key.
        let refused = try await server.request("DELETE", "/files/\(name)", headers: ["X-Parse-Session-Token": token])
        #expect(refused.status == 403)
        #expect(refused.json == ["error": "unauthorized: master key is required"])
        #expect(try await server.request("DELETE", "/files/\(name)", master: true).status == 200)
        #expect(try await server.request("GET", "/files/\(TestServer.applicationId)/\(name)", appId: false).status == 404)
        #expect(try await server.request("DELETE", "/files/\(name)", master: true).json["code"] == 153)
    }

    @Test func publicAndAnonymousUploadsAreRefusedByDefault() async throws {
        let server = try TestServer(arguments: fastHashing)
        let publicUpload = try await server.request("POST", "/files/hello.txt", body: text, headers: ["Content-Type": "text/plain"])
        #expect(publicUpload.status == 400)
        #expect(publicUpload.json == ["code": 130, "error": "File upload by public is disabled."])

        let anonymous = try await signUp(server, ["authData": ["anonymous": ["id": "3b2ad6a0-1111-4a4a-9c9c-000000000001"]]])
        let anonymousUpload = try await server.request("POST", "/files/hello.txt", body: text, headers: ["X-Parse-Session-Token": anonymous])
        #expect(anonymousUpload.json == ["code": 130, "error": "File upload by anonymous user is disabled."])

        #expect(try await server.request("POST", "/files/hello.txt", body: text, master: true).status == 201)
        #expect(try await server.request("POST", "/files/hello.txt", body: text, appId: false).status == 403)
    }

    @Test func badNamesAndEmptyBodiesAreRefused() async throws {
        let server = try TestServer(arguments: fastHashing)
        for name in [".hidden", "a%2Fb.txt", "semi;colon.txt"] {
            let response = try await server.request("POST", "/files/\(name)", body: text, master: true)
            #expect(response.json == ["code": 122, "error": "Filename contains invalid characters."], "\(name)")
        }
        let long = try await server.request("POST", "/files/\(String(repeating: "a", count: 129))", body: text, master: true)
        #expect(long.json == ["code": 122, "error": "Filename too long."])
        let empty = try await server.request("POST", "/files/empty.txt", body: Data(), master: true)
        #expect(empty.json == ["code": 130, "error": "Invalid file upload."])
    }

    /// The JS SDK sends the file as base64 inside a JSON body that also carries the keys.
    @Test func javaScriptSDKFormUploads() async throws {
        let server = try TestServer(arguments: fastHashing)
        let token = try await signUp(server, ["username": "jsuser", "password": "pw-jsuser"])
        let body: JSON = [
            "base64": .string(Base64.encode(Array(text))), "_ContentType": "text/plain",
            "_ApplicationId": .string(TestServer.applicationId), "_SessionToken": .string(token), "fileData": ["metadata": [:], "tags": [:]],
        ]
        let upload = try await server.request("POST", "/files/js.txt", body: Data(body.encoded()), headers: ["Content-Type": "text/plain"], appId: false)
        #expect(upload.status == 201, "\(upload.text)")
        let name = try #require(upload.json["name"]?.stringValue)
        #expect(try await server.request("GET", "/files/\(TestServer.applicationId)/\(name)", appId: false).body == text)
    }

    /// Parse's `FilesController`: a name without an extension takes the one of its Content-Type
    /// (the header, or `_ContentType` in the JS SDK form); a name with one keeps it.
    @Test func aNameWithoutAnExtensionTakesTheContentTypes() async throws {
        let server = try TestServer(arguments: fastHashing)
        let token = try await signUp(server, ["username": "namer", "password": "pw-namer"])
        func upload(_ name: String, _ contentType: String) async throws -> String {
            let response = try await server.request("POST", "/files/\(name)", body: text,
                                                    headers: ["Content-Type": contentType, "X-Parse-Session-Token": token])
            #expect(response.status == 201, "\(response.text)")
            return try #require(response.json["name"]?.stringValue)
        }
        let hello = try await upload("hello", "text/plain; charset=utf-8")
        #expect(hello.hasSuffix("_hello.txt"))
        let download = try await server.request("GET", "/files/\(TestServer.applicationId)/\(hello)", appId: false)
        #expect(download.headers["content-type"] == "text/plain")
        #expect(try await upload("photo", "image/jpeg").hasSuffix("_photo.jpeg"))
        #expect(try await upload("notes.md", "text/plain").hasSuffix("_notes.md"))
        #expect(try await upload("blob", "application/x-unknown").hasSuffix("_blob"))

        let body: JSON = [
            "base64": .string(Base64.encode(Array(text))), "_ContentType": "image/png",
            "_ApplicationId": .string(TestServer.applicationId), "_SessionToken": .string(token),
        ]
        let jsForm = try await server.request("POST", "/files/picture", body: Data(body.encoded()), headers: ["Content-Type": "text/plain"], appId: false)
        #expect(jsForm.json["name"]?.stringValue?.hasSuffix("_picture.png") == true, "\(jsForm.text)")

        // Over 1 MB the body is spooled to disk as it arrives (`BodySpool`); the JS SDK's form is read back from there.
        let large = PostgresFileTests.distinctBytes(1_200_000)
        let largeForm: JSON = [
            "base64": .string(Base64.encode(Array(large))), "_ContentType": "application/octet-stream",
            "_ApplicationId": .string(TestServer.applicationId), "_SessionToken": .string(token),
        ]
        let largeUpload = try await server.request("POST", "/files/large.bin", body: Data(largeForm.encoded()), headers: ["Content-Type": "text/plain"], appId: false)
        let largeName = try #require(largeUpload.json["name"]?.stringValue, "\(largeUpload.text)")
        #expect(try await server.request("GET", "/files/\(TestServer.applicationId)/\(largeName)", appId: false).body == large)
    }
}
