import Foundation
import RoostCore

/// `roost import FILE`: loads an export (`DataExport`'s JSON lines) into a data directory, or a PostgreSQL database,
/// that holds no app yet. It is all or nothing: the database part is one transaction, so an import that fails (a bad
/// line, a file cut short) leaves the database as it was; on SQLite the files it had written are removed, on
/// PostgreSQL they are rows of the same transaction.
public enum DataImport {
    /// Imports `path` (`-` for standard input) into `dataDirectory`; returns how many records of each type.
    public static func run(from path: String, into dataDirectory: String) throws -> [String: Int] {
        try run(from: path, into: .sqlite(dataDirectory: dataDirectory))
    }

    /// Imports `path` (`-` for standard input) into `backend`; returns how many records of each type.
    public static func run(from path: String, into backend: TransferBackend) throws -> [String: Int] {
        let lines = try LineReader(path: path)
        switch backend {
        case .sqlite(let dataDirectory):
            let db = try TransferDatabase.open(dataDirectory: dataDirectory, readOnly: false)
            let files = FileWriter(directory: dataDirectory + "/files")
            do {
                let counts = try db.inTransaction(immediate: true) {
                    let stored = (try? FileManager.default.contentsOfDirectory(atPath: dataDirectory + "/files")) ?? []
                    try checkEmpty(db, place: "the data directory \(dataDirectory)", holdsFiles: stored.contains(where: FileStore.isValidName),
                                   advice: "import into a new, empty data directory")
                    return try load(lines, source: path, into: db, files: files)
                }
                try db.execute("PRAGMA wal_checkpoint(TRUNCATE)", cacheable: false)
                return counts
            } catch {
                files.discard()
                throw error
            }
        case .postgres(let url):
            let db = try TransferBackend.openPostgres(url)
            let counts = try db.transaction(.readCommitted) { db in
                // Held to the commit: a node starting meanwhile (it migrates under this lock) finds the whole app, and
                // a second import waits, then finds this one's.
                try db.query("SELECT pg_advisory_xact_lock($1)", [.int(PostgresSchema.lockKey)])
                let holdsFiles = try db.query("SELECT 1 FROM _file LIMIT 1").count > 0
                try checkEmpty(db, place: "the database \(db.endpoint)", holdsFiles: holdsFiles,
                               advice: "import into a new, empty database (createdb)")
                let counts = try load(lines, source: path, into: db, files: PostgresImportedFiles(db: db))
                _ = try PostgresRowCount.send(db.writeState.rowCountChanges, in: db)  // The classes' counts (`_rows`).
                db.writeState.rowCountChanges.removeAll()
                try restartIdentities(in: db)
                // Planner statistics for the tables just filled: until autovacuum gets to them, PostgreSQL plans
                // from none, and an indexed `$in` read every row of a 1,000,000-object class (428 ms against 0.64 ms).
                _ = try db.execute("ANALYZE")
                return counts
            }
            // And their visibility map, outside the transaction (VACUUM cannot run in one): until autovacuum sets it,
            // an index-only scan (a count on a declared index, `PostgresTypedColumns`) still visits the table per row.
            _ = try db.execute("VACUUM")
            return counts
        }
    }

    /// Reads every record into `db` inside its transaction, files included; returns the counts.
    private static func load(_ lines: LineReader, source: String, into db: any SQLConnection, files: any ImportedFiles) throws -> [String: Int] {
        var importer = Importer(db: db, files: files, source: source)
        try importer.load(lines)
        try files.finish()
        try ChangeLog.startNewHistory(after: importer.liveQueryHead, in: db)
        return importer.counts
    }

    /// Importing over an app would mix two apps' users and objects: only an empty place takes one (one a server
    /// has started on is empty while it holds no object: the system classes it made have no rows).
    private static func checkEmpty(_ db: any SQLQuerying, place: String, holdsFiles: Bool, advice: String) throws {
        let refusal = TransferError("\(place) already holds an app; \(advice)")
        for table in ["_password", "_session", "_config", "_hooks", "_join"]
        where try !db.fetchRows("SELECT 1 FROM \(table) LIMIT 1", [], cacheable: false).isEmpty {
            throw refusal
        }
        for schema in try SchemaStore.all(in: db) {
            guard Names.systemClasses.contains(schema.className),
                  try db.fetchRows("SELECT 1 FROM \(schema.tableName) LIMIT 1", [], cacheable: false).isEmpty
            else { throw refusal }
        }
        if holdsFiles { throw TransferError("\(place) already holds files; \(advice)") }
    }

