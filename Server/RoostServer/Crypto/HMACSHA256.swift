import COpenSSL

/// HMAC-SHA256 (OpenSSL's one-shot `HMAC`): keyed digests the server can compute again and nobody without the key can.
public enum HMACSHA256 {
    public static func digest(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: 32)
        var size: UInt32 = 0
        // As SHA256.hex: a failure would give every message the same digest, so stop rather than go on with it.
        precondition(HMAC(EVP_sha256(), key, Int32(key.count), message, message.count, &output, &size) != nil && size == 32,
                     "HMAC-SHA256 failed")
        return output
    }
}
