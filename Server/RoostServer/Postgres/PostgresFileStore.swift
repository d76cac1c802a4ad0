import Foundation

/// Uploaded files on PostgreSQL, in the database every node reads: `_file` holds a file's name, size and creation
/// time, `_file_chunk` its bytes in rows of `chunkBytes` (`PostgresSchema` migration 4). A file is written chunk by
/// chunk in one transaction (it appears whole or not at all) and read back a chunk at a time as the download's
/// connection takes it (`StoredFile.read`), so no more than a chunk of it is ever held to serve it.
///
/// Why rows of bytea and not large objects (`lo_*`): rows are ordinary data. They are removed with the file's row
/// (`ON DELETE CASCADE`; a large object outlives its reference until `vacuumlo`), written in the same transaction as
/// anything else (an import of a whole app is one transaction), read by one indexed SELECT on any pooled connection
/// without a transaction held open across the download, copied by `pg_dump` with the table, and replicated like
/// every other row. A chunk stays far below bytea's 1 GB limit and TOAST stores it out of line, uncompressed
/// (`STORAGE EXTERNAL`: uploads are mostly compressed already).
final class PostgresFileStore: FileStorage {
    /// Bytes per `_file_chunk` row. Kept per file (`_file.chunkBytes`): a later size reads earlier files right.
    static let chunkBytes = 256 * 1024
    private let pool: PostgresPool

    init(pool: PostgresPool) { self.pool = pool }

    /// The tables (`PostgresSchema` migration 4).
    static let schemaSQL = """
        CREATE TABLE _file (
            name text COLLATE "C" PRIMARY KEY,
            size bigint NOT NULL,
            chunkBytes integer NOT NULL,
            createdAt bigint NOT NULL
        );
        CREATE TABLE _file_chunk (
            name text COLLATE "C" NOT NULL REFERENCES _file (name) ON DELETE CASCADE,
            seq integer NOT NULL,
            data bytea NOT NULL,
            PRIMARY KEY (name, seq)
        );
        ALTER TABLE _file_chunk ALTER COLUMN data SET STORAGE EXTERNAL;
        """

    func save(_ bytes: UploadBytes, name: String) throws -> String {
        let stored = try SecureRandom.hex(16) + "_" + name
        try pool.withConnection { connection in
            try connection.transaction { db in
                let writer = try PostgresFileWriter(name: stored, in: db)
                try bytes.forEachPiece(Self.chunkBytes) { try writer.append($0) }
                try writer.finish()
            }
        }
        return stored
    }

    func read(_ name: String) throws -> StoredFile? {
        guard FileStore.isValidName(name) else { return nil }
        let rows = try pool.withConnection { try $0.query("SELECT size, chunkBytes, createdAt FROM _file WHERE name = $1", [.text(name)]) }
        guard rows.count == 1, let size = try rows[0].int(0), let chunkBytes = try rows[0].int(1), let createdAt = try rows[0].int(2) else {
            return nil
        }
        let chunks = ChunkReader(pool: pool, name: name, chunkBytes: chunkBytes)
        return StoredFile(size: size, modifiedSeconds: createdAt / 1000,
                          etag: "\"\(String(size, radix: 16))-\(String(createdAt, radix: 16))\"",
                          read: { offset, maximum in try chunks.read(offset, maximum) })
    }

    func delete(_ name: String) throws -> Bool {
        guard FileStore.isValidName(name) else { return false }
        return try pool.withConnection { connection in
            try connection.query("DELETE FROM _file WHERE name = $1 RETURNING name", [.text(name)]).count == 1
        }
    }

    /// Names and sizes of every file, in name order (`roost export`).
    static func list(in db: PostgresConnection) throws -> [(name: String, size: Int)] {
        let rows = try db.query("SELECT name, size FROM _file ORDER BY name")
        return try (0..<rows.count).map { (try rows[$0].string(0) ?? "", try rows[$0].int(1) ?? 0) }
    }

