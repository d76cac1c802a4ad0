import ArgumentParser
import Foundation
import Logging
import RoostServer

@main
struct Roost: ParsableCommand {
    /// The server's version (`roost --version`); it speaks Parse Server 8's REST API.
    static let version = "0.1.0"
    /// What `--version` prints, for every command.
    static let versionLine = "roost \(version) (Parse Server REST API)"

    static let configuration = CommandConfiguration(
        commandName: "roost",
        abstract: "A Parse-compatible backend on SQLite.",
        version: versionLine,
        subcommands: [Serve.self, Export.self, Import.self, Backup.self],
        defaultSubcommand: Serve.self)
}

/// `roost serve`: flags win over `ROOST_*` environment variables, which win over defaults.
/// One line per setting below and one in `run()`; a switch is a `@Flag(inversion: .prefixedNo) … Bool?`.
struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the Parse REST API (the default command).",
        discussion: "Every option also reads a ROOST_* environment variable named after it (--pin-threads: ROOST_PIN_THREADS; "
            + "for switches true/false, 1/0 or yes/no); a flag wins over its variable.",
        version: Roost.versionLine)

    @Option(parsing: .unconditional, help: "Port to listen on; 0 picks a free one (env ROOST_PORT, default 1337).") var port: Int?
    @Option(help: "Address to listen on (env ROOST_HOST, default 127.0.0.1).") var host: String?
    @Option(help: "URL path of the API (env ROOST_MOUNT, default /parse).") var mount: String?
    @Option(help: "Directory for the database and the generated master key (env ROOST_DATA_DIR, default ./roost-data).")
    var dataDir: String?
    @Option(help: "A PostgreSQL database to serve from instead of SQLite in the data dir: postgres://user:password@host:port/database (env ROOST_DATABASE_URL, default none).")
    var databaseUrl: String?
    /// `--database`, the spelling issue 21 and its examples use: the same as `--database-url`.
    @Option(help: .hidden) var database: String?
    @Option(help: "Application id clients must send (env ROOST_APP_ID, default roost).") var appId: String?
    @Option(help: "Master key (env ROOST_MASTER_KEY); generated and kept in the data directory when absent.")
    var masterKey: String?
    @Option(help: "When set, clients must send this X-Parse-REST-API-Key (env ROOST_REST_API_KEY), or another key set here.") var restApiKey: String?
    @Option(help: "A client key (X-Parse-Client-Key: Parse's iOS, Android and Swift SDKs), checked as --rest-api-key (env ROOST_CLIENT_KEY).")
    var clientKey: String?
    @Option(help: "A JavaScript key (X-Parse-Javascript-Key, the JS SDK's _JavaScriptKey), checked as --rest-api-key (env ROOST_JAVASCRIPT_KEY).")
    var javascriptKey: String?
    @Option(help: "A .NET key (X-Parse-Windows-Key), checked as --rest-api-key (env ROOST_DOTNET_KEY).") var dotnetKey: String?
    @Option(parsing: .unconditional, help: "Largest request body in bytes (env ROOST_MAX_BODY, default 20 MB).") var maxBody: Int?
    @Flag(inversion: .prefixedNo, help: "Let clients create classes by writing to them (env ROOST_ALLOW_CLIENT_CLASS_CREATION, default on).")
    var allowClientClassCreation: Bool?
    @Option(help: "Comma-separated addresses or CIDR ranges the master key is accepted from; 0.0.0.0/0 for any (env ROOST_MASTER_KEY_IPS, default 127.0.0.1,::1).")
    var masterKeyIps: String?
    // Unconditional: `--threads -3` reaches the range check (and its error) instead of reading as a missing value.
    @Option(parsing: .unconditional, help: "HTTP worker threads, 1 to 1024 (env ROOST_THREADS, default 4).") var threads: Int?
    @Flag(inversion: .prefixedNo, help: "Keep each HTTP thread on one CPU (env ROOST_PIN_THREADS, default on).")
    var pinThreads: Bool?
    @Option(help: "Key sent to webhooks as X-Parse-Webhook-Key (env ROOST_WEBHOOK_KEY).") var webhookKey: String?
    @Option(parsing: .unconditional, help: "Largest query limit; larger ones are clamped (env ROOST_MAX_LIMIT, default none).") var maxLimit: Int?
    @Option(parsing: .unconditional, help: "Results of a query that names no limit (env ROOST_DEFAULT_LIMIT, default 100).") var defaultLimit: Int?
    @Option(parsing: .unconditional, help: "Seconds X-Parse-Request-Id replies are kept (env ROOST_IDEMPOTENCY_TTL, default 604800 = 7 days).")
    var idempotencyTtl: Int?
    @Flag(inversion: .prefixedNo, help: "Let creates carry their own objectId (env ROOST_ALLOW_CUSTOM_OBJECT_ID, default off).")
    var allowCustomObjectId: Bool?
    @Flag(inversion: .prefixedNo, help: "Store users' emails lowercased, as Parse's convertEmailToLowercase (env ROOST_CONVERT_EMAIL_TO_LOWERCASE, default off).")
    var convertEmailToLowercase: Bool?
    @Flag(inversion: .prefixedNo, help: "Store usernames lowercased, as Parse's convertUsernameToLowercase (env ROOST_CONVERT_USERNAME_TO_LOWERCASE, default off).")
    var convertUsernameToLowercase: Bool?
    @Option(parsing: .unconditional, help: "Length of the object ids made, 10 to 128, as Parse's objectIdSize (env ROOST_OBJECT_ID_SIZE, default 10).")
    var objectIdSize: Int?
    @Option(parsing: .unconditional, help: "Session lifetime in seconds (env ROOST_SESSION_LENGTH, default 31536000 = 1 year).") var sessionLength: Int?
    @Flag(inversion: .prefixedNo, help: "Let sessions expire --session-length after they start; off, they last until revoked and show no expiresAt, as Parse's expireInactiveSessions (env ROOST_EXPIRE_INACTIVE_SESSIONS, default on).")
    var expireInactiveSessions: Bool?
    @Flag(inversion: .prefixedNo, help: "Give a session used after half its --session-length a new expiry, now plus the length, as Parse's extendSessionOnUse (env ROOST_EXTEND_SESSION_ON_USE, default off).")
    var extendSessionOnUse: Bool?
    @Flag(inversion: .prefixedNo, help: "End a user's sessions when the password changes, by the user or a reset link, as Parse's revokeSessionOnPasswordReset (env ROOST_REVOKE_SESSION_ON_PASSWORD_RESET, default on).")
    var revokeSessionOnPasswordReset: Bool?
    @Option(parsing: .unconditional, help: "PBKDF2-SHA256 iterations for new password hashes (env ROOST_PASSWORD_ITERATIONS, default 600000).")
    var passwordIterations: Int?
    @Option(parsing: .unconditional, help: "Most open connections in all; more are refused with a 503 (env ROOST_MAX_CONNECTIONS, default 20000, at most the descriptor limit less 256).")
    var maxConnections: Int?
    @Option(parsing: .unconditional, help: "Most open connections from one client address, an IPv6 /64 counting as one; 0 for no limit (env ROOST_MAX_CONNECTIONS_PER_IP, default 1024).")
    var maxConnectionsPerIp: Int?
    @Option(parsing: .unconditional, help: "Most request-body bytes held at once, in memory or (file uploads over 1 MB) on disk; a request whose body finds no room gets a 503; at least --max-body (env ROOST_MAX_BUFFERED_BODY, default 256 MB).")
    var maxBufferedBody: Int?
    @Option(parsing: .unconditional, help: "Most request-body bytes held at once for one client address, an IPv6 /64 counting as one; at least --max-body, or 0 for no limit (env ROOST_MAX_BUFFERED_BODY_PER_IP, default 64 MB).")
    var maxBufferedBodyPerIp: Int?
    @Option(parsing: .unconditional, help: "Seconds a client has to send a request's headers, from connecting or from its previous answer (env ROOST_HEADERS_TIMEOUT, default 20).")
    var headersTimeout: Int?
    @Option(parsing: .unconditional, help: "Seconds a client has to send a whole request, headers and body (env ROOST_REQUEST_TIMEOUT, default 120).")
    var requestTimeout: Int?
    @Option(help: "Seconds one query may run before it is stopped with error 124; 0 for no limit (env ROOST_QUERY_TIMEOUT, default 5).")
    var queryTimeout: String?
    @Option(help: "Comma-separated file extensions clients may upload: * or regular expressions (env ROOST_FILE_EXTENSIONS, default all but HTML, SVG and XML).")
    var fileExtensions: String?
    @Flag(inversion: .prefixedNo, help: "Let clients upload files without a session, as Parse's fileUpload.enableForPublic (env ROOST_ENABLE_FILE_UPLOAD_FOR_PUBLIC, default off).")
    var enableFileUploadForPublic: Bool?
    @Flag(inversion: .prefixedNo, help: "Let anonymous users upload files, as Parse's fileUpload.enableForAnonymousUser (env ROOST_ENABLE_FILE_UPLOAD_FOR_ANONYMOUS_USERS, default off).")
    var enableFileUploadForAnonymousUsers: Bool?
    @Flag(inversion: .prefixedNo, help: "Let registered users upload files, as Parse's fileUpload.enableForAuthenticatedUser (env ROOST_ENABLE_FILE_UPLOAD_FOR_AUTHENTICATED_USERS, default on).")
    var enableFileUploadForAuthenticatedUsers: Bool?
    @Option(help: "Comma-separated classes whose changes LiveQuery logs and sends, as names or patterns matched whole as Parse matches them (Test.* covers TestObject), empty for none; subscribing to another is refused (env ROOST_LIVE_QUERY_CLASSES, default all).")
    var liveQueryClasses: String?
    @Option(parsing: .unconditional, help: "Seconds LiveQuery keeps changes for clients that resume after a disconnect (env ROOST_LIVE_QUERY_REPLAY_WINDOW, default 600).")
    var liveQueryReplayWindow: Int?
    @Option(parsing: .unconditional, help: "Most changes LiveQuery keeps for resuming clients (env ROOST_LIVE_QUERY_REPLAY_EVENTS, default 100000).")
    var liveQueryReplayEvents: Int?
    @Option(parsing: .unconditional, help: "Subscriptions one LiveQuery client may hold (env ROOST_LIVE_QUERY_MAX_SUBSCRIPTIONS, default 100).")
    var liveQueryMaxSubscriptions: Int?
    @Option(parsing: .unconditional, help: "Open LiveQuery sockets per client address; more upgrades get 429; 0 for no limit (env ROOST_LIVE_QUERY_MAX_CONNECTIONS_PER_IP, default 100).")
    var liveQueryMaxConnectionsPerIp: Int?
    @Option(parsing: .unconditional, help: "Largest LiveQuery message in bytes; a larger one closes the socket with 1009 (env ROOST_LIVE_QUERY_MAX_MESSAGE, default 65536).")
    var liveQueryMaxMessage: Int?
    @Flag(inversion: .prefixedNo, help: "Index the fields that queries keep filtering or sorting on, by themselves (env ROOST_AUTO_INDEX, default on).")
    var autoIndex: Bool?
    @Option(help: "trace, debug, info, notice, warning, error or critical (env ROOST_LOG_LEVEL, default info).")
    var logLevel: String?
    @OptionGroup var accounts: AccountOptions
    @OptionGroup var guards: GuardOptions

    func run() throws {
        let environment = ProcessInfo.processInfo.environment
        boundMallocArenas(environment: environment)
        let settings = Settings(environment: environment)
        let positive = 1...Int.max

        var config = ServerConfig()
        if let value = try settings.integer(port, "port", in: 0...65535) { config.port = UInt16(value) }
        config.host = settings.string(host, "host") ?? config.host
        config.mountPath = normalizedMount(settings.string(mount, "mount") ?? config.mountPath)
        config.dataDirectory = settings.string(dataDir, "data-dir") ?? config.dataDirectory
        config.databaseURL = settings.string(databaseUrl ?? database, "database-url")
        config.applicationId = settings.string(appId, "app-id") ?? config.applicationId
        config.restAPIKey = settings.string(restApiKey, "rest-api-key")
        config.clientKey = settings.string(clientKey, "client-key")
        config.javascriptKey = settings.string(javascriptKey, "javascript-key")
        config.dotNetKey = settings.string(dotnetKey, "dotnet-key")
        config.webhookKey = settings.string(webhookKey, "webhook-key")
        if let value = try settings.integer(maxBody, "max-body", in: 0...Int.max) { config.maxBodyBytes = value }
        if let value = try settings.boolean(allowClientClassCreation, "allow-client-class-creation") { config.allowClientClassCreation = value }
        if let ranges = try settings.addressRanges(masterKeyIps, "master-key-ips") { config.masterKeyIPs = ranges }
        if let value = try settings.integer(threads, "threads", in: 1...1024) { config.threads = value }
        if let value = try settings.boolean(pinThreads, "pin-threads") { config.pinThreads = value }
        if let value = try settings.integer(maxLimit, "max-limit", in: positive) { config.maxLimit = value }
        if let value = try settings.integer(defaultLimit, "default-limit", in: positive) { config.defaultLimit = value }
        if let value = try settings.integer(idempotencyTtl, "idempotency-ttl", in: positive) { config.idempotencyTTLSeconds = value }
        if let value = try settings.boolean(allowCustomObjectId, "allow-custom-object-id") { config.allowCustomObjectId = value }
        if let value = try settings.boolean(convertEmailToLowercase, "convert-email-to-lowercase") { config.convertEmailToLowercase = value }
        if let value = try settings.boolean(convertUsernameToLowercase, "convert-username-to-lowercase") {
            config.convertUsernameToLowercase = value
        }
        if let value = try settings.integer(objectIdSize, "object-id-size", in: 10...128) { config.objectIdSize = value }
        if let value = try settings.boolean(expireInactiveSessions, "expire-inactive-sessions") { config.expireInactiveSessions = value }
        if let value = try settings.boolean(extendSessionOnUse, "extend-session-on-use") { config.extendSessionOnUse = value }
        if let value = try settings.boolean(revokeSessionOnPasswordReset, "revoke-session-on-password-reset") {
            config.revokeSessionOnPasswordReset = value
        }
        // As Parse: a length is checked only when sessions expire (`validateSessionConfiguration`).
        if let value = try settings.integer(sessionLength, "session-length", in: config.expireInactiveSessions ? positive : Int.min...Int.max) {
            config.sessionLengthSeconds = value
        }
        if let value = try settings.integer(passwordIterations, "password-iterations", in: positive) {
            config.passwordHasher = PasswordHasher(iterations: value)
        }
        if let value = try settings.integer(maxConnections, "max-connections", in: positive) {
            config.connectionLimits.maxConnections = value
        }
        if let value = try settings.integer(maxConnectionsPerIp, "max-connections-per-ip", in: 0...Int.max) {
            config.connectionLimits.maxConnectionsPerAddress = value
        }
        if let value = try settings.integer(maxBufferedBody, "max-buffered-body", in: positive) {
            config.connectionLimits.maxBufferedBodyBytes = value
        }
        if let value = try settings.integer(maxBufferedBodyPerIp, "max-buffered-body-per-ip", in: 0...Int.max) {
            config.connectionLimits.maxBufferedBodyBytesPerAddress = value
        }
        try checkBodyBudget(config, settings)
        if let value = try settings.integer(headersTimeout, "headers-timeout", in: positive) {
            config.connectionLimits.headersTimeoutSeconds = value
        }
        if let value = try settings.integer(requestTimeout, "request-timeout", in: positive) {
            config.connectionLimits.requestTimeoutSeconds = value
        }
        if let value = try settings.converted(queryTimeout, "query-timeout", expected: "a number of seconds, 0 for no limit", {
            Double($0).flatMap { $0 >= 0 && $0.isFinite ? $0 : nil }
        }) {
            config.queryTimeoutSeconds = value
        }
        if let value = try settings.boolean(enableFileUploadForPublic, "enable-file-upload-for-public") { config.fileUploadsForPublic = value }
        if let value = try settings.boolean(enableFileUploadForAnonymousUsers, "enable-file-upload-for-anonymous-users") {
            config.fileUploadsForAnonymousUsers = value
        }
        if let value = try settings.boolean(enableFileUploadForAuthenticatedUsers, "enable-file-upload-for-authenticated-users") {
            config.fileUploadsForAuthenticatedUsers = value
        }
        if let value = settings.string(fileExtensions, "file-extensions") {
            config.fileExtensions = value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        if let value = settings.string(liveQueryClasses, "live-query-classes") {
            let entries = value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            do {
                config.liveQueryClasses = try LiveQueryClassNames(entries)
            } catch {
                let source = Settings.source(liveQueryClasses, "live-query-classes")
                throw ValidationError("invalid value for \(source): \(error)")
            }
        }
        if let value = try settings.integer(liveQueryReplayWindow, "live-query-replay-window", in: 1...31_536_000) {
            config.liveQueryReplayWindowSeconds = value
        }
        if let value = try settings.integer(liveQueryReplayEvents, "live-query-replay-events", in: 1...100_000_000) {
            config.liveQueryReplayEvents = value
        }
        if let value = try settings.integer(liveQueryMaxSubscriptions, "live-query-max-subscriptions", in: positive) {
            config.liveQueryMaxSubscriptions = value
        }
        if let value = try settings.integer(liveQueryMaxConnectionsPerIp, "live-query-max-connections-per-ip", in: 0...Int.max) {
            config.liveQueryMaxConnectionsPerIP = value
        }
        if let value = try settings.integer(liveQueryMaxMessage, "live-query-max-message", in: 1024...(64 * 1024 * 1024)) {
            config.webSocketMaxMessageBytes = value
        }
        let level = try settings.converted(logLevel, "log-level", expected: "trace, debug, info, notice, warning, error or critical") {
            Logger.Level(rawValue: $0)
        } ?? .info
        try accounts.apply(to: &config, settings)
        try guards.apply(to: &config, settings)
        if let value = environment["ROOST_TEST_MAIL_RETRY_CAP_MS"] {  // Test-only: mail retries sooner than every 5 minutes.
            config.mail.retryCapMilliseconds = Int64(max(100, try parse(value, "ROOST_TEST_MAIL_RETRY_CAP_MS", Int.init)))
        }
        if let value = environment["ROOST_TEST_ACCOUNT_MAIL_INTERVAL_S"] {  // Test-only: Parse's specs ask for links back to back.
            config.mail.resendIntervalSeconds = max(0, try parse(value, "ROOST_TEST_ACCOUNT_MAIL_INTERVAL_S", Int.init))
        }
        if environment["ROOST_TEST_AGGREGATE_IN_MEMORY"] == "1" {  // Test-only: see ServerConfig.aggregateInMemoryParameter.
            config.aggregateInMemoryParameter = true
        }
        if let value = environment["ROOST_TEST_MAIL_OUTBOX_CAPACITY"] {  // Test-only: a full outbox without 10,000 users.
            config.mail.outboxCapacity = max(1, try parse(value, "ROOST_TEST_MAIL_OUTBOX_CAPACITY", Int.init))
        }
        if let value = try settings.boolean(autoIndex, "auto-index") { config.autoIndex.enabled = value }
        // Test-only (and the benchmark's): when automatic indexes come and go, without 1,000 objects or a week's wait.
        if let value = environment["ROOST_TEST_AUTO_INDEX_MIN_OBJECTS"] {
            config.autoIndex.minObjects = max(0, try parse(value, "ROOST_TEST_AUTO_INDEX_MIN_OBJECTS", Int.init))
        }
        if let value = environment["ROOST_TEST_AUTO_INDEX_MAX_OBJECTS"] {
            config.autoIndex.maxObjects = max(0, try parse(value, "ROOST_TEST_AUTO_INDEX_MAX_OBJECTS", Int.init))
        }
        if let value = environment["ROOST_TEST_AUTO_INDEX_AFTER_QUERIES"] {
            config.autoIndex.afterQueries = max(1, try parse(value, "ROOST_TEST_AUTO_INDEX_AFTER_QUERIES", Int.init))
        }
        if let value = environment["ROOST_TEST_AUTO_INDEX_MAX_PER_CLASS"] {
            config.autoIndex.maxPerClass = max(0, try parse(value, "ROOST_TEST_AUTO_INDEX_MAX_PER_CLASS", Int.init))
        }
        if let value = environment["ROOST_TEST_AUTO_INDEX_UNUSED_S"] {
            config.autoIndex.unusedSeconds = max(1, try parse(value, "ROOST_TEST_AUTO_INDEX_UNUSED_S", Int.init))
        }
        if environment["ROOST_EXIT_WITH_PARENT"] == "1" { exitWhenOrphaned() }  // Test harnesses: no stray servers.
        if let value = environment["ROOST_TEST_FAIL_FIRST_WRITES"] {  // Test-only fault injection; see ServerConfig.
            config.failFirstWrites = max(0, try parse(value, "ROOST_TEST_FAIL_FIRST_WRITES", Int.init))
            config.failStatus = try parse(environment["ROOST_TEST_FAIL_STATUS"] ?? "503", "ROOST_TEST_FAIL_STATUS", Int.init)
        }
        if let value = environment["ROOST_TEST_PING_INTERVAL_MS"] {  // Test-only: LiveQuery pings sooner than every 10 s.
            config.webSocketPingMilliseconds = max(100, try parse(value, "ROOST_TEST_PING_INTERVAL_MS", Int.init))
        }
        if environment["ROOST_TEST_NO_CHANGE_LOG"] == "1" {  // Benchmarks only: the change log's cost, measured. See ServerConfig.
            config.liveQueryReplayEvents = 0
        }
        if let value = environment["ROOST_TEST_CLOSE_TIMEOUT_MS"] {  // Test-only: a closing LiveQuery socket is dropped sooner.
            config.webSocketCloseTimeoutMilliseconds = max(100, try parse(value, "ROOST_TEST_CLOSE_TIMEOUT_MS", Int.init))
        }
        if let value = environment["ROOST_TEST_DROP_REPLIES"] {  // Test-only fault injection; see ServerConfig.
            config.dropEveryNthIdempotentReply = max(0, try parse(value, "ROOST_TEST_DROP_REPLIES", Int.init))
        }

        LoggingSystem.bootstrap { label in LineLogHandler(label: label, level: level) }
        defer { LogSink.standardError.flush() }  // Log lines are written in batches; the last ones go here.
        let logger = Logger(label: "roost")

        // Bound first: a port in use must fail before the data directory, the key or the database exist.
        let listener: ListeningSocket
        do {
            listener = try ListeningSocket(host: config.host, port: config.port)
        } catch {
            throw StartupError("\(error). Choose another port with --port or ROOST_PORT (or stop the program using it), "
                + "or another address with --host or ROOST_HOST.")
        }
        try DataDirectory.prepare(config.dataDirectory)
        try DataDirectoryLock.acquire(config.dataDirectory, for: "serve from")
        if let key = settings.string(masterKey, "master-key"), !key.isEmpty {
            config.masterKey = key
        } else {
            let (key, path, created) = try MasterKeyFile.loadOrCreate(in: config.dataDirectory)
            config.masterKey = key
            say(created ? "Generated a master key in \(path) (mode 0600)." : "Using the master key in \(path).")
        }
        if config.readOnlyMasterKey == config.masterKey {  // Parse's check, with its message.
            throw StartupError("masterKey and readOnlyMasterKey should be different: choose another --read-only-master-key")
        }
        if config.maintenanceKey == config.masterKey {
            throw StartupError("masterKey and maintenanceKey should be different: choose another --maintenance-key")
        }

        // Block the stop signals before any thread starts, so only sigwait below receives them.
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGINT)
        sigaddset(&signals, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &signals, nil)

        let server: RoostServer
        do {
            server = try RoostServer(config: config, logger: logger)
        } catch {
            if config.databaseURL != nil {
                // PostgresError names the server as user@host:port/database, never with the password.
                throw StartupError("cannot open the PostgreSQL database: \(error). Check --database-url (or ROOST_DATABASE_URL).")
            }
            throw StartupError("cannot open the database in \(config.dataDirectory) (roost.sqlite): \(error). "
                + "Check that its files belong to this user and are writable, or choose another --data-dir.")
        }
        do {
            try server.applySchemaDefinitions()
        } catch {
            throw StartupError("cannot apply the schema definitions of \(settings.string(guards.schema, "schema") ?? "--schema"): \(error)")
        }
        let boundPort = try server.start(on: listener)
        say("roost listening on http://\(config.host):\(boundPort)\(config.mountPath) (app id: \(config.applicationId))")
        StartupCode.release()

        var received: Int32 = 0
        sigwait(&signals, &received)
        logger.info("signal \(received): finishing requests in flight and closing the database")
        try server.stop()
    }

    /// Exits once the parent process is gone (checked every half second on a background thread).
    private func exitWhenOrphaned() {
        let parent = getppid()
        Thread.detachNewThread {
            while getppid() == parent { usleep(500_000) }
            LogSink.standardError.flush()
            Foundation.exit(0)
        }
    }

    /// A body budget under `--max-body` would refuse the largest bodies it allows every time (503s retried in vain).
    private func checkBodyBudget(_ config: ServerConfig, _ settings: Settings) throws {
        let limits = config.connectionLimits
        let budgets = [("max-buffered-body", limits.maxBufferedBodyBytes, maxBufferedBody),
                       ("max-buffered-body-per-ip", limits.maxBufferedBodyBytesPerAddress, maxBufferedBodyPerIp)]
        for (name, bytes, flag) in budgets where bytes != 0 && bytes < config.maxBodyBytes {
            let variable = Settings.variable(for: name)
            let source = flag != nil ? "--\(name): \(bytes)" : settings.environment[variable] != nil ? "\(variable): \(bytes)"
                : "--\(name): its default, \(bytes)"
            throw ValidationError("invalid value for \(source) (expected at least --max-body, \(config.maxBodyBytes): "
                + "larger bodies would always be refused)")
        }
    }

    private func parse<T>(_ text: String, _ name: String, _ convert: (String) -> T?) throws -> T {
        guard let value = convert(text) else { throw ValidationError("invalid value for \(name): \(text)") }
        return value
    }

    /// `/parse/` → `/parse`; the root mount `/` becomes "" so `mount + "/classes"` stays right.
    private func normalizedMount(_ path: String) -> String {
        let trimmed = path.split(separator: "/").joined(separator: "/")
        return trimmed.isEmpty ? "" : "/" + trimmed
    }
}

/// Writes a line to standard output at once (unbuffered: tests and scripts wait for it).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
