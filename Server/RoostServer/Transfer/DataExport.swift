import Foundation
import RoostCore

/// `roost export`: the whole app as JSON lines, one record per line, each naming its `type`:
///
///     {"type":"roost-export","version":1,"exportedAt":"…","liveQueryHead":N}
///     {"type":"config","params":{…},"masterKeyOnly":{…}}
///     {"type":"schema","className":"…","fields":{…},"classLevelPermissions":…,"indexes":…}
///     {"type":"object","className":"…","object":{…}}            objects as the master key reads them, ACL included
///     {"type":"password","userId":"…","hash":"…",…}             a user's password hash (never a password), its age and history
///     {"type":"session",…}                                      sessions, by the hash of their token
///     {"type":"relation","owningClass":"…","field":"…","owningId":"…","relatedId":"…"}
///     {"type":"hook",…}                                         webhooks
///     {"type":"requestRecord"|"accountToken"|"loginFailure"|"mail",…}  what is in flight (`StateTable`)
///     {"type":"file","name":"…","size":N} then {"type":"fileData","name":"…","base64":"…"} lines of ≤ 768 KB
///     {"type":"end","counts":{…}}                                the last line: an export cut short has none
///
/// Objects travel in Parse's wire encoding, which both storage backends store, so an export taken from
/// one backend imports into the other. The database is read in one snapshot: the export is consistent
/// even while the server runs and writes.
public enum DataExport {
    public static let formatVersion = 1
    /// Bytes of a file per `fileData` line (a multiple of 3, so chunks encode without padding in between).
    static let fileChunkBytes = 768 * 1024
    /// Rows read per statement: memory stays flat however large a class is.
    static let pageSize = 500

    /// Writes the export of the data directory `dataDirectory` to `output`; returns how many records of each type.
    public static func run(dataDirectory: String, to output: TransferOutput) throws -> [String: Int] {
        try run(from: .sqlite(dataDirectory: dataDirectory), to: output)
    }

    /// Writes the export of `backend` to `output`; returns how many records of each type.
    public static func run(from backend: TransferBackend, to output: TransferOutput) throws -> [String: Int] {
        let export = ExportWriter(output: output)
        switch backend {
        case .sqlite(let dataDirectory):
            let db = try TransferDatabase.open(dataDirectory: dataDirectory, readOnly: true)
            try db.inTransaction { try exportDatabase(db, to: export) }
            // Stored files never change under their name, so reading them after the snapshot is consistent with it.
            try exportFiles(inDirectory: dataDirectory + "/files", to: export)
        case .postgres(let url):
            let db = try TransferBackend.openPostgres(url)
            // One snapshot for all of it, files included (they are rows there).
            try db.transaction(.repeatableReadOnly) { db in
                try exportDatabase(db, to: export)
                for file in try PostgresFileStore.list(in: db) where FileStore.isValidName(file.name) {
                    try export.emit("file", ["name": .string(file.name), "size": .number(Double(file.size))])
                    let lines = FileDataLines(name: file.name, export: export)
                    try PostgresFileStore.forEachChunk(of: file.name, in: db) { try lines.append($0[...]) }
                    try lines.finish()
                }
            }
        }
        try export.emit("end", ["counts": .object(export.counts.mapValues { .number(Double($0)) })])
        try output.flush()
        return export.counts
    }

    private static func exportDatabase(_ db: any SQLQuerying, to export: ExportWriter) throws {
        let emit = export.emit
        // The LiveQuery change log's head: the copy's history starts past it (`ChangeLog.startNewHistory`).
        try emit("roost-export", ["version": .number(Double(formatVersion)), "exportedAt": .string(ParseDate.now().iso),
                                  "liveQueryHead": .number(Double(try ChangeLog.head(in: db)))])
        for row in try db.fetchRows("SELECT params, masterKeyOnly FROM _config WHERE id = 1", [], cacheable: false) {
            try emit("config", ["params": try parsed(row[0]), "masterKeyOnly": try parsed(row[1])])
        }
        // In bytewise order on both databases (class names are ASCII), so both export the same lines.
        let schemas = try SchemaStore.all(in: db).sorted { $0.className < $1.className }
        for schema in schemas {
            try emit("schema", [
                "className": .string(schema.className),
                "fields": .object(FieldOptions.declarations(schema.fields, options: schema.fieldOptions)),
                "classLevelPermissions": schema.classLevelPermissions ?? .null,
                "indexes": schema.indexes ?? .null,
            ])
        }
        for schema in schemas {
            try forEachRow("SELECT objectId, createdAt, updatedAt, acl, data FROM \(schema.tableName)", key: "objectId", in: db) { row in
                let stored = StoredRow(row, className: schema.className)
                try emit("object", ["className": .string(schema.className), "object": stored.decoded().wireJSON()])
            }
        }
        try forEachRow("SELECT userId, hash, changedAt, history FROM _password", key: "userId", in: db) { row in
            // With the password policy's record: when it was set (`maxPasswordAge`) and the hashes it replaced.
            try emit("password", ["userId": text(row[0]), "hash": text(row[1]),
                                  "changedAt": row[2].integer.map { .number(Double($0)) } ?? .null, "history": try parsed(row[3])])
        }
        try forEachRow("""
            SELECT objectId, tokenHash, userId, createdAt, updatedAt, expiresAt, installationId, createdWith, fields
            FROM _session
            """, key: "objectId", in: db) { row in
            try emit("session", [
                "objectId": text(row[0]), "tokenHash": text(row[1]), "userId": text(row[2]),
                "createdAt": integer(row[3]), "updatedAt": integer(row[4]), "expiresAt": integer(row[5]),
                "installationId": row[6].text.map(JSON.string) ?? .null,
                "createdWith": try parsed(row[7]), "fields": try parsed(row[8]),
            ])
        }
        try forEachRelation(in: db) { row in
            try emit("relation", ["owningClass": text(row[0]), "field": text(row[1]), "owningId": text(row[2]), "relatedId": text(row[3])])
        }
        for row in try db.fetchRows("SELECT functionName, className, triggerName, url FROM _hooks", [], cacheable: false) {
            try emit("hook", ["functionName": row[0].text.map(JSON.string) ?? .null, "className": row[1].text.map(JSON.string) ?? .null,
                              "triggerName": row[2].text.map(JSON.string) ?? .null, "url": text(row[3])])
        }
        for table in StateTable.all {
            try table.forEachRecord(in: db, pageSize: pageSize) { try emit(table.type, $0) }
        }
    }

