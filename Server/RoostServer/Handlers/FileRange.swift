import Foundation

/// A `Range: bytes=…` download, answered as Parse Server's default files adapter (GridFS) answers it:
/// 206 with `Content-Range: bytes <start>-<end>/<size>`, where `end` is one past the last byte sent (its
/// arithmetic, quirks included, so clients that learnt them keep working).
struct FileRange: Equatable {
    /// The bytes sent: `start..<end`.
    let start: Int
    let end: Int
    let size: Int

    /// The range a `Range` header asks of a file of `size` bytes; nil when Parse would send the whole file
    /// (no header, or one whose parts are not numbers).
    init?(header: String?, size: Int) {
        guard let header else { return nil }
        // Parse's `isFileStreamable`: `Number()` of the text around the first `-` (`bytes=0` is not a number, `5` is).
        let halves = header.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        let numberOf: (String) -> Double? = { text in text.isEmpty ? 0 : Double(text.trimmingCharacters(in: .whitespaces)) }
        guard halves.count == 2, numberOf(halves[0]) != nil || numberOf(halves[1]) != nil else { return nil }
        // GridFSBucketAdapter.handleFileStream, with `parseInt` and JavaScript's NaN-propagating min/max.
        let parts = header.replacingOccurrences(of: "bytes=", with: "").split(separator: "-", omittingEmptySubsequences: false)
        let fileStart = parts.first.flatMap { Self.parseInt(String($0)) }
        let fileEnd: Int? = parts.count > 1 && !parts[1].isEmpty ? Self.parseInt(String(parts[1])) : size
        guard let fileEnd else { return nil }  // NaN would follow: send the whole file instead.
        var start = min(fileStart ?? 0, fileEnd, size)
        var end = max(fileStart ?? 0, fileEnd) + 1
        if fileStart == nil {
            start = size - end + 1
            end = size
        }
        end = min(end, size)
        start = max(start, 0)
        self.start = min(start, end)
        self.end = end
        self.size = size
    }

    var contentRange: String { "bytes \(start)-\(end)/\(size)" }

    /// JavaScript's `parseInt(text, 10)`: leading spaces and sign, then digits; nil for NaN.
    private static func parseInt(_ text: String) -> Int? {
        let trimmed = text.drop { $0 == " " }
        var digits = trimmed.prefix { $0.isASCII && $0.isNumber }
        var negative = false
        if digits.isEmpty, let sign = trimmed.first, sign == "-" || sign == "+" {
            negative = sign == "-"
            digits = trimmed.dropFirst().prefix { $0.isASCII && $0.isNumber }
        }
        guard !digits.isEmpty, let value = Int(digits.prefix(18)) else { return nil }
        return negative ? -value : value
    }
}