    /// Moves every identity column's sequence past the largest value stored in it: rows given an explicit value (an
    /// import's) do not advance it, and the next default would collide with them.
    private static func restartIdentities(in db: PostgresConnection) throws {
        let columns = try db.query("""
            SELECT table_name, column_name FROM information_schema.columns
            WHERE table_schema = current_schema() AND is_identity = 'YES'
            """)
        for index in 0..<columns.count {
            guard let table = try columns[index].string(0), let column = try columns[index].string(1) else { continue }
            let quotedTable = PostgresConnection.quoteIdentifier(table), quotedColumn = PostgresConnection.quoteIdentifier(column)
            try db.query("""
                SELECT setval(pg_get_serial_sequence($1, $2), max(\(quotedColumn))) FROM \(quotedTable) HAVING max(\(quotedColumn)) IS NOT NULL
                """, [.text(quotedTable), .text(column)])
        }
    }
}

/// One import's state: the classes created so far and what was read.
private struct Importer {
    let db: any SQLConnection
    let files: any ImportedFiles
    let source: String
    var counts: [String: Int] = [:]
    var schemas: [String: ClassSchema] = [:]
    var lineNumber = 0
    var sawEnd = false
    /// The exporting database's LiveQuery head (0 for an export without one).
    var liveQueryHead: Int64 = 0

    init(db: any SQLConnection, files: any ImportedFiles, source: String) {
        self.db = db
        self.files = files
        self.source = source
    }

    mutating func load(_ lines: LineReader) throws {
        while let line = try lines.next() {
            lineNumber += 1
            guard !sawEnd else { throw failure("a record after the end record") }
            let record: [String: JSON]
            do {
                guard case .object(let members) = try JSONParser.parse(line, maximumDepth: 256) else { throw failure("not a JSON object") }
                record = members
            } catch let error as TransferError {
                throw error
            } catch {
                throw failure("not JSON (\(error))")
            }
            guard let type = record["type"]?.stringValue else { throw failure("no \"type\"") }
            if lineNumber == 1 {
                guard type == "roost-export", let version = record["version"]?.numberValue else {
                    throw failure("not a roost export (its first line must be the roost-export header)")
                }
                guard version <= Double(DataExport.formatVersion) else {
                    throw failure("export format \(version) is newer than this roost reads (\(DataExport.formatVersion)); upgrade roost")
                }
                if let head = record["liveQueryHead"]?.numberValue, head >= 0, head < 9e15 { liveQueryHead = Int64(head) }
                continue
            }
            try apply(type, record)
            if type != "end" { counts[type, default: 0] += 1 }
        }
        guard sawEnd else { throw TransferError("\(source) ends before its end record: the export was cut short") }
    }

