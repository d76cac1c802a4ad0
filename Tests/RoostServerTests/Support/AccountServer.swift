import Foundation
import RoostTestSupport
import RoostCore
import Testing

/// A Roost server with a mailer: a real SMTP server (`SMTPSink`) and `--public-server-url` naming the
/// server's own port, so the links in the mails reach it. As Parse's account specs configure it
/// (`appName: 'coolapp'`), plus `extra` flags.
final class AccountServer: @unchecked Sendable {
    let sink: SMTPSink
    let api: RecordingServer
    let port: Int
    var publicURL: String { "http://127.0.0.1:\(port)/parse" }

    /// - Parameter smtpURLFromEnvironment: the SMTP URL is `ROOST_SMTP_URL` in `environment` (a URL with a password,
    ///   kept off the command line), not the sink's plain `smtp://` one.
    init(_ extra: [String] = [], sink: SMTPSink? = nil, port: Int? = nil, dataDirectory: URL? = nil,
         environment: [String: String] = [:], smtpURLFromEnvironment: Bool = false) throws {
        self.sink = try sink ?? SMTPSink()
        self.port = try port ?? AccountServer.freePort()
        let smtp = smtpURLFromEnvironment ? [] : ["--smtp-url", self.sink.url]
        api = try RecordingServer(arguments: fastHashing + ["--port", String(self.port)] + smtp + [
            "--app-name", "coolapp", "--public-server-url", "http://127.0.0.1:\(self.port)/parse",
        ] + extra, dataDirectory: dataDirectory, environment: environment)
    }

    /// A page request as a browser without JavaScript makes it, redirects not followed: the status, the
    /// `Location` and the body. `form` makes it a form POST.
    func page(_ url: String, form: [(String, String)]? = nil, headers: [String: String] = [:]) throws -> PageResponse {
        let target = url.hasPrefix("http") ? String(url.drop { $0 != "/" }.dropFirst(2).drop { $0 != "/" }) : url
        var request = "\(form == nil ? "GET" : "POST") \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        if let form {
            let body = form.map { "\(formEncode($0.0))=\(formEncode($0.1))" }.joined(separator: "&")
            request += "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
        } else {
            request += "\r\n"
        }
        let (head, body) = try RawConnection(port: port).exchange(request)
        let lines = head.split(separator: "\r\n")
        let status = lines.first.flatMap { Int($0.split(separator: " ")[1]) } ?? 0
        let location = lines.first { $0.lowercased().hasPrefix("location:") }.map { String($0.dropFirst(9)).trimmingCharacters(in: .whitespaces) }
        let response = PageResponse(status: status, location: location, body: body, head: head)
        return response
    }

    /// Follows a mailed link to its end: each redirect taken, as a browser would; returns the last answer.
    func follow(_ url: String) throws -> (final: PageResponse, visited: [String]) {
        var visited = [url]
        var response = try page(url)
        while response.status == 302, let next = response.location, visited.count < 5 {
            visited.append(next)
            response = try page(next)
        }
        return (response, visited)
    }

    private func formEncode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
    }

    /// A port that is free now, below the ephemeral range (servers started on port 0 cannot take it first).
    static func freePort() throws -> Int {
        for _ in 0..<100 {
            let port = Int.random(in: 20_000..<32_000)
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = UInt16(port).bigEndian
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            close(descriptor)
            if bound == 0 { return port }
        }
        throw TestServerError.unexpected(0, "no free port")
    }
}

struct PageResponse {
    let status: Int
    let location: String?
    let body: String
    let head: String
}

/// The token of a mailed link (`…?token=<token>&username=…`).
func token(in link: String?) -> String? {
    guard let link, let range = link.range(of: #"token=[^&]+"#, options: .regularExpression) else { return nil }
    return String(link[range].dropFirst(6))
}

/// Turns off the interval in which a link asked for again is not mailed again (Parse's specs ask back to back).
let noResendInterval = ["ROOST_TEST_ACCOUNT_MAIL_INTERVAL_S": "0"]
