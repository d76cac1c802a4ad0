import Foundation

/// Everything the server is told at start-up (flags or `ROOST_*` environment variables).
public struct ServerConfig: Sendable {
    public var host = "127.0.0.1"
    public var port: UInt16 = 1337
    /// URL prefix of the API, e.g. `/parse`. Always starts with `/` and has no trailing slash.
    public var mountPath = "/parse"
    public var dataDirectory = "./roost-data"
    /// A PostgreSQL database (`postgres://...`) to serve from instead of SQLite in `dataDirectory`.
    public var databaseURL: String?
    public var applicationId = "roost"
    public var masterKey = ""
    /// A master key for reading only: everything the master key reads, no write (Parse's `readOnlyMasterKey`).
    public var readOnlyMasterKey: String?
    /// Parse's `maintenanceKey`: the master key's access to objects, and the one way to give an object its own
    /// `createdAt`/`updatedAt` (a migration's); not the master key's routes (schemas, config, hooks...).
    public var maintenanceKey: String?
    /// Addresses and ranges the maintenance key is accepted from (Parse's `maintenanceKeyIps`, localhost by default);
    /// from elsewhere the request goes on without it, and the refusal is logged.
    public var maintenanceKeyIPs: [AddressRange] = [AddressRange("127.0.0.1")!, AddressRange("::1")!]
    /// Parse's client keys: once any is set, a request without the master key must carry one of them in its own
    /// header (`X-Parse-REST-API-Key`, `X-Parse-Client-Key`, `X-Parse-Javascript-Key`, `X-Parse-Windows-Key`).
    public var restAPIKey: String?
    public var clientKey: String?
    public var javascriptKey: String?
    public var dotNetKey: String?
    public var maxBodyBytes = 20 * 1024 * 1024
    /// Seconds one read (a query, a count, a get) may run before it stops with Parse's 124; 0 for no limit.
    public var queryTimeoutSeconds = 5.0
    /// Connection caps and the deadlines for sending a request.
    public var connectionLimits = ConnectionLimits()
    /// Whether a user's email and username are stored lowercased, however a create or update of `_User` spells them
    /// (Parse's `convertEmailToLowercase`, `convertUsernameToLowercase`); queries then match only the lowercase.
    public var convertEmailToLowercase = false
    public var convertUsernameToLowercase = false
    public var allowClientClassCreation = true
    /// Addresses and ranges the master key is accepted from; elsewhere it is refused with 403 (Parse's
    /// `masterKeyIps`, localhost only by default; `127.0.0.1` also matches `::ffff:127.0.0.1`).
    public var masterKeyIPs: [AddressRange] = [AddressRange("127.0.0.1")!, AddressRange("::1")!]
    /// HTTP worker threads (and SQLite reader connections). On 2 cores with 16 clients, 4 measured best
    /// overall: 16 raised creates in short runs but lowered gets and pushed memory past 64 MB in the full benchmark.
    public var threads = 4
    /// Whether each HTTP thread is kept on one CPU (spread round robin over the CPUs the process may
    /// use); see `HTTPServer`. Turn it off when other busy processes share those CPUs.
    public var pinThreads = true
    /// The CORS headers of every response: the origins allowed and headers added to Parse's (`allowOrigin`, `allowHeaders`).
    public var cors = CORS()
    /// How long a session lasts (Parse's `sessionLength`, one year by default).
    public var sessionLengthSeconds = 31_536_000
    /// Whether sessions expire (`sessionLengthSeconds` after they start); off, they last until revoked (Parse's
    /// `expireInactiveSessions`).
    public var expireInactiveSessions = true
    /// Whether a password change (the user's own or through a reset link) ends the user's sessions (Parse's
    /// `revokeSessionOnPasswordReset`); the user changing it gets a new one either way.
    public var revokeSessionOnPasswordReset = true
    /// Whether a session used past half its length gets a new expiry, now plus the length (Parse's `extendSessionOnUse`).
    public var extendSessionOnUse = false
    /// The lifetime of a new session: `nil` for one that never expires.
    var sessionLifetimeSeconds: Int? { expireInactiveSessions ? sessionLengthSeconds : nil }
    /// Password hashing; the parameters are stored with each hash, so raising them later is safe.
    public var passwordHasher = PasswordHasher()
    /// Whether `authData.anonymous` sign-ups are accepted.
    public var enableAnonymousUsers = true
    /// Whether a new user that names no ACL is readable by its owner only (Parse's `enforcePrivateUsers`); off, by
    /// everyone too (`{"*": {"read": true, "write": false}}`).
    public var enforcePrivateUsers = true
    /// The largest `limit` a query may ask for (larger ones are clamped, as Parse's `maxLimit`); nil for none.
    public var maxLimit: Int?
    /// The `limit` of a query that names none (Parse's `defaultLimit`).
    public var defaultLimit = 100
    /// How long `X-Parse-Request-Id` replies are kept (7 days by default).
    public var idempotencyTTLSeconds = 7 * 24 * 3600
    /// Fields hidden per class and entry, added to each class's own `protectedFields` (Parse's `protectedFields`
    /// option, with its default `{"_User": {"*": ["email"]}}` always in).
    public var protectedFields = ServerProtectedFields.parseDefault
    /// Parse's `security` option: `GET /security` answers a report of weak settings (`enabled`), written to the log at
    /// start too (`log`).
    public var securityCheck: (enabled: Bool, log: Bool) = (false, false)
    /// Class schemas defined in a file, applied at start (Parse's `schema` option; `--schema`).
    public var schemaDefinitions: SchemaDefinitions?
    /// Requests per time window per caller, by path (Parse's `rateLimit` option; none by default).
    public var rateLimits = RateLimits.none
    /// The length of the object ids Roost makes (Parse's `objectIdSize`); ids made before at another length stay.
    public var objectIdSize = 10
    /// Whether creates may carry their own `objectId` (Parse's `allowCustomObjectId`).
    public var allowCustomObjectId = false
    /// Test-only fault injection: drop the reply (after the commit) of every Nth write carrying
    /// `X-Parse-Request-Id`. 0, the default, never drops. Set with `ROOST_TEST_DROP_REPLIES`.
    public var dropEveryNthIdempotentReply = 0
    /// Test-only: answer the first N writes with 503, or with 429 when `failWithTooManyRequests`
    /// (`ROOST_TEST_FAIL_FIRST_WRITES`, `ROOST_TEST_FAIL_STATUS`).
    public var failFirstWrites = 0
    /// Test-only: `GET /aggregate` with the parameter `roostInMemory` runs its whole pipeline in memory, as before it
    /// ran in SQL, so tests compare both answers on the same data (`ROOST_TEST_AGGREGATE_IN_MEMORY=1`).
    public var aggregateInMemoryParameter = false
    public var failStatus = 503
    /// Sent to webhooks as `X-Parse-Webhook-Key`, so they can tell Roost's calls from others (Parse's `webhookKey`).
    public var webhookKey: String?
    /// The file extensions clients may upload: `*` or regular expressions (Parse's `fileUpload.fileExtensions`);
    /// by default everything but HTML, SVG and XML.
    public var fileExtensions = FileExtensionPolicy.defaultPatterns
    /// Who may upload files without the master key (Parse's `fileUpload.enableForPublic`, `enableForAnonymousUser`
    /// and `enableForAuthenticatedUser`): by default registered users only.
    /// Parse's `requestKeywordDenylist`, replacing its default list (`KeywordDenylist`); nil for the default.
    public var requestKeywordDenylist: [KeywordDenylist.Entry]?
    public var fileUploadsForPublic = false
    public var fileUploadsForAnonymousUsers = false
    public var fileUploadsForAuthenticatedUsers = true
    /// Requests per `/batch`.
    public var maxBatchSize = 50
    /// How often LiveQuery sockets are pinged; a client that has not answered the previous ping is dropped
    /// (parse-server's `websocketTimeout`). Test-only override: `ROOST_TEST_PING_INTERVAL_MS`.
    public var webSocketPingMilliseconds = 10_000
    /// The largest LiveQuery message (all its fragments); a larger one closes the socket with 1009.
    public var webSocketMaxMessageBytes = 64 * 1024
    /// The classes whose changes LiveQuery logs and publishes, as names or patterns (nil: all); subscribing to
    /// another is refused (119).
    public var liveQueryClasses: LiveQueryClassNames?
    /// How long the LiveQuery change log keeps a change for clients that resume (seconds).
    public var liveQueryReplayWindowSeconds = 600
    /// The most changes the LiveQuery change log keeps. 0 turns the log off, for benchmarks only
    /// (`ROOST_TEST_NO_CHANGE_LOG`): every resume answers `resumed: false`, and `seq` restarts with the process.
    public var liveQueryReplayEvents = 100_000
    /// Subscriptions one LiveQuery client may hold at once (more are refused with 155).
    public var liveQueryMaxSubscriptions = 100
    /// Open LiveQuery sockets from one client address; more upgrades are refused with 429 (0: no limit).
    public var liveQueryMaxConnectionsPerIP = 100
    /// How long a LiveQuery socket that is closing may take to read its last frames before it is dropped.
    /// Test-only override: `ROOST_TEST_CLOSE_TIMEOUT_MS`.
    public var webSocketCloseTimeoutMilliseconds = 5_000