    private mutating func apply(_ type: String, _ record: [String: JSON]) throws {
        switch type {
        case "config":
            try db.execute("INSERT INTO _config (id, params, masterKeyOnly) VALUES (1, ?, ?)",
                           [.text(try object(record, "params").jsonText), .text(try object(record, "masterKeyOnly").jsonText)])
        case "schema": try createClass(record)
        case "object": try insertObject(record)
        case "password":
            let changedAt: SQLValue = (record["changedAt"] ?? .null) == .null ? .null : try integer(record, "changedAt")
            guard case .array(let replaced) = record["history"] ?? .array([]) else { throw failure("a password history that is not an array") }
            let history = JSON.array(replaced).jsonText
            try db.execute("INSERT INTO _password (userId, hash, changedAt, history) VALUES (?, ?, ?, ?)",
                           [try text(record, "userId"), try text(record, "hash"), changedAt, .text(history)])
        case "session":
            try db.execute("""
                INSERT INTO _session (objectId, tokenHash, userId, createdAt, updatedAt, expiresAt, installationId, createdWith, fields)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, [try text(record, "objectId"), try text(record, "tokenHash"), try text(record, "userId"),
                      try integer(record, "createdAt"), try integer(record, "updatedAt"), try integer(record, "expiresAt"),
                      record["installationId"]?.stringValue.map(SQLValue.text) ?? .null,
                      .text(try object(record, "createdWith").jsonText), .text(try object(record, "fields").jsonText)])
        case "relation":
            try db.execute("INSERT INTO _join (owningClass, field, owningId, relatedId) VALUES (?, ?, ?, ?)",
                           [try text(record, "owningClass"), try text(record, "field"), try text(record, "owningId"), try text(record, "relatedId")])
        case "hook":
            try db.execute("INSERT INTO _hooks (functionName, className, triggerName, url) VALUES (?, ?, ?, ?)",
                           [optionalText(record, "functionName"), optionalText(record, "className"), optionalText(record, "triggerName"),
                            try text(record, "url")])
        case "file":
            guard let name = record["name"]?.stringValue, FileStore.isValidName(name) else { throw failure("a file without a valid name") }
            try files.begin(name)
        case "fileData":
            guard let name = record["name"]?.stringValue, name == files.current else { throw failure("file data without its file record") }
            guard let base64 = record["base64"]?.stringValue, let bytes = Data(base64Encoded: base64) else { throw failure("file data that is not base64") }
            try files.append(bytes)
        case "end":
            sawEnd = true
        default:
            guard let table = StateTable.all.first(where: { $0.type == type }) else { throw failure("unknown record type \(type)") }
            do {
                try table.insert(record, into: db)
            } catch {
                throw failure("\(type): \(error)")
            }
        }
    }

    /// Creates a class as the server would (system classes with their unique indexes), then gives it the
    /// exported fields, permissions and declared indexes.
    private mutating func createClass(_ record: [String: JSON]) throws {
        guard let className = record["className"]?.stringValue, Names.isValidClassName(className), className != "_Session" else {
            throw failure("a schema without a valid className")
        }
        var fields: [String: FieldType] = [:], options: [String: JSON] = [:]
        for (name, json) in try object(record, "fields").objectValue ?? [:] {
            options[name] = FieldOptions.of(json)
            guard Names.isValidFieldName(name), !Names.reservedFields.contains(name), let type = FieldType(schemaJSON: json) else {
                throw failure("field \(name) of \(className) is not a valid field")
            }
            fields[name] = type
        }
        var schema: ClassSchema
        switch className {
        case UserStore.className: schema = try UserStore.schema(in: db)
        case RoleStore.className: schema = try RoleStore.schema(in: db)
        case InstallationRoutes.className: schema = try InstallationRoutes.schema(in: db)
        default: schema = try SchemaStore.create(className, fields: [:], classLevelPermissions: nil, in: db)
        }
        schema.fields.merge(fields) { _, exported in exported }
        schema.fieldOptions.merge(options) { _, exported in exported }
        if let permissions = record["classLevelPermissions"], permissions != .null {
            schema.classLevelPermissions = ClassSchema.completed(permissions)
        }
        try IndexStore.indexNewPointers(fields, of: schema, in: db)
        if case .object(var declared)? = record["indexes"] {
            // `_id_` is listed as Parse lists its primary key's index (`SchemaRoutes.update`); objectId's index exists already.
            let primaryKey = declared.removeValue(forKey: "_id_")
            // Automatic indexes are not declared ones: the importing server makes its own as its queries ask.
            declared = declared.filter { !$0.key.hasPrefix(IndexStore.automaticPrefix) }
            do {
                schema = try IndexStore.apply(.object(declared), to: schema, in: db)
            } catch let error as ParseError {
                throw failure("the indexes of \(className): \(error.message)")
            }
            if let primaryKey {
                var listed = schema.indexes?.objectValue ?? [:]
                listed["_id_"] = primaryKey
                schema.indexes = .object(listed)
            }
        }
        try SchemaStore.save(schema, in: db)
        schemas[className] = schema
    }

    private func insertObject(_ record: [String: JSON]) throws {
        guard let className = record["className"]?.stringValue, let schema = schemas[className] else {
            throw failure("an object of a class with no schema record before it")
        }
        guard case .object(var fields) = record["object"],
              let objectId = fields.removeValue(forKey: "objectId")?.stringValue,
              let createdAt = fields.removeValue(forKey: "createdAt")?.stringValue.flatMap(ParseDate.init(iso:)),
              let updatedAt = fields.removeValue(forKey: "updatedAt")?.stringValue.flatMap(ParseDate.init(iso:))
        else { throw failure("an object without objectId, createdAt and updatedAt") }
        let acl = fields.removeValue(forKey: "ACL")
        do {
            fields = try checked(fields, against: schema)
            if let acl { _ = try ACL.validate(acl) }
            try ObjectStore.insert(StoredObject(objectId: objectId, createdAt: createdAt, updatedAt: updatedAt, acl: acl, fields: fields),
                                   into: schema, in: db)
        } catch let error as ParseError {
            throw failure("object \(className)/\(objectId): \(error.message)")
        }
    }

    /// The object's values as the server would have stored them: each field in the class's schema record, with
    /// the type recorded there (an export edited by hand, or from a newer roost, cannot put a string in a
    /// Number field or a key no schema names, which queries and clients would then trip over).
    private func checked(_ fields: [String: JSON], against schema: ClassSchema) throws -> [String: JSON] {
        var stored: [String: JSON] = [:]
        for (key, value) in fields {
            guard let declared = schema.fields[key] else {
                throw ParseError(.incorrectType, "field \(key) is not in the schema record of \(schema.className)")
            }
            if case .relation = declared {
                stored[key] = value  // Its marker; the links are relation records.
                continue
            }
            if case .object(let members) = value, members["__op"] != nil {
                throw ParseError(.incorrectType, "field \(key) holds an operation, not a value")
            }
            let (type, normalized) = try WireValue.validate(value)
            if let type, type != declared {
                throw ParseError(.incorrectType, "field \(key) holds a \(type.displayName), its schema says \(declared.displayName)")
            }
            stored[key] = normalized
        }
        return stored
    }

    private func failure(_ what: String) -> TransferError {
        TransferError("\(source), line \(lineNumber): \(what)")
    }

    private func text(_ record: [String: JSON], _ key: String) throws -> SQLValue {
        guard let value = record[key]?.stringValue else { throw failure("no text \"\(key)\"") }
        return .text(value)
    }

    private func optionalText(_ record: [String: JSON], _ key: String) -> SQLValue {
        record[key]?.stringValue.map(SQLValue.text) ?? .null
    }

    private func integer(_ record: [String: JSON], _ key: String) throws -> SQLValue {
        guard let value = record[key]?.numberValue, value.rounded() == value, abs(value) < 9e15 else { throw failure("no integer \"\(key)\"") }
        return .integer(Int64(value))
    }

    private func object(_ record: [String: JSON], _ key: String) throws -> JSON {
        guard let value = record[key], case .object = value else { throw failure("no object \"\(key)\"") }
        return value
    }
}

/// Where an import's files go, one at a time: `begin`, its bytes by `append`, and the next `begin` or `finish`
/// ends it.
private protocol ImportedFiles: AnyObject {
    /// The file being written.
    var current: String? { get }
    func begin(_ name: String) throws
    func append(_ bytes: Data) throws
    func finish() throws
}

/// The files of an import into PostgreSQL: rows of the import's transaction (`PostgresFileWriter`).
private final class PostgresImportedFiles: ImportedFiles {
    let db: PostgresConnection
    private var writer: PostgresFileWriter?
    var current: String? { writer?.name }

    init(db: PostgresConnection) { self.db = db }

    func begin(_ name: String) throws {
        try finish()
        writer = try PostgresFileWriter(name: name, in: db)
    }

    func append(_ bytes: Data) throws { try writer?.append([UInt8](bytes)[...]) }

    func finish() throws {
        try writer?.finish()
        writer = nil
    }
}

/// The files of an import into a data directory, each written under a temporary name and renamed once whole.
private final class FileWriter: ImportedFiles {
    let directory: String
    private(set) var current: String?
    private var handle: FileHandle?
    private var written: [String] = []

    init(directory: String) { self.directory = directory }

    func begin(_ name: String) throws {
        try close()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        guard FileManager.default.createFile(atPath: partial(name), contents: nil) else {
            throw TransferError("cannot write \(partial(name))")
        }
        handle = FileHandle(forWritingAtPath: partial(name))
        current = name
    }

    func append(_ bytes: Data) throws { try handle?.write(contentsOf: bytes) }

    /// Ends the file being written: renamed to its name, whole.
    private func close() throws {
        guard let name = current else { return }
        try handle?.synchronize()
        try handle?.close()
        handle = nil
        current = nil
        guard rename(partial(name), directory + "/" + name) == 0 else {
            throw TransferError("cannot rename \(partial(name)): \(String(cString: strerror(errno)))")
        }
        written.append(name)
    }

    func finish() throws { try close() }

    /// Removes every file this import wrote (it failed).
    func discard() {
        try? handle?.close()
        if let current { unlink(partial(current)) }
        for name in written { unlink(directory + "/" + name) }
    }

    private func partial(_ name: String) -> String { directory + "/.importing-" + name }
}

/// The lines of a file or of standard input, without their newline.
private final class LineReader {
    private let file: UnsafeMutablePointer<FILE>
    private var buffer: UnsafeMutablePointer<CChar>?
    private var capacity = 0

    init(path: String) throws {
        if path == "-" {
            file = fdopen(dup(STDIN_FILENO), "r")!
        } else {
            guard let opened = fopen(path, "r") else {
                throw TransferError("cannot read \(path): \(String(cString: strerror(errno)))")
            }
            file = opened
        }
    }

    func next() throws -> [UInt8]? {
        let length = getline(&buffer, &capacity, file)
        guard length >= 0, let buffer else { return nil }
        let count = buffer[length - 1] == 0x0A ? length - 1 : length
        return buffer.withMemoryRebound(to: UInt8.self, capacity: count) { Array(UnsafeBufferPointer(start: $0, count: count)) }
    }

    deinit {
        free(buffer)
        fclose(file)
    }
}