    /// A file's chunks in order, one at a time (`roost export`, inside its snapshot).
    static func forEachChunk(of name: String, in db: PostgresConnection, _ body: ([UInt8]) throws -> Void) throws {
        for seq in 0... {
            let rows = try db.query("SELECT data FROM _file_chunk WHERE name = $1 AND seq = $2", [.text(name), .int(Int64(seq))])
            guard rows.count == 1, let bytes = try rows[0].bytes(0) else { return }
            try body(bytes)
        }
    }
}

/// Writes one file's chunks as its bytes come (an upload's body, an import's `fileData` lines), inside the caller's
/// transaction: `append` sends every full chunk at once and keeps the rest; `finish` sends the last and the size.
final class PostgresFileWriter {
    let name: String
    private let db: PostgresConnection
    private var pending: [UInt8] = []
    private var seq = 0
    private var size = 0

    init(name: String, in db: PostgresConnection) throws {
        self.name = name
        self.db = db
        try db.query("INSERT INTO _file (name, size, chunkBytes, createdAt) VALUES ($1, 0, $2, (extract(epoch FROM clock_timestamp()) * 1000)::bigint)",
                     [.text(name), .int(Int64(PostgresFileStore.chunkBytes))])
        pending.reserveCapacity(PostgresFileStore.chunkBytes)
    }

    func append(_ bytes: ArraySlice<UInt8>) throws {
        var rest = bytes
        while !rest.isEmpty {
            let taken = rest.prefix(PostgresFileStore.chunkBytes - pending.count)
            rest = rest.dropFirst(taken.count)
            if pending.isEmpty && taken.count == PostgresFileStore.chunkBytes {
                try send(Array(taken))
            } else {
                pending.append(contentsOf: taken)
                if pending.count == PostgresFileStore.chunkBytes {
                    try send(pending)
                    pending.removeAll(keepingCapacity: true)
                }
            }
        }
    }

    func finish() throws {
        if !pending.isEmpty { try send(pending) }
        pending = []
        try db.query("UPDATE _file SET size = $2 WHERE name = $1", [.text(name), .int(Int64(size))])
    }

    private func send(_ chunk: [UInt8]) throws {
        try db.query("INSERT INTO _file_chunk (name, seq, data) VALUES ($1, $2, $3)", [.text(name), .int(Int64(seq)), .bytes(chunk)])
        seq += 1
        size += chunk.count
    }
}

/// A download's reads: the chunk holding the asked offset, fetched on a pooled connection only for that statement
/// (none is held while the client reads), and kept until the reads move past it (MHD asks for 64 KB at a time).
private final class ChunkReader: @unchecked Sendable {
    private let pool: PostgresPool
    private let name: String
    private let chunkBytes: Int
    private let lock = NSLock()
    private var cached: (seq: Int, bytes: [UInt8])?

    init(pool: PostgresPool, name: String, chunkBytes: Int) {
        self.pool = pool
        self.name = name
        self.chunkBytes = chunkBytes
    }

    /// - Throws: when the chunk is gone (the file was deleted during the download) or the database fails.
    func read(_ offset: Int, _ maximum: Int) throws -> [UInt8] {
        try lock.withLock {
            let seq = offset / chunkBytes
            if cached?.seq != seq {
                cached = nil
                let rows = try pool.withConnection { try $0.query("SELECT data FROM _file_chunk WHERE name = $1 AND seq = $2",
                                                                  [.text(name), .int(Int64(seq))]) }
                guard rows.count == 1, let bytes = try rows[0].bytes(0) else {
                    throw PostgresError(.badValue, message: "chunk \(seq) of file \(name) is missing", endpoint: "")
                }
                cached = (seq, bytes)
            }
            let bytes = cached!.bytes
            let start = offset - seq * chunkBytes
            guard start < bytes.count else { return [] }
            return Array(bytes[start..<min(bytes.count, start + maximum)])
        }
    }
}
