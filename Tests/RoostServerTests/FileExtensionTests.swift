import Foundation
import RoostCore
import Testing

/// Files are served from the API's origin, so an uploaded page or SVG would run script there (stored
/// XSS). As Parse Server (`fileUpload.fileExtensions`): clients may not upload HTML, SVG or XML by
/// default (130 `File upload of extension <ext> is disabled.`), `--file-extensions` changes the list,
/// and the master key is not held to it. Every download carries `X-Content-Type-Options: nosniff`, and
/// active types are sent as attachments.
@Suite struct FileExtensionTests {
    let page = Data("<html><script>alert(document.cookie)</script></html>".utf8)

    func upload(_ server: TestServer, _ name: String, contentType: String, token: String?, master: Bool = false) async throws -> TestResponse {
        var headers = ["Content-Type": contentType]
        if let token { headers["X-Parse-Session-Token"] = token }
        return try await server.request("POST", "/files/\(name)", body: page, headers: headers, master: master)
    }

    func signUp(_ server: TestServer) async throws -> String {
        let response = try await server.request("POST", "/users", json: ["username": "uploader", "password": "pw-uploader"])
        return try #require(response.json["sessionToken"]?.stringValue)
    }

    @Test func activeTypesAreRefusedToClientsByDefault() async throws {
        let server = try TestServer(arguments: fastHashing)
        let token = try await signUp(server)
        let refused: [(name: String, contentType: String, ext: String)] = [
            ("page.html", "text/html", "html"), ("page.HTM", "text/plain", "HTM"), ("page.xhtml", "application/xhtml+xml", "xhtml"),
            ("image.svg", "image/svg+xml", "svg"), ("image.SVG", "application/octet-stream", "SVG"), ("data.xml", "text/xml", "xml"),
            ("page", "text/html", "html"), ("image", "image/svg+xml", "svg+xml"),
            // Parse would read `html;charset=utf-8` here; the file would still be stored and served as .html.
            ("page", "text/html; charset=utf-8", "html"),
        ]
        for item in refused {
            let response = try await upload(server, item.name, contentType: item.contentType, token: token)
            #expect(response.status == 400, "\(item.name) \(item.contentType): \(response.text)")
            #expect(response.json == ["code": 130, "error": .string("File upload of extension \(item.ext) is disabled.")],
                    "\(item.name) \(item.contentType): \(response.text)")
        }
        // The JS SDK's form is held to it too.
        let form: JSON = [
            "base64": .string(Base64.encode(Array(page))), "_ContentType": "text/html",
            "_ApplicationId": .string(TestServer.applicationId), "_SessionToken": .string(token),
        ]
        let formUpload = try await server.request("POST", "/files/file", body: Data(form.encoded()), headers: ["Content-Type": "text/plain"],
                                                  appId: false)
        #expect(formUpload.json == ["code": 130, "error": "File upload of extension html is disabled."])

        // Other types upload as before, and are served with nosniff, not as attachments.
        let text = try await upload(server, "notes.txt", contentType: "text/plain", token: token)
        #expect(text.status == 201, "\(text.text)")
        let name = try #require(text.json["name"]?.stringValue)
        let download = try await server.request("GET", "/files/\(TestServer.applicationId)/\(name)", appId: false)
        #expect(download.status == 200)
        #expect(download.headers["content-type"] == "text/plain")
        #expect(download.headers["x-content-type-options"] == "nosniff")
        #expect(download.headers["content-disposition"] == nil)

        // The master key may upload a page; it is served as a download, never rendered in place.
        let masterUpload = try await upload(server, "report.html", contentType: "text/html", token: nil, master: true)
        #expect(masterUpload.status == 201, "\(masterUpload.text)")
        let pageName = try #require(masterUpload.json["name"]?.stringValue)
        let served = try await server.request("GET", "/files/\(TestServer.applicationId)/\(pageName)", appId: false)
        #expect(served.body == page)
        #expect(served.headers["content-disposition"] == "attachment")
        #expect(served.headers["x-content-type-options"] == "nosniff")
    }

    @Test func fileExtensionsFlagSetsTheAllowedList() async throws {
        let anything = try TestServer(arguments: fastHashing + ["--file-extensions", "*"])
        let token = try await signUp(anything)
        let page = try await upload(anything, "page.html", contentType: "text/html", token: token)
        #expect(page.status == 201, "\(page.text)")
        let name = try #require(page.json["name"]?.stringValue)
        let served = try await anything.request("GET", "/files/\(TestServer.applicationId)/\(name)", appId: false)
        #expect(served.headers["content-type"] == "text/html")
        #expect(served.headers["content-disposition"] == "attachment")

        // A list of patterns, each matched anywhere in the extension as Parse's `new RegExp(ext).test(...)`.
        let images = try TestServer(arguments: fastHashing + ["--file-extensions", "^png$, ^jpe?g$"])
        let imageToken = try await signUp(images)
        #expect(try await upload(images, "a.png", contentType: "image/png", token: imageToken).status == 201)
        #expect(try await upload(images, "a.jpeg", contentType: "image/jpeg", token: imageToken).status == 201)
        #expect(try await upload(images, "a", contentType: "image/jpeg", token: imageToken).status == 201)
        let text = try await upload(images, "a.txt", contentType: "text/plain", token: imageToken)
        #expect(text.json == ["code": 130, "error": "File upload of extension txt is disabled."])
    }
}
