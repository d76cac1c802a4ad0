import RoostCore

/// Which file extensions clients may upload (Parse's `fileUpload.fileExtensions`): each entry is `*`
/// or a regular expression an extension must contain a match of; the master key is not held to it.
///
/// Files are served from the API's own origin, so a page or an image that runs script (HTML, SVG,
/// XML) uploaded by one user would run with the API's origin for whoever opens its URL. The default
/// refuses those, as Parse Server's current default does.
struct FileExtensionPolicy: @unchecked Sendable {  // Regexes are only read after init.
    /// HTML (`html`, `htm`, `xhtml`, `shtml`, `xht`), SVG (`svg`, `svgz`, `svg+xml`) and XML (`xml`,
    /// `xsl`, `xslt`), in any case; everything else is allowed.
    static let defaultPatterns = [#"^(?!([xXsS]?[hH][tT][mM][lL]?|[xX][hH][tT]|[sS][vV][gG][zZ]?|[sS][vV][gG]\+[xX][mM][lL]|[xX][mM][lL]|[xX][sS][lL][tT]?)$)"#]

    private let allowsAll: Bool
    private let patterns: [Regex<AnyRegexOutput>]

    /// - Throws: `InvalidPattern` for an entry that is not a regular expression.
    init(_ entries: [String]) throws {
        allowsAll = entries.contains("*")
        patterns = try entries.filter { $0 != "*" }.map { entry in
            do { return try Regex(entry) } catch { throw InvalidPattern(pattern: entry) }
        }
    }

    struct InvalidPattern: Error, CustomStringConvertible {
        let pattern: String
        var description: String { "invalid file extension pattern: \(pattern)" }
    }

    func allows(_ fileExtension: String) -> Bool {
        allowsAll || patterns.contains { fileExtension.contains($0) }
    }

    /// - Throws: `ParseError` 130 with Parse's message when the upload's extension is refused: the
    ///   extension Parse derives (from the name, else the Content-Type's subtype), then the one the file
    ///   is stored and served with (a Content-Type with parameters still gives the file its type's extension).
    func check(name: String, contentType: String?, storedName: String) throws {
        for candidate in [FileExtensionPolicy.requestedExtension(name: name, contentType: contentType), FileStore.fileExtension(storedName)] {
            guard let candidate, !candidate.isEmpty, !allows(candidate) else { continue }
            throw ParseError(.fileSaveError, "File upload of extension \(candidate) is disabled.")
        }
    }

    /// Parse's `FilesRouter`: what follows the name's last `.`; without one, the Content-Type's subtype
    /// (or the whole Content-Type); spaces removed.
    static func requestedExtension(name: String, contentType: String?) -> String? {
        var requested = contentType
        if let dot = name.lastIndex(of: ".") {
            requested = String(name[name.index(after: dot)...])
        } else if let contentType, let slash = contentType.firstIndex(of: "/") {
            requested = String(contentType[contentType.index(after: slash)...].prefix { $0 != "/" })
        }
        return requested.map { $0.filter { $0 != " " } }
    }
}
