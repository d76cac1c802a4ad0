import Foundation
import RoostCore
import RoostTestSupport
import Testing

/// The account pages and mails beyond Parse's specs: templates from the data directory, and what a hostile
/// client can send to the pages (never a 500, never a crash).
@Suite struct AccountPagesTests {
    @Test func templatesFromTheDataDirectory() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("roost-test-\(UUID().uuidString)")
        let mail = directory.appendingPathComponent("mail")
        try FileManager.default.createDirectory(at: mail, withIntermediateDirectories: true)
        try "Reset for %username% at %appname%\n".write(to: mail.appendingPathComponent("password_reset_subject.txt"), atomically: true, encoding: .utf8)
        try "Dear %username% (%email%),\n%link%\n100% yours, %appname%".write(
            to: mail.appendingPathComponent("password_reset.txt"), atomically: true, encoding: .utf8)
        try "<p>Dear %username%</p><a href=\"%link%\">reset</a>".write(
            to: mail.appendingPathComponent("password_reset.html"), atomically: true, encoding: .utf8)
        let accounts = try AccountServer(dataDirectory: directory)
        _ = try await accounts.api.signUp("<b>%link%</b>", "asdf", ["email": "user@parse.com"])
        _ = try await accounts.api.send("POST", "/requestPasswordReset", json: ["email": "user@parse.com"])
        let received = try #require(try await accounts.sink.waitForMails(1).first)
        #expect(received.subject == "Reset for <b>%link%</b> at coolapp")  // A value is not read as a placeholder.
        let link = try #require(received.link)
        #expect(received.text == "Dear <b>%link%</b> (user@parse.com),\n\(link)\n100% yours, coolapp")
        let escapedLink = link.replacingOccurrences(of: "&", with: "&amp;")  // HTML-escaped in the HTML part, as every value.
        #expect(received.html == "<p>Dear &lt;b&gt;%link%&lt;/b&gt;</p><a href=\"\(escapedLink)\">reset</a>")
        #expect(link.hasSuffix("&username=%3Cb%3E%25link%25%3C%2Fb%3E"))
        // The choose-password page escapes the username too.
        let form = try accounts.follow(link).final
        #expect(form.status == 200 && form.body.contains("&lt;b&gt;%link%&lt;/b&gt;") && !form.body.contains("<b>%link%"))
    }

    @Test func hostilePageRequestsGetNoServerError() async throws {
        let accounts = try AccountServer(["--verify-user-emails"])
        _ = try await accounts.api.signUp("zxcv", "asdf", ["email": "user@parse.com"])
        let app = TestServer.applicationId
        let requests: [(String, [(String, String)]?, [String: String])] = [
            ("/parse/apps/\(app)/verify_email?token=%ZZ&username=%00", nil, [:]),
            ("/parse/apps/\(app)/verify_email?token[]=a&token[]=b&username=zxcv", nil, [:]),
            ("/parse/apps/\(app)/request_password_reset?token=\(String(repeating: "a", count: 8000))&username=zxcv", nil, [:]),
            ("/parse/apps/choose_password?id=\(app)&username=%3Cscript%3E&token=%22%3E&error=%3Cimg%3E", nil, [:]),
            ("/parse/apps/\(app)/request_password_reset", [("username", "zxcv"), ("token", "x"), ("new_password", "y")], [:]),
            ("/parse/apps/\(app)/request_password_reset", [("username", "zxcv")], ["X-Requested-With": "XMLHttpRequest"]),
            ("/parse/apps/\(app)/resend_verification_email", [("username", String(repeating: "é", count: 5000))], [:]),
            ("/parse/apps/\(app)/nothing", nil, [:]),
            ("/parse/apps/a/b/c/d", nil, [:]),
            ("/parse/apps/", nil, [:]),
            ("/parse/apps/../../etc/passwd", nil, [:]),
        ]
        for (path, form, headers) in requests {
            let response = try accounts.page(path, form: form, headers: headers)
            #expect((200..<500).contains(response.status), "\(path): \(response.head)")
        }
        // JSON bodies with values that are not strings, and one that is not JSON.
        for body in [#"{"username":["zxcv"],"token":{"a":1},"new_password":5}"#, #"{"username":"#, "\u{0}\u{1}"] {
            let raw = "POST /parse/apps/\(app)/request_password_reset HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                + "X-Requested-With: XMLHttpRequest\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
            let (head, _) = try RawConnection(port: accounts.port).exchange(raw)
            #expect(head.hasPrefix("HTTP/1.1 400"), "\(body): \(head)")
        }
        // The choose-password page escapes what the query carries.
        let page = try accounts.page("/parse/apps/choose_password?id=\(app)&username=%3Cscript%3E&token=%22%3E&error=%3Cimg%3E")
        #expect(!page.body.contains("<script>") && !page.body.contains("<img>") && !page.body.contains("\"\">"))
        #expect(!accounts.api.server.log().contains("internal error"))
    }
    /// A new password set another way (`PUT /users/<id>`) ends the reset links mailed before, as an email change does.
    @Test func aPasswordChangeEndsResetLinks() async throws {
        let accounts = try AccountServer()
        let account = try await accounts.api.signUp("zxcv", "asdf", ["email": "user@parse.com"])
        _ = try await accounts.api.send("POST", "/requestPasswordReset", json: ["email": "user@parse.com"])
        let link = try #require(try await accounts.sink.waitForMails(1).first?.link)
        #expect(try await accounts.api.send("PUT", "/users/\(account.id)", json: ["password": "changed"], token: account.token).status == 200)
        #expect(try accounts.page(link).location == "\(accounts.publicURL)/apps/invalid_link.html")
        let resetToken = try #require(token(in: link))
        let late = try accounts.page("/parse/apps/\(TestServer.applicationId)/request_password_reset",
                                     form: [("new_password", "mine now"), ("token", resetToken), ("username", "zxcv")])
        #expect(late.location?.contains("error=Failed%20to%20reset%20password") == true)
        _ = try await accounts.api.logIn("zxcv", "changed")
    }
}
