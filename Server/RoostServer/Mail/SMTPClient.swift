import CCurl
import Foundation

/// Why a mail was not handed to the SMTP server. `isPermanent`: the server refused it for good (a 5xx
/// reply, such as an unknown recipient), so sending it again would fail again.
struct SMTPError: Error, CustomStringConvertible {
    let code: Int32
    let reply: Int
    let message: String

    /// A 5xx reply, except a refused login (535): that is the configuration's fault, and mails wait for it to be fixed.
    var isPermanent: Bool { reply >= 500 && reply < 600 && code != Int32(CURLE_LOGIN_DENIED.rawValue) }
    var description: String { reply > 0 ? "\(message) (SMTP reply \(reply))" : message }
}

/// One libcurl easy handle used as an SMTP client (`smtp://`, `smtps://`; STARTTLS when the server offers
/// it, required when the URL carries a password). Owns the handle: created in `init`, cleaned up in
/// `deinit`. Not `Sendable`: one thread (the mail sender) uses it. Never logs the URL (it may hold a password).
final class SMTPClient {
    private let handle: UnsafeMutableRawPointer
    private let url: String
    private let requiresTLS: Bool

    private let certificateAuthorities: String?

    /// - Parameter certificateAuthorities: a PEM file to verify the server's certificate with (libcurl's system store otherwise).
    /// - Throws: `SMTPError` when libcurl cannot be loaded or make a handle.
    init(url: String, certificateAuthorities: String? = nil) throws {
        if let failure = roost_curl_load() { throw SMTPError(code: -1, reply: 0, message: String(cString: failure)) }
        guard let handle = roost_curl_easy_init() else { throw SMTPError(code: -1, reply: 0, message: "curl_easy_init failed") }
        self.handle = handle
        self.url = url
        self.certificateAuthorities = certificateAuthorities
        let components = URLComponents(string: url)
        requiresTLS = components?.scheme == "smtps" || components?.password != nil
    }

    deinit { roost_curl_easy_cleanup(handle) }

    /// Hands `message` (a whole RFC 5322 message, CRLF line ends) to the SMTP server for `recipient`.
    /// Blocks until the server has accepted or refused it, or a timeout passes (10 s to connect, 60 s in all).
    func send(from sender: String, to recipient: String, message: [UInt8]) throws {
        roost_curl_easy_reset(handle)
        var list: UnsafeMutablePointer<curl_slist>? = nil
        list = roost_curl_slist_append(list, "<\(recipient)>")
        defer { roost_curl_slist_free_all(list) }
        var buffer = message
        try buffer.withUnsafeMutableBytes { bytes in
            guard let file = fmemopen(bytes.baseAddress, bytes.count, "r") else {
                throw SMTPError(code: -1, reply: 0, message: "fmemopen failed: \(String(cString: strerror(errno)))")
            }
            defer { fclose(file) }
            try check(roost_curl_set_string(handle, CURLOPT_URL, url))
            try check(roost_curl_set_string(handle, CURLOPT_MAIL_FROM, "<\(sender)>"))
            try check(roost_curl_set_pointer(handle, CURLOPT_MAIL_RCPT, UnsafeMutableRawPointer(list)))
            try check(roost_curl_set_long(handle, CURLOPT_UPLOAD, 1))
            try check(roost_curl_set_pointer(handle, CURLOPT_READDATA, UnsafeMutableRawPointer(file)))
            try check(roost_curl_set_long(handle, CURLOPT_INFILESIZE, bytes.count))
            let tls = requiresTLS ? CURLUSESSL_ALL : CURLUSESSL_TRY
            try check(roost_curl_set_long(handle, CURLOPT_USE_SSL, Int(tls.rawValue)))
            if let certificateAuthorities { try check(roost_curl_set_string(handle, CURLOPT_CAINFO, certificateAuthorities)) }
            try check(roost_curl_set_long(handle, CURLOPT_NOSIGNAL, 1))  // Timeouts without SIGALRM (threads).
            try check(roost_curl_set_long(handle, CURLOPT_CONNECTTIMEOUT, 10))
            try check(roost_curl_set_long(handle, CURLOPT_TIMEOUT, 60))
            try check(roost_curl_easy_perform(handle))
        }
    }

    /// Throws libcurl's own description of a failed call, with the SMTP server's last reply code.
    private func check(_ code: CURLcode) throws {
        guard code != CURLE_OK else { return }
        throw SMTPError(code: Int32(code.rawValue), reply: roost_curl_response_code(handle), message: String(cString: roost_curl_easy_strerror(code)))
    }
}
