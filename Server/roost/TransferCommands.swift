import ArgumentParser
import Foundation
import RoostServer

/// The data directory of `export`, `import` and `backup`: `--data-dir`, else `ROOST_DATA_DIR`, else the server's default.
struct DataDirectoryOption: ParsableArguments {
    @Option(help: "The server's data directory (env ROOST_DATA_DIR, default ./roost-data).") var dataDir: String?

    var path: String {
        Settings(environment: ProcessInfo.processInfo.environment).string(dataDir, "data-dir") ?? ServerConfig().dataDirectory
    }
}

/// The PostgreSQL database of `export`, `import` and `backup`: `--database-url`, else `ROOST_DATABASE_URL`, as `serve` reads it.
struct DatabaseURLOption: ParsableArguments {
    @Option(help: "A PostgreSQL database instead of SQLite in the data dir: postgres://user:password@host:port/database (env ROOST_DATABASE_URL, default none).")
    var databaseUrl: String?
    /// `--database`, as `serve` takes it too.
    @Option(help: .hidden) var database: String?

    var url: String? { Settings(environment: ProcessInfo.processInfo.environment).string(databaseUrl ?? database, "database-url") }

    /// The database to read or fill: PostgreSQL when a URL is given, else the data directory's SQLite file.
    func backend(dataDirectory: DataDirectoryOption) -> TransferBackend {
        url.map { .postgres(url: $0) } ?? .sqlite(dataDirectory: dataDirectory.path)
    }
}

/// `roost export`: the app as JSON lines (see `DataExport`), from a stopped or running server's data directory.
struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write the whole app (schemas, objects, users with password hashes, sessions, roles, relations, files, config, webhooks) as JSON lines.",
        discussion: "Safe while the server runs: the database is read in one snapshot. `roost import` loads the file into a new data directory or PostgreSQL database, from either to either.",
        version: Roost.versionLine)

    @OptionGroup var dataDirectory: DataDirectoryOption
    @OptionGroup var databaseURL: DatabaseURLOption
    @Option(help: "File to write (mode 0600: it holds password hashes); - for standard output.") var out: String

    func run() throws {
        let counts = try DataExport.run(from: databaseURL.backend(dataDirectory: dataDirectory), to: try TransferOutput(path: out))
        if out != "-" { say("Exported \(summary(counts)) to \(out).") }
    }
}

/// `roost import FILE`: an export loaded into a data directory that holds no app yet.
struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Load a `roost export` file into a new, empty data directory or PostgreSQL database (all or nothing).",
        discussion: "Start the server on that data directory (or database) once the import has finished.",
        version: Roost.versionLine)

    @OptionGroup var dataDirectory: DataDirectoryOption
    @OptionGroup var databaseURL: DatabaseURLOption
    @Argument(help: "The export file; - for standard input.") var file: String

    func run() throws {
        if case .postgres(let url) = databaseURL.backend(dataDirectory: dataDirectory) {
            let counts = try DataImport.run(from: file, into: .postgres(url: url))
            say("Imported \(summary(counts)) into the PostgreSQL database \((try? PostgresURL(url).redacted) ?? "at --database-url").")
            return
        }
        try DataDirectory.prepare(dataDirectory.path)
        try DataDirectoryLock.acquire(dataDirectory.path, for: "import into")
        let counts = try DataImport.run(from: file, into: dataDirectory.path)
        say("Imported \(summary(counts)) into \(dataDirectory.path).")
    }
}

/// `roost backup`: a consistent copy of the database (and files) while the server runs.
struct Backup: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy the SQLite database consistently while the server runs (VACUUM INTO), and the uploaded files to FILE-files/.",
        discussion: "To restore: stop the server, put FILE at <data dir>/roost.sqlite and FILE-files/* in <data dir>/files/.",
        version: Roost.versionLine)

    @OptionGroup var dataDirectory: DataDirectoryOption
    @OptionGroup var databaseURL: DatabaseURLOption
    @Option(help: "The backup file to create (it must not exist).") var out: String

    func validate() throws {
        // PostgreSQL has its own consistent online copy; roost would only do it worse.
        if let url = databaseURL.url {
            let named = (try? PostgresURL(url).description) ?? "a PostgreSQL database"
            throw ValidationError("""
                roost backup copies the SQLite database of a data directory; --database-url (or ROOST_DATABASE_URL) names \(named). \
                Back PostgreSQL up with its own tools, consistent while the servers run: pg_dump --format=custom --file=FILE 'URL' \
                (restore with pg_restore --dbname='URL' FILE), or roost export --database-url URL --out FILE.
                """)
        }
    }

    func run() throws {
        let backup = try OnlineBackup.run(dataDirectory: dataDirectory.path, to: out)
        let files = backup.filesDirectory.map { ", \(backup.files) files in \($0)" } ?? ""
        say("Backed up the database to \(out) (\(backup.databaseBytes) bytes)\(files).")
    }
}

/// "12 objects, 2 schemas, …", largest first.
private func summary(_ counts: [String: Int]) -> String {
    let parts = counts.filter { $0.key != "roost-export" && $0.key != "end" && $0.key != "fileData" }
        .sorted { ($0.value, $1.key) > ($1.value, $0.key) }
        .map { "\($0.value) \($0.key)\($0.value == 1 ? "" : "s")" }
    return parts.isEmpty ? "nothing" : parts.joined(separator: ", ")
}
