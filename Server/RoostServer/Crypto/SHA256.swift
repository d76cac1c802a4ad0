import COpenSSL

/// SHA-256 as lowercase hex.
///
/// Every authenticated request computes one (its session token's), so this avoids OpenSSL 3's one-shot
/// `SHA256()`, which looks the algorithm up on each call (the fetched one is kept), and per-byte arrays for the hex.
public enum SHA256 {
    public static func hex(_ bytes: [UInt8]) -> String {
        var output = [UInt8](repeating: 0, count: 32)
        var size: UInt32 = 0
        // A failure here would give every input the same digest: stop rather than mix up sessions or requests.
        precondition(EVP_Digest(bytes, bytes.count, &output, &size, algorithm, nil) == 1 && size == 32, "SHA-256 failed")
        var hex: [UInt8] = []
        hex.reserveCapacity(64)
        for byte in output {
            hex.append(hexDigits[Int(byte >> 4)])
            hex.append(hexDigits[Int(byte & 0xF)])
        }
        return String(decoding: hex, as: UTF8.self)
    }

    /// Fetched once; OpenSSL objects are safe to share between threads once fetched.
    nonisolated(unsafe) private static let algorithm = EVP_MD_fetch(nil, "SHA256", nil)
    private static let hexDigits = Array("0123456789abcdef".utf8)
}
