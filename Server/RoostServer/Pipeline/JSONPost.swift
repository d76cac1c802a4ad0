import CCurl
import Foundation

/// One JSON `POST` to another server through libcurl (webhooks, Apple's receipt check).
enum JSONPost {
    struct Reply {
        let status: Int
        let body: [UInt8]
    }

    /// POSTs `body` and returns the reply (whatever its status), or nil when there is none in time or it is larger than
    /// `maxReplyBytes`. Blocks the calling thread at most `timeout` in all: a server that trickles its reply does not
    /// hold on longer.
    static func post(_ body: [UInt8], to url: String, header: String?, within timeout: TimeInterval, maxReplyBytes: Int) -> Reply? {
        var reply: UnsafeMutablePointer<CChar>?
        var length = 0
        var status = 0
        let milliseconds = Int(min(max(timeout, 0.001), 86_400) * 1000)
        let code = body.withUnsafeBytes { bytes in
            withOptionalCString(header) { header in
                roost_curl_post_json(url, header, bytes.baseAddress, bytes.count, milliseconds, maxReplyBytes, &reply, &length, &status)
            }
        }
        defer { free(reply) }
        guard code == CURLE_OK else { return nil }
        return Reply(status: status, body: reply.map { Array(UnsafeRawBufferPointer(start: $0, count: length)) } ?? [])
    }
}

/// `body` given `text` as a C string, or NULL.
private func withOptionalCString<Result>(_ text: String?, _ body: (UnsafePointer<CChar>?) -> Result) -> Result {
    guard let text else { return body(nil) }
    return text.withCString { body($0) }
}
