import ArgumentParser
import Foundation
import Logging
import RoostServer

@main
struct Roost: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "roost",
        abstract: "A Parse-compatible backend on SQLite.",
        subcommands: [Serve.self],
        defaultSubcommand: Serve.self)
}

/// `roost serve`: flags win over `ROOST_*` environment variables, which win over defaults.
struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Serve the Parse REST API (the default command).")

    @Option(help: "Port to listen on; 0 picks a free one (env ROOST_PORT, default 1337).") var port: UInt16?
    @Option(help: "Address to listen on (env ROOST_HOST, default 127.0.0.1).") var host: String?
    @Option(help: "URL path of the API (env ROOST_MOUNT, default /parse).") var mount: String?
    @Option(help: "Directory for the database and the generated master key (env ROOST_DATA_DIR, default ./roost-data).")
    var dataDir: String?
    @Option(help: "Application id clients must send (env ROOST_APP_ID, default roost).") var appId: String?
    @Option(help: "Master key (env ROOST_MASTER_KEY); generated and kept in the data directory when absent.")
    var masterKey: String?
    @Option(help: "When set, clients must send this X-Parse-REST-API-Key (env ROOST_REST_API_KEY).") var restApiKey: String?
    @Option(help: "Largest request body in bytes (env ROOST_MAX_BODY, default 20 MB).") var maxBody: Int?
    @Option(help: "Let clients create classes by writing to them: true or false (env ROOST_ALLOW_CLIENT_CLASS_CREATION, default true).")
    var allowClientClassCreation: Bool?
    @Option(help: "Comma-separated addresses or CIDR ranges the master key is accepted from; 0.0.0.0/0 for any (env ROOST_MASTER_KEY_IPS, default 127.0.0.1,::1).")
    var masterKeyIps: String?
    @Option(help: "HTTP worker threads (env ROOST_THREADS, default 4).") var threads: Int?
    @Option(help: "Keep each HTTP thread on one CPU: true or false (env ROOST_PIN_THREADS, default true).")
    var pinThreads: Bool?
    @Option(help: "Key sent to webhooks as X-Parse-Webhook-Key (env ROOST_WEBHOOK_KEY).") var webhookKey: String?
    @Option(help: "Largest query limit; larger ones are clamped (env ROOST_MAX_LIMIT, default none).") var maxLimit: Int?
    @Option(help: "Seconds X-Parse-Request-Id replies are kept (env ROOST_IDEMPOTENCY_TTL, default 604800 = 7 days).")
    var idempotencyTtl: Int?
    @Option(help: "Let creates carry their own objectId: true or false (env ROOST_ALLOW_CUSTOM_OBJECT_ID, default false).")
    var allowCustomObjectId: Bool?
    @Option(help: "Session lifetime in seconds (env ROOST_SESSION_LENGTH, default 31536000 = 1 year).") var sessionLength: Int?
    @Option(help: "PBKDF2-SHA256 iterations for new password hashes (env ROOST_PASSWORD_ITERATIONS, default 600000).")
    var passwordIterations: Int?
    @Option(help: "trace, debug, info, notice, warning, error or critical (env ROOST_LOG_LEVEL, default info).")
    var logLevel: String?

    func run() throws {
        let environment = ProcessInfo.processInfo.environment
        func setting(_ flag: String?, _ name: String) -> String? { flag ?? environment["ROOST_" + name] }

        var config = ServerConfig()
        if let value = setting(port.map(String.init), "PORT") { config.port = try parse(value, "port", UInt16.init) }
        config.host = setting(host, "HOST") ?? config.host
        config.mountPath = normalizedMount(setting(mount, "MOUNT") ?? config.mountPath)
        config.dataDirectory = setting(dataDir, "DATA_DIR") ?? config.dataDirectory
        config.applicationId = setting(appId, "APP_ID") ?? config.applicationId
        config.restAPIKey = setting(restApiKey, "REST_API_KEY")
        config.webhookKey = setting(webhookKey, "WEBHOOK_KEY")
        if let value = setting(maxBody.map(String.init), "MAX_BODY") { config.maxBodyBytes = try parse(value, "max-body", Int.init) }
        if let value = setting(allowClientClassCreation.map(String.init), "ALLOW_CLIENT_CLASS_CREATION") {
            config.allowClientClassCreation = try parse(value, "allow-client-class-creation", Bool.init)
        }
        if let value = setting(masterKeyIps, "MASTER_KEY_IPS") {
            do {
                config.masterKeyIPs = try AddressRange.list(value)
            } catch let error as AddressRange.InvalidEntry {
                let source = masterKeyIps != nil ? "--master-key-ips" : "ROOST_MASTER_KEY_IPS"
                throw ValidationError("invalid entry in \(source): \(error.entry) (not an IPv4 or IPv6 address or CIDR range)")
            }
        }
        if let value = setting(threads.map(String.init), "THREADS") { config.threads = max(1, try parse(value, "threads", Int.init)) }
        if let value = setting(pinThreads.map(String.init), "PIN_THREADS") {
            config.pinThreads = try parse(value, "pin-threads", Bool.init)
        }
        if let value = setting(maxLimit.map(String.init), "MAX_LIMIT") { config.maxLimit = max(1, try parse(value, "max-limit", Int.init)) }
        if let value = setting(idempotencyTtl.map(String.init), "IDEMPOTENCY_TTL") {
            config.idempotencyTTLSeconds = max(1, try parse(value, "idempotency-ttl", Int.init))
        }
        if let value = setting(allowCustomObjectId.map(String.init), "ALLOW_CUSTOM_OBJECT_ID") {
            config.allowCustomObjectId = try parse(value, "allow-custom-object-id", Bool.init)
        }
        if let value = setting(sessionLength.map(String.init), "SESSION_LENGTH") {
            config.sessionLengthSeconds = max(1, try parse(value, "session-length", Int.init))
        }
        if let value = setting(passwordIterations.map(String.init), "PASSWORD_ITERATIONS") {
            config.passwordHasher = PasswordHasher(iterations: try parse(value, "password-iterations", Int.init))
        }
        if environment["ROOST_EXIT_WITH_PARENT"] == "1" { exitWhenOrphaned() }  // Test harnesses: no stray servers.
        if let value = environment["ROOST_TEST_FAIL_FIRST_WRITES"] {  // Test-only fault injection; see ServerConfig.
            config.failFirstWrites = max(0, try parse(value, "ROOST_TEST_FAIL_FIRST_WRITES", Int.init))
            config.failStatus = try parse(environment["ROOST_TEST_FAIL_STATUS"] ?? "503", "ROOST_TEST_FAIL_STATUS", Int.init)
        }
        if let value = environment["ROOST_TEST_DROP_REPLIES"] {  // Test-only fault injection; see ServerConfig.
            config.dropEveryNthIdempotentReply = max(0, try parse(value, "ROOST_TEST_DROP_REPLIES", Int.init))
        }
        let level = try parse(setting(logLevel, "LOG_LEVEL") ?? "info", "log-level", Logger.Level.init(rawValue:))

        LoggingSystem.bootstrap { label in LineLogHandler(label: label, level: level) }
        defer { LogSink.standardError.flush() }  // Log lines are written in batches; the last ones go here.
        let logger = Logger(label: "roost")

        try FileManager.default.createDirectory(
            atPath: config.dataDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        if let key = setting(masterKey, "MASTER_KEY"), !key.isEmpty {
            config.masterKey = key
        } else {
            let (key, path, created) = try MasterKeyFile.loadOrCreate(in: config.dataDirectory)
            config.masterKey = key
            say(created ? "Generated a master key in \(path) (mode 0600)." : "Using the master key in \(path).")
        }

        // Block the stop signals before any thread starts, so only sigwait below receives them.
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGINT)
        sigaddset(&signals, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &signals, nil)

        let server = try RoostServer(config: config, logger: logger)
        let boundPort = try server.start()
        say("roost listening on http://\(config.host):\(boundPort)\(config.mountPath) (app id: \(config.applicationId))")

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

    /// Writes a line to standard output at once (unbuffered: tests and scripts wait for it).
    private func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
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
