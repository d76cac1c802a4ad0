import Foundation
import RoostCore
import Testing

/// Parse Server's spec/PublicAPI.spec.js: the pages under `<mount>/apps/` (its default `PublicAPIRouter`).
@Suite struct PublicAPISpecTests {
    private let appId = TestServer.applicationId

    // spec: PublicAPI.spec.js: should return missing username error on ajax request without username provided
    // spec: PublicAPI.spec.js: should return missing token error on ajax request without token provided
    // spec: PublicAPI.spec.js: should return missing password error on ajax request without password provided
    @Test func ajaxResetsAnswerJSONWhateverTheHeadersCase() throws {
        let accounts = try AccountServer()
        let cases: [(String, String)] = [
            ("new_password=user1&token=43634643&username=", #"{"code":200,"error":"Missing username"}"#),
            ("new_password=user1&token=&username=Johnny", #"{"code":-1,"error":"Missing token"}"#),
            ("new_password=&token=132414&username=Johnny", #"{"code":201,"error":"Missing password"}"#),
        ]
        for spelling in ["XMLHttpRequest", "xmlhttprequest"] {
            for (form, expected) in cases {
                let fields = form.split(separator: "&").map { pair in
                    let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                    return (parts[0], parts[1])
                }
                let answer = try accounts.page("/parse/apps/\(appId)/request_password_reset", form: fields, headers: ["X-Requested-With": spelling])
                #expect(answer.status == 400 && answer.body == expected, "\(spelling) \(form): \(answer.status) \(answer.body)")
            }
        }
    }

    // spec: PublicAPI.spec.js: should get invalid_link.html
    // spec: PublicAPI.spec.js: should get verify_email_success.html
    // spec: PublicAPI.spec.js: should get password_reset_success.html
    // spec: PublicAPI.spec.js: should get 404 on verify_email
    @Test func resultPagesAreServedWithoutAPublicURL() throws {
        let server = try TestServer()  // No `--public-server-url`.
        for page in ["invalid_link.html", "verify_email_success.html", "password_reset_success.html", "invalid_verification_link.html"] {
            let (head, body) = try RawConnection(port: server.port).exchange("GET /parse/apps/\(page) HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(head.hasPrefix("HTTP/1.1 200") && body.contains("<html"), "\(page): \(head)")
        }
        let (head, body) = try RawConnection(port: server.port).exchange(
            "GET /parse/apps/\(appId)/verify_email?token=a&username=b HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(head.hasPrefix("HTTP/1.1 404") && body == "Not found.")
    }
}