    /// The files of a data directory, each as its `file` record and `fileData` lines.
    private static func exportFiles(inDirectory filesDirectory: String, to export: ExportWriter) throws {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: filesDirectory))?.sorted() ?? []
        where FileStore.isValidName(name) {
            guard let handle = FileHandle(forReadingAtPath: filesDirectory + "/" + name) else { continue }
            defer { try? handle.close() }
            let size = (try? FileManager.default.attributesOfItem(atPath: filesDirectory + "/" + name)[.size] as? Int) ?? 0
            try export.emit("file", ["name": .string(name), "size": .number(Double(size))])
            while let chunk = try handle.read(upToCount: fileChunkBytes), !chunk.isEmpty {
                try export.emit("fileData", ["name": .string(name), "base64": .string(chunk.base64EncodedString())])
            }
        }
    }

    /// `_join`'s rows in key order: paged by its key on SQLite (a WITHOUT ROWID table), one streamed statement on
    /// PostgreSQL, in bytewise order there too (`COLLATE "C"`) so both export the same lines.
    private static func forEachRelation(in db: any SQLQuerying, _ body: ([SQLValue]) throws -> Void) throws {
        let columns = ["owningClass", "field", "owningId", "relatedId"]
        if db.dialect == .postgres {
            try db.forEachRow("SELECT \(columns.joined(separator: ", ")) FROM _join ORDER BY \(columns.map { $0 + " COLLATE \"C\"" }.joined(separator: ", "))",
                              [], cacheable: false, body)
            return
        }
        var after: [SQLValue] = [.text(""), .text(""), .text(""), .text("")]
        while true {
            let rows = try db.fetchRows("""
                SELECT owningClass, field, owningId, relatedId FROM _join
                WHERE (owningClass, field, owningId, relatedId) > (?, ?, ?, ?)
                ORDER BY owningClass, field, owningId, relatedId LIMIT \(pageSize)
                """, after, cacheable: false)
            for row in rows { try body(row) }
            guard rows.count == pageSize, let last = rows.last else { break }
            after = last
        }
    }

    /// Every row of `select` (whose first column is the unique text column `key`), in bytewise key order: a page at a
    /// time on SQLite, one streamed statement on PostgreSQL (`forEachRow`, single-row mode: one sort, not one per page).
    /// Memory stays flat however large a table is.
    private static func forEachRow(_ select: String, key: String, in db: any SQLQuerying, _ body: ([SQLValue]) throws -> Void) throws {
        if db.dialect == .postgres {
            try db.forEachRow("\(select) ORDER BY \(key) COLLATE \"C\"", [], cacheable: false, body)
            return
        }
        var after = ""
        while true {
            let rows = try db.fetchRows("\(select) WHERE \(key) > ? ORDER BY \(key) LIMIT \(pageSize)", [.text(after)], cacheable: false)
            for row in rows { try body(row) }
            guard rows.count == pageSize, let last = rows.last?.first?.text else { return }
            after = last
        }
    }

    private static func parsed(_ value: SQLValue) throws -> JSON {
        guard let text = value.text else { return .null }
        return try JSONParser.parse(text)
    }

    private static func text(_ value: SQLValue) -> JSON { value.text.map(JSON.string) ?? .null }
    private static func integer(_ value: SQLValue) -> JSON { .number(Double(value.integer ?? 0)) }
}

/// An export's output and its count of records by type.
final class ExportWriter {
    private let output: TransferOutput
    private(set) var counts: [String: Int] = [:]

    init(output: TransferOutput) { self.output = output }

    func emit(_ type: String, _ members: [String: JSON]) throws {
        var record = members
        record["type"] = .string(type)
        try output.writeLine(JSON.object(record).encoded())
        counts[type, default: 0] += 1
    }
}

/// A file's bytes as `fileData` lines of `DataExport.fileChunkBytes`, whatever pieces they come in (PostgreSQL's
/// chunks are smaller): an export's lines are the same from either database.
private final class FileDataLines {
    private let name: String
    private let export: ExportWriter
    private var pending: [UInt8] = []

    init(name: String, export: ExportWriter) {
        self.name = name
        self.export = export
    }

    func append(_ bytes: ArraySlice<UInt8>) throws {
        pending.append(contentsOf: bytes)
        while pending.count >= DataExport.fileChunkBytes {
            try emit(pending.prefix(DataExport.fileChunkBytes))
            pending.removeFirst(DataExport.fileChunkBytes)
        }
    }

    func finish() throws {
        if !pending.isEmpty { try emit(pending[...]) }
        pending = []
    }

    private func emit(_ bytes: ArraySlice<UInt8>) throws {
        try export.emit("fileData", ["name": .string(name), "base64": .string(Data(bytes).base64EncodedString())])
    }
}
