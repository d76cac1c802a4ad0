import COpenSSL
import Foundation

/// The opening handshake of RFC 6455 §4.2: whether a request asks for a WebSocket, and the answer's
/// `Sec-WebSocket-Accept`. Pure: the HTTP layer does the switching.
enum WebSocketHandshake {
    /// RFC 6455 §1.3: appended to the client's key before hashing.
    static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// Why a request that asked for an upgrade cannot have one.
    enum Refusal: Error, Equatable {
        /// Not a GET, no `Connection: upgrade`, or a key that is not 16 bytes in base64 (400).
        case badRequest(String)
        /// A version other than 13: answered 426 with `Sec-WebSocket-Version: 13` (§4.4).
        case unsupportedVersion
    }

    /// Whether `headers` (lowercased names) ask to switch to WebSocket at all.
    static func isRequested(_ headers: [String: String]) -> Bool {
        headers["upgrade"].map { hasToken("websocket", in: $0) } ?? false
    }

    /// The `Sec-WebSocket-Accept` value for a valid upgrade request.
    /// - Throws: `Refusal` when the request breaks §4.2.1.
    static func accept(method: String, headers: [String: String]) throws -> String {
        guard method == "GET" else { throw Refusal.badRequest("WebSocket upgrades must use GET") }
        guard headers["connection"].map({ hasToken("upgrade", in: $0) }) ?? false else {
            throw Refusal.badRequest("missing Connection: Upgrade")
        }
        guard headers["sec-websocket-version"]?.trimmingCharacters(in: .whitespaces) == "13" else {
            throw Refusal.unsupportedVersion
        }
        guard let key = headers["sec-websocket-key"]?.trimmingCharacters(in: .whitespaces),
              let decoded = Data(base64Encoded: key), decoded.count == 16
        else { throw Refusal.badRequest("Sec-WebSocket-Key must be 16 bytes in base64") }
        return acceptValue(forKey: key)
    }

    /// base64(SHA-1(key + GUID)), RFC 6455 §4.2.2.
    static func acceptValue(forKey key: String) -> String {
        let input = Array((key + guid).utf8)
        var digest = [UInt8](repeating: 0, count: 20)
        var size: UInt32 = 0
        // A failure here would answer every client the same wrong value; their handshakes would all fail.
        precondition(EVP_Digest(input, input.count, &digest, &size, EVP_sha1(), nil) == 1 && size == 20, "SHA-1 failed")
        return Data(digest).base64EncodedString()
    }

    /// Whether a comma-separated header value holds `token` (case-insensitive), as `Connection: keep-alive, Upgrade`.
    private static func hasToken(_ token: String, in value: String) -> Bool {
        value.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces).lowercased() == token }
    }
}
