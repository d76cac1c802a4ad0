import Foundation

/// Where uploaded files are kept: the data directory's `files/` on SQLite (`FileStore`), the database itself on
/// PostgreSQL (`PostgresFileStore`), so that every node serves every file. Both name files as Parse does
/// (32 random hex characters, `_`, the name the client gave) and never change a stored name's bytes.
protocol FileStorage: Sendable {
    /// Stores `bytes` under a new unique name and returns it. The file appears whole or not at all.
    func save(_ bytes: UploadBytes, name: String) throws -> String
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

/// An upload's bytes: in memory, or on disk as they arrived (`BodySpool`: uploads over 1 MB).
enum UploadBytes {
    case memory([UInt8])
    case spooled(SpooledBody)

    var isEmpty: Bool {
        switch self {
        case .memory(let bytes): bytes.isEmpty
        case .spooled(let body): body.count == 0
        }
    }

    /// Calls `body` with the bytes in order, `pieceBytes` at a time, so that a spooled upload is never held whole.
    func forEachPiece(_ pieceBytes: Int, _ body: (ArraySlice<UInt8>) throws -> Void) throws {
        switch self {
        case .memory(let bytes):
            for start in stride(from: 0, to: bytes.count, by: pieceBytes) {
                try body(bytes[start..<min(start + pieceBytes, bytes.count)])
            }
        case .spooled(let spooled):
            for start in stride(from: 0, to: spooled.count, by: pieceBytes) {
                try body(try spooled.read(start, pieceBytes)[...])
            }
        }
    }
}
