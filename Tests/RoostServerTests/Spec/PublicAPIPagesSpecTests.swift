import Foundation
import RoostCore
import Testing

/// Parse Server's spec/PublicAPI.spec.js: the password and verification pages under `<mount>/apps/` with a
/// public URL, without one (404 `Not found.`), and for an application id that is not the server's (403).
/// As the spec's servers, these have an app name (`appName: 'unused'`) and no mailer.
@Suite struct PublicAPIPagesSpecTests {
    private let appId = TestServer.applicationId

    // spec: PublicAPI.spec.js: should get choose_password
    @Test func theChoosePasswordPageIsServedWithAPublicURL() async throws {
        let server = try TestServer(arguments: ["--app-name", "unused", "--public-server-url", "http://localhost:8378/1"])
        let page = try await server.request("GET", "/apps/choose_password", appId: false, query: ["id": appId])
        #expect(page.status == 200, "\(page.text)")
        #expect(page.headers["content-type"]?.hasPrefix("text/html") == true)
    }

    // spec: PublicAPI.spec.js: should get 404 choose_password
    // spec: PublicAPI.spec.js: should get 404 on request_password_reset
    @Test func withoutAPublicURLThePasswordPagesAreNotFound() async throws {
        let server = try TestServer(arguments: ["--app-name", "unused"])
        let choose = try await server.request("GET", "/apps/choose_password", appId: false, query: ["id": appId])
        #expect(choose.status == 404 && choose.text == "Not found.", "\(choose.status) \(choose.text)")
        let reset = try await server.request("GET", "/apps/\(appId)/request_password_reset", appId: false)
        #expect(reset.status == 404 && reset.text == "Not found.", "\(reset.status) \(reset.text)")
    }

    // spec: PublicAPI.spec.js: should get 403 on verify_email
    // spec: PublicAPI.spec.js: should get 403 choose_password
    // spec: PublicAPI.spec.js: should get 403 on get of request_password_reset
    // spec: PublicAPI.spec.js: should get 403 on post of request_password_reset
    // spec: PublicAPI.spec.js: should get 403 on resendVerificationEmail
    @Test func anotherApplicationIdIsForbidden() async throws {
        let server = try TestServer(arguments: ["--app-name", "unused"])
        let requests: [(String, String, [String: String])] = [
            ("GET", "/apps/invalid/verify_email", [:]),
            ("GET", "/apps/choose_password", ["id": "invalid"]),
            ("GET", "/apps/invalid/request_password_reset", [:]),
            ("POST", "/apps/invalid/request_password_reset", [:]),
            ("GET", "/apps/invalid/resend_verification_email", [:]),
        ]
        for (method, path, query) in requests {
            let answer = try await server.request(method, path, appId: false, query: query)
            #expect(answer.status == 403, "\(method) \(path): \(answer.status) \(answer.text)")
            #expect(answer.json == ["error": "unauthorized"], "\(method) \(path): \(answer.text)")
        }
    }
}
