/// Conditional GETs (RFC 9110 §13): whether the client's cached copy is still the current one (answer 304).
enum FileCaching {
    /// `If-None-Match` decides when present (a weak comparison, as for GET); otherwise `If-Modified-Since`.
    static func isFresh(_ headers: [String: String], etag: String, modifiedSeconds: Int) -> Bool {
        if let candidates = headers["if-none-match"] {
            return candidates.split(separator: ",").contains { candidate in
                let tag = candidate.trimmingWhitespace()
                return tag == "*" || tag == etag || tag == "W/" + etag
            }
        }
        guard let since = headers["if-modified-since"].flatMap(HTTPDate.parse) else { return false }
        return modifiedSeconds <= since
    }
}

private extension Substring {
    func trimmingWhitespace() -> Substring {
        var view = self
        while let first = view.first, first == " " || first == "\t" { view = view.dropFirst() }
        while let last = view.last, last == " " || last == "\t" { view = view.dropLast() }
        return view
    }
}
