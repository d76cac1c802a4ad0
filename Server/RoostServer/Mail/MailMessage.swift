import Foundation
import RoostCore

/// A mail as the SMTP server receives it (RFC 5322 + MIME): a text part and, when given, an HTML part
/// (`multipart/alternative`), each base64-encoded so any UTF-8 and any line length pass unchanged.
struct MailMessage {
    /// The sender's address, and the name shown with it (the app's).
    let from: String
    let fromName: String?
    let to: String
    let subject: String
    let text: String
    let html: String?

    /// Whether `address` can be used in an SMTP envelope and a header as it is: no spaces, angle
    /// brackets or control characters (a CR LF in it would start another SMTP command or header).
    static func isDeliverable(_ address: String) -> Bool {
        guard UserWriter.isPlausibleEmail(address), address.utf8.count <= 254 else { return false }
        return !address.unicodeScalars.contains { $0.value < 0x21 || $0.value == 0x7F || "<>()[],;:\\\"".unicodeScalars.contains($0) }
    }

    /// The whole message, lines ending in CR LF.
    func encoded(date: Date = Date(), messageId: String) -> [UInt8] {
        var lines = [
            "From: " + (fromName.map { "\(Self.encodedWord($0).replacingOccurrences(of: "\"", with: "")) " } ?? "") + "<\(from)>",
            "To: <\(to)>",
            "Subject: \(Self.encodedWord(subject))",
            "Date: \(Self.rfc5322Date(date))",
            "Message-ID: <\(messageId)>",
            "MIME-Version: 1.0",
        ]
        if let html {
            let boundary = "roost-" + messageId.prefix(24).filter { $0.isLetter || $0.isNumber }
            lines.append("Content-Type: multipart/alternative; boundary=\"\(boundary)\"")
            lines.append("")
            for (type, body) in [("text/plain", text), ("text/html", html)] {
                lines.append("--\(boundary)")
                lines += Self.part(type: type, body: body)
            }
            lines.append("--\(boundary)--")
        } else {
            lines += Self.part(type: "text/plain", body: text)
        }
        return Array((lines.joined(separator: "\r\n") + "\r\n").utf8)
    }

    /// A part's headers, a blank line, and its body in base64 lines of 76 characters.
    private static func part(type: String, body: String) -> [String] {
        let encoded = Base64.encode(Array(body.utf8))
        var lines = ["Content-Type: \(type); charset=utf-8", "Content-Transfer-Encoding: base64", ""]
        var start = encoded.startIndex
        while start < encoded.endIndex {
            let end = encoded.index(start, offsetBy: 76, limitedBy: encoded.endIndex) ?? encoded.endIndex
            lines.append(String(encoded[start..<end]))
            start = end
        }
        return lines
    }

    /// A header value as an RFC 2047 encoded word when it is not plain ASCII; line breaks become spaces.
    static func encodedWord(_ value: String) -> String {
        let flat = value.replacingOccurrences(of: "\r", with: " ").replacingOccurrences(of: "\n", with: " ")
        if flat.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7F }) { return flat }
        return "=?UTF-8?B?\(Base64.encode(Array(flat.utf8)))?="
    }

    private static func rfc5322Date(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss '+0000'"
        return formatter.string(from: date)
    }
}
