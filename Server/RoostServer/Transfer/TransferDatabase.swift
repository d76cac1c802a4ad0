import Foundation
import GRDB

/// The data directory's database, opened for whole-database work outside serving (`roost export`,
/// `import`, `backup`): brought up to date by the same migrations as the server's, then one plain
/// connection, without the server's writer queue, reader pool and checkpointer.
enum TransferDatabase {
    static func path(dataDirectory: String) -> String { dataDirectory + "/roost.sqlite" }

    /// - Throws: `TransferError` when `readOnly` and there is no database there.
    static func open(dataDirectory: String, readOnly: Bool) throws -> SQLiteConnection {
        let path = path(dataDirectory: dataDirectory)
        if readOnly, !FileManager.default.fileExists(atPath: path) {
            throw TransferError("no database at \(path): is --data-dir (ROOST_DATA_DIR) the server's data directory?")
        }
        let pool = try DatabasePool(path: path, configuration: SQLiteEngine.migrationConfiguration)
        try SQLiteEngine.migrator.migrate(pool)
        try pool.close()
        return try SQLiteConnection(path: path, readOnly: readOnly, pragmas: SQLiteEngine.pragmas)
    }
}

/// A failure of export, import or backup that names what is at fault.
public struct TransferError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// Where an export's lines go: a file, or standard output (`--out -`).
public final class TransferOutput {
    private let file: UnsafeMutablePointer<FILE>
    private let path: String
    private var isStandardOutput: Bool { path == "-" }

    /// - Parameter path: a file (created with mode 0600: an export holds password hashes), or `-`.
    public init(path: String) throws {
        self.path = path
        if path == "-" {
            file = fdopen(dup(STDOUT_FILENO), "w")!
        } else {
            let descriptor = Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            // An existing file keeps its mode through O_CREAT: made private here too.
            guard descriptor >= 0, fchmod(descriptor, 0o600) == 0, let opened = fdopen(descriptor, "w") else {
                throw TransferError("cannot write \(path): \(String(cString: strerror(errno)))")
            }
            file = opened
        }
    }

    func writeLine(_ bytes: [UInt8]) throws {
        guard fwrite(bytes, 1, bytes.count, file) == bytes.count, fputc(0x0A, file) != EOF else {
            throw TransferError("cannot write \(path): \(String(cString: strerror(errno)))")
        }
    }

    func flush() throws {
        guard fflush(file) == 0, isStandardOutput || fsync(fileno(file)) == 0 else {
            throw TransferError("cannot write \(path): \(String(cString: strerror(errno)))")
        }
    }

    deinit { fclose(file) }
}