    /// Indexes made for the fields queries keep filtering or sorting on (`--auto-index`, on by default).
    public var autoIndex = AutoIndexSettings()

    /// Parse's `passwordPolicy` (nothing checked by default).
    public var passwordPolicy = PasswordPolicy()
    /// Parse's `accountLockout`; nil: no lockout.
    public var accountLockout: AccountLockoutPolicy?
    /// The mailer and the email verification and password reset options.
    public var mail = MailSettings()

    public init() {}
}

extension ServerConfig {
    /// The public server URL without a trailing slash, when one is set: the base of `Location` headers and file URLs
    /// then, as Parse's `Config.mount` (clients behind a proxy reach the server through it).
    var publicServerBase: String? {
        guard var url = mail.publicServerURL, !url.isEmpty else { return nil }
        while url.hasSuffix("/") { url.removeLast() }
        return url
    }

    /// The paths a batch item's `path` may start with: the mount, and the public server URL's path when that differs
    /// (Parse's `makeBatchRoutingPathFunction`: an SDK builds item paths from the URL it was given).
    var batchMountPaths: [String] {
        guard let base = publicServerBase, var path = URLComponents(string: base)?.path else { return [mountPath] }
        while path.hasSuffix("/") { path.removeLast() }
        return path == mountPath ? [mountPath] : [mountPath, path]
    }
}
