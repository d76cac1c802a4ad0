import Foundation
import RoostCore
import Testing

/// Parse Server's spec/ParseFile.spec.js. The spec's server lets anyone upload (`fileUpload.enableForPublic`);
/// Roost keeps Parse's default (registered users and the master key), so uploads here carry a user's session.
@Suite struct ParseFileSpecTests {
    private struct Uploader {
        let server: TestServer
        let token: String

        init(arguments: [String] = []) async throws {
            server = try TestServer(arguments: fastHashing + arguments)
            let user = try await server.request("POST", "/users", json: ["username": "uploader", "password": "password"])
            token = try #require(user.json["sessionToken"]?.stringValue)
        }

        func upload(_ name: String, _ body: String, contentType: String? = nil) async throws -> TestResponse {
            var headers = ["X-Parse-Session-Token": token, "X-Parse-REST-API-Key": "rest"]
            headers["Content-Type"] = contentType ?? ""
            return try await server.request("POST", "/files/\(name)", body: Data(body.utf8), headers: headers)
        }

        /// The JS SDK's form: a JSON body with the keys, the type and the bytes as base64.
        func uploadAsJSON(_ name: String, contentType: String, base64: String) async throws -> TestResponse {
            try await server.request("POST", "/files/\(name)", json: [
                "_ApplicationId": .string(TestServer.applicationId), "_JavaScriptKey": "test", "_SessionToken": .string(token),
                "_ContentType": .string(contentType), "base64": .string(base64),
            ], headers: ["Content-Type": "text/plain"], appId: false)
        }

        /// GET of a file's URL, with a `Range` header when given.
        func download(_ url: String, range: String? = nil) async throws -> TestResponse {
            let path = String(url.dropFirst(server.baseURL.count))
            return try await server.request("GET", path, headers: range.map { ["Range": $0] } ?? [:], appId: false)
        }
    }

