import Foundation

/// Where uploaded files are kept: the data directory's `files/` on SQLite (`FileStore`), the database itself on
/// PostgreSQL (`PostgresFileStore`), so that every node serves every file. Both name files as Parse does
/// (32 random hex characters, `_`, the name the client gave) and never change a stored name's bytes.
protocol FileStorage: Sendable {
    /// Stores `bytes` under a new unique name and returns it. The file appears whole or not at all.
    func save(_ bytes: [UInt8], name: String) throws -> String
    /// A stored file, nil when there is none by that name.
    func read(_ name: String) throws -> StoredFile?
    /// Returns whether a file was removed.
    func delete(_ name: String) throws -> Bool
}

/// A stored file as a download needs it: its validators, and a way to read its bytes piece by piece as the
/// connection takes them, so that no download holds more than a piece of its file (a 20 MB file fetched by a
/// hundred clients at once is not 2 GB of memory).
struct StoredFile {
    let size: Int
    let modifiedSeconds: Int
    /// Its validator for conditional GETs: a stored name's bytes never change, so size and write time
    /// tell one version from another (a file restored from a backup under the same name included).
    let etag: String
    /// `read(offset, maximum)` answers up to `maximum` bytes from `offset`.
    let read: @Sendable (_ offset: Int, _ maximum: Int) throws -> [UInt8]

    /// A response of `status` and `headers` whose body is the file's bytes `range`.
    func response(status: Int, headers: [(String, String)], range: Range<Int>) -> HTTPResponse {
        var response = HTTPResponse(status: status, headers: headers)
        let start = range.lowerBound
        response.stream = HTTPBodyStream(count: range.count) { [read] offset, maximum in try read(start + offset, maximum) }
        return response
    }
}