    private static func expectUploaded(_ response: TestResponse, named suffix: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.status == 201, "\(response.text)", sourceLocation: sourceLocation)
        #expect(response.json["name"]?.stringValue?.hasSuffix(suffix) == true, "\(response.text)", sourceLocation: sourceLocation)
        let url = response.json["url"]?.stringValue ?? ""
        #expect(url.contains("/files/\(TestServer.applicationId)/") && url.hasSuffix(suffix), "\(url)", sourceLocation: sourceLocation)
    }

    // spec: ParseFile.spec.js: works with Content-Type
    // spec: ParseFile.spec.js: works without Content-Type
    // spec: ParseFile.spec.js: supports REST end-to-end file create, read, delete, read
    // spec: ParseFile.spec.js: blocks file deletions with missing or incorrect master-key header
    // spec: ParseFile.spec.js: handles other filetypes
    // spec: ParseFile.spec.js: filename is url encoded
    // spec: ParseFile.spec.js: validates filename characters
    // spec: ParseFile.spec.js: validates filename length
    // spec: ParseFile.spec.js: fails to upload an empty file
    // spec: ParseFile.spec.js: fails to upload without a file name
    // spec: ParseFile.spec.js: fails to delete an unkown file
    // spec: ParseFile.spec.js: content-type used with no extension
    @Test func uploadReadDelete() async throws {
        let files = try await Uploader()
        for contentType in ["application/octet-stream", nil] {
            let uploaded = try await files.upload("file.txt", "argle bargle", contentType: contentType)
            Self.expectUploaded(uploaded, named: "_file.txt")
            #expect(try await files.download(uploaded.json["url"]?.stringValue ?? "").text == "argle bargle")
        }
        let jpeg = try await files.upload("file.jpg", "argle bargle", contentType: "image/jpeg")
        Self.expectUploaded(jpeg, named: "_file.jpg")
        #expect(try await files.download(jpeg.json["url"]?.stringValue ?? "").text == "argle bargle")

        let test = try await files.upload("testfile.txt", "check one two", contentType: "image/jpeg")
        Self.expectUploaded(test, named: "_testfile.txt")
        let name = try #require(test.json["name"]?.stringValue), url = try #require(test.json["url"]?.stringValue)
        #expect(try await files.download(url).text == "check one two")
        for key in [nil, "tryagain"] {
            var headers = ["X-Parse-REST-API-Key": "rest"]
            headers["X-Parse-Master-Key"] = key
            let refused = try await files.server.request("DELETE", "/files/\(name)", headers: headers)
            #expect(refused.status == 403)
            #expect(refused.json["error"]?.stringValue?.contains("unauthorized") == true)
        }
        #expect(try await files.server.request("DELETE", "/files/\(name)", master: true).status == 200)
        #expect(try await files.download(url).status == 404)
        let unknown = try await files.server.request("DELETE", "/files/file.txt", headers: ["Content-Type": "application/octet-stream"], master: true)
        #expect(unknown.status == 400)
        #expect(unknown.code == 153 && unknown.json["error"]?.stringValue?.isEmpty == false)

        let spaced = try await files.upload("hello%20world.txt", "oh emm gee", contentType: "text/plain")
        #expect(spaced.json["url"]?.stringValue?.contains("hello%20world") == true, "\(spaced.text)")
        expectError(try await files.upload("di$avowed.txt", "will fail", contentType: "text/plain"), 122)
        let longName = "OnceuponamidnightdrearywhileiponderedweakandwearyOveramanyquaintandcuriousvolumeof"
            + "forgottenloreWhileinoddednearlynappingsuddenlytherecameatapping"
        expectError(try await files.upload(longName, "will fail", contentType: "text/plain"), 122)
        let empty = try await files.upload("file.txt", "", contentType: "application/octet-stream")
        #expect(empty.status == 400)
        #expect(empty.text == #"{"code":130,"error":"Invalid file upload."}"#)
        let unnamed = try await files.upload("", "yolo", contentType: "application/octet-stream")
        #expect(unnamed.status == 400)
        #expect(unnamed.text == #"{"code":122,"error":"Filename not provided."}"#)

        // An upload named without an extension takes one from its type (the master key may send HTML).
        let html = try await files.server.request("POST", "/files/file", body: Data("fee fi fo".utf8),
                                                  headers: ["Content-Type": "text/html"], master: true)
        #expect(html.json["name"]?.stringValue?.hasSuffix(".html") == true, "\(html.text)")
        #expect(try await files.download(html.json["url"]?.stringValue ?? "").headers["content-type"]?.hasPrefix("text/html") == true)
    }

    // spec: ParseFile.spec.js: supports array of files
    // spec: ParseFile.spec.js: supports a dictionary with file
    // spec: ParseFile.spec.js: supports files in objects without urls
    // spec-differs: ParseFile.spec.js: creates correct url for old files hosted on files.parsetfss.com -- only with Parse's `fileKey` option (the spec's server sets one); without it, Parse's default, the URL is the server's own, as here
    // spec-differs: ParseFile.spec.js: creates correct url for old files hosted on files.parse.com -- as above: no `fileKey`, so the server's own URL
    @Test func filesInObjects() async throws {
        let server = try TestServer()
        let file: JSON = ["__type": "File", "url": "http://meep.meep", "name": "meep"]
        let array = try await server.create("FilesArrayTest", ["files": [file, file]])
        #expect(try await server.fetch("FilesArrayTest", array)["files"] == [file, file])
        let dictionary = try await server.create("FileObjTest", ["obj": ["file": file]])
        #expect(try await server.fetch("FileObjTest", dictionary)["obj"] == ["file": file])

        let plain = try await server.create("FileTest", ["file": ["__type": "File", "name": "123.txt"]])
        #expect(try await server.fetch("FileTest", plain)["file"]?["url"]?.stringValue?.hasSuffix("123.txt") == true)
        for name in ["tfss-123.txt", "d6e80979-a128-4c57-a167-302f874700dc-123.txt"] {
            let old = try await server.create("OldFileTest", ["oldfile": ["__type": "File", "url": "http://irrelevant.elephant/", "name": .string(name)]])
            let url = try await server.fetch("OldFileTest", old)["oldfile"]?["url"]?.stringValue
            #expect(url == "\(server.baseURL)/files/\(TestServer.applicationId)/\(name)")
        }
    }

    // spec: ParseFile.spec.js: does not crash on file request with invalid app ID
    // spec: ParseFile.spec.js: does not crash on file request with invalid path
    // spec: ParseFile.spec.js: does not crash on file metadata request with invalid app ID
    // spec: ParseFile.spec.js: supports range requests
    // spec: ParseFile.spec.js: supports small range requests
    // spec: ParseFile.spec.js: supports getting one byte
    // spec: ParseFile.spec.js: supports getting last n bytes
    // spec: ParseFile.spec.js: supports getting first n bytes
    // spec: ParseFile.spec.js: supports large range requests
    // spec: ParseFile.spec.js: fails to stream unknown file
    // spec: ParseFile.spec.js: supports bytes range out of range
    // spec: ParseFile.spec.js: supports bytes range if end greater than start
    // spec: ParseFile.spec.js: supports bytes range if end is undefined
    // spec: ParseFile.spec.js: supports bytes range if start and end undefined
    // spec: ParseFile.spec.js: supports bytes range if end is greater than size
    // spec: ParseFile.spec.js: supports bytes range with 0 length
    @Test func downloads() async throws {
        let files = try await Uploader()
        let server = files.server
        let wrongApp = try await server.request("GET", "/files/invalid-id/invalid-file.txt", appId: false)
        #expect(wrongApp.status == 403)
        #expect(wrongApp.json == ["code": 119, "error": "Invalid application ID."])
        let badPath = try await server.request("GET", "/files/invalid-id//invalid-path/%20/invalid-file.txt", appId: false)
        #expect(badPath.status == 403)
        #expect(badPath.json == ["error": "unauthorized"])
        let metadata = try await server.request("GET", "/files/invalid-id/metadata/invalid-file.txt", appId: false)
        #expect(metadata.status == 200)
        #expect(metadata.json == [:])
        #expect(try await server.request("GET", "/health", appId: false).json == ["status": "ok"])

        let short = try await files.upload("file.txt", "argle bargle", contentType: "application/octet-stream")
        let shortURL = try #require(short.json["url"]?.stringValue)
        for (range, expected) in [("bytes=0-5", "argle "), ("bytes=0-2", "arg"), ("bytes=2-2", "g")] {
            let part = try await files.download(shortURL, range: range)
            #expect(part.status == 206, "\(range)")
            #expect(part.text == expected, "\(range)")
        }
        let different = try await files.upload("file.txt", "something different", contentType: "application/octet-stream")
        let differentURL = try #require(different.json["url"]?.stringValue)
        #expect(try await files.download(differentURL, range: "bytes=-4").text == "rent")
        #expect(try await files.download(differentURL, range: "bytes=10-").text == "different")
        let long = String(repeating: "argle bargle", count: 101)
        let large = try await files.upload("file.txt", long, contentType: "application/octet-stream")
        let largeURL = try #require(large.json["url"]?.stringValue)
        let middle = try await files.download(largeURL, range: "bytes=13-240")
        #expect(middle.text.count == 228 && middle.text.hasPrefix("rgle barglea"))
        let ranges = [("bytes=15000-18000", "bytes 1212-1212/1212"), ("bytes=15000-100", "bytes 100-1212/1212"),
                      ("bytes=100-", "bytes 100-1212/1212"), ("bytes=0-2000", "bytes 0-1212/1212")]
        for (range, contentRange) in ranges {
            #expect(try await files.download(largeURL, range: range).headers["content-range"] == contentRange, "\(range)")
        }
        let whole = try await files.download(largeURL)
        #expect(whole.status == 200 && whole.headers["content-range"] == nil && whole.text == long)
        let one = try await files.upload("file.txt", "a", contentType: "application/octet-stream")
        #expect(try await files.download(one.json["url"]?.stringValue ?? "", range: "bytes=-2000").headers["content-range"] == "bytes 0-1/1")

        let unknown = try await server.request("GET", "/files/\(TestServer.applicationId)/file.txt", headers: ["Range": "bytes=13-240"], appId: false)
        #expect(unknown.status == 404)
        #expect(unknown.text == "File not found.")
    }

    // spec: ParseFile.spec.js: allows file upload only for authenticated user by default
    // spec: ParseFile.spec.js: allows file upload with master key
    // spec: ParseFile.spec.js: works with _ContentType
    @Test func whoMayUpload() async throws {
        let server = try TestServer(arguments: fastHashing)
        let hello = Data("Hello World!".utf8)
        expectError(try await server.request("POST", "/files/hello.txt", body: hello, headers: ["Content-Type": "text/plain"]), 130,
                    "File upload by public is disabled.")
        let anonymous = try await server.request("POST", "/users", json: ["authData": ["anonymous": ["id": .string(newAnonymousId())]]])
        expectError(try await server.request("POST", "/files/hello.txt", body: hello, headers: [
            "Content-Type": "text/plain", "X-Parse-Session-Token": anonymous.json["sessionToken"]?.stringValue ?? "",
        ]), 130, "File upload by anonymous user is disabled.")
        let user = try await server.request("POST", "/users", json: ["username": "user", "password": "password"])
        #expect(try await server.request("POST", "/files/hello.txt", body: hello, headers: [
            "Content-Type": "text/plain", "X-Parse-Session-Token": user.json["sessionToken"]?.stringValue ?? "",
        ]).status == 201)
        #expect(try await server.request("POST", "/files/hello.txt", body: hello, headers: ["Content-Type": "text/plain"], master: true).status == 201)

        let files = try await Uploader(arguments: ["--file-extensions", "*"])
        let asJSON = try await files.uploadAsJSON("file", contentType: "text/html", base64: "PGh0bWw+PC9odG1sPgo=")
        Self.expectUploaded(asJSON, named: "_file.html")
        let html = try await files.download(asJSON.json["url"]?.stringValue ?? "")
        #expect(html.headers["content-type"]?.hasPrefix("text/html") == true)
        #expect(html.text == "<html></html>\n")
    }

    // spec: ParseFile.spec.js: works without Content-Type
    // spec: ParseFile.spec.js: default should allow common types
    // spec: ParseFile.spec.js: works with a period in the file name
    // spec: ParseFile.spec.js: works to stop invalid filenames
    // spec: ParseFile.spec.js: allows file without extension
    // spec: ParseFile.spec.js: works with array
    // spec: ParseFile.spec.js: works with array without Content-Type
    // spec: ParseFile.spec.js: works with array with correct file type
    @Test func fileExtensions() async throws {
        let refusal = "File upload of extension html is disabled."
        let defaults = try await Uploader()
        expectError(try await defaults.upload("file.html", "<html></html>\n"), 130, refusal)
        for type in ["plain", "txt", "png", "jpg", "gif", "doc"] {
            #expect(try await defaults.uploadAsJSON("parse-server-logo.\(type)", contentType: "", base64: "ParseA==").status == 201, "\(type)")
        }

        let notHTML = try await Uploader(arguments: ["--file-extensions", "^[^hH][^tT][^mM][^lL]?$"])
        for name in ["file.png.html", "file.txt.png.html", "file.png.txt.html"] {
            expectError(try await notHTML.upload(name, "<html></html>\n"), 130, refusal)
        }
        for name in ["!invalid.png", ".png", ".html", "%20.html", ".png.html", "~invalid.png", "-invalid.png"] {
            expectError(try await notHTML.upload(name, "<html></html>\n"), 122, "Filename contains invalid characters.")
        }
        #expect(try await notHTML.upload("filenamewithoutextension", "<html></html>\n").status == 201)

        let media = try await Uploader(arguments: ["--file-extensions", "jpg,wav"])
        expectError(try await media.uploadAsJSON("file", contentType: "text/html", base64: "PGh0bWw+PC9odG1sPgo="), 130, refusal)
        #expect(try await media.uploadAsJSON("file", contentType: "image/jpg", base64: "PGh0bWw+PC9odG1sPgo=").status == 201)
        #expect(try await media.uploadAsJSON("file", contentType: "audio/wav",
                                             base64: "UklGRigAAABXQVZFZm10IBIAAAABAAEARKwAAIhYAQACABAAAABkYXRhAgAAAAEA").status == 201)
        let jpgOnly = try await Uploader(arguments: ["--file-extensions", "jpg"])
        expectError(try await jpgOnly.upload("file.html", "<html></html>\n"), 130, refusal)
        let htmlAllowed = try await Uploader(arguments: ["--file-extensions", "html"])
        Self.expectUploaded(try await htmlAllowed.uploadAsJSON("file", contentType: "text/html", base64: "PGh0bWw+PC9odG1sPgo="), named: "_file.html")
    }

    // spec: ParseFile.spec.js: return with publicServerURL when provided
    /// With `--public-server-url`, file URLs and `Location` headers start with it (Parse's `Config.mount`): clients
    /// behind a proxy reach the server there, not at the address it listens on.
    @Test func fileURLsStartWithThePublicServerURL() async throws {
        let uploader = try await Uploader(arguments: ["--public-server-url", "https://mydomain/parse/"])
        let uploaded = try await uploader.upload("hello.txt", "Hello World!", contentType: "text/plain")
        #expect(uploaded.status == 201, "\(uploaded.text)")
        let url = try #require(uploaded.json["url"]?.stringValue)
        #expect(url.hasPrefix("https://mydomain/parse/files/\(TestServer.applicationId)/"), "\(url)")
        #expect(uploaded.headers["location"] == url)
        let saved = try await uploader.server.request("POST", "/classes/FileTest", json: ["file": ["__type": "File", "name": "123.txt"]])
        let id = try #require(saved.json["objectId"]?.stringValue)
        #expect(saved.headers["location"] == "https://mydomain/parse/classes/FileTest/\(id)")
        let fetched = try await uploader.server.request("GET", "/classes/FileTest/\(id)")
        #expect(fetched.json["file"]?["url"] == .string("https://mydomain/parse/files/\(TestServer.applicationId)/123.txt"))
    }
}
