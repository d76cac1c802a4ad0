import Foundation
import Logging
import RoostCore
import Synchronization

/// The Roost server: storage, routes and the HTTP listener, wired together.
///
/// The whole request chain, in order (`respond(to:)`):
/// HTTP request → CORS preflight / health → body limit → JSON body → JS SDK body keys → app id,
/// client key, master key → route → handler → storage; any thrown error → `errorResponse(for:)`.
/// Creates, updates and deletes of ordinary objects are parked after authentication and run by the
/// `WriteBatcher`, which answers them once their group has committed.
public final class RoostServer: @unchecked Sendable {
    public let config: ServerConfig
    let storage: Storage
    let files: any FileStorage
    let fileExtensions: FileExtensionPolicy
    let logger: Logger
    private var router = Router()
    private var http: HTTPServer?
    private var liveQuery: LiveQueryServer?
    private var pruner: IdempotencyPruner?
    private var changeLogTrimmer: ChangeLogTrimmer?
    private var autoIndexSweeper: AutoIndexSweeper?
    private var mailSender: MailSender?
    private let requestCounter = RequestCounter()
    private let faults: FaultInjection
    private var writeBatcher: WriteBatcher!
    private let passwordWorkers = PasswordWorkers(count: ProcessInfo.processInfo.activeProcessorCount)
    /// Where `POST /validate_purchase` waits for Apple (`AppStore.timeout` at most each): a few at once, the rest queued.
    private let appStoreWorkers = WorkerThreads(name: "roost-appstore", count: 4)
    private let memoryTrim = MemoryTrim()
    /// With `--extend-session-on-use`: renews sessions as they are used.
    private let sessionRenewal: SessionRenewal?

    /// Opens the database in `config.dataDirectory` (creating it) and prepares the routes.
    public init(config: ServerConfig, logger: Logger) throws {
        var config = config
        config.mail.templates = MailTemplates.load(dataDirectory: config.dataDirectory)
        self.config = config
        self.logger = logger
        faults = FaultInjection(config)
        try FileManager.default.createDirectory(atPath: config.dataDirectory, withIntermediateDirectories: true)
        if let databaseURL = config.databaseURL {
            // A connection for each HTTP thread, and a few for the background writers (pruner, mail, deferred writes).
            storage = try Storage(databaseURL: databaseURL, poolSize: config.threads + 4, queryTimeout: config.queryTimeoutSeconds)
        } else {
            storage = try Storage(path: TransferDatabase.path(dataDirectory: config.dataDirectory), queryTimeout: config.queryTimeoutSeconds)
        }
        // Parse creates `_User` and `_Role` at start: `GET /schemas` lists them before any user or role exists.
        // Best effort: a full disk must not keep the server from starting (the first sign-up creates them then).
        _ = try? storage.write { db in (try UserStore.schema(in: db), try RoleStore.schema(in: db)) }
        files = try storage.databaseFileStorage() ?? FileStore(dataDirectory: config.dataDirectory)
        sessionRenewal = config.extendSessionOnUse && config.expireInactiveSessions
            ? SessionRenewal(storage: storage, sessionLengthSeconds: config.sessionLengthSeconds, logger: logger) : nil
        fileExtensions = try FileExtensionPolicy(config.fileExtensions)
        UserRoutes.register(in: &router)  // Before ClassRoutes: `/classes/_User` is theirs.
        SessionRoutes.register(in: &router)
        RoleRoutes.register(in: &router)
        InstallationRoutes.register(in: &router)
        AudienceRoutes.register(in: &router)
        ProductRoutes.register(in: &router)
        ClassRoutes.register(in: &router)
        SchemaRoutes.register(in: &router)
        SecurityCheck.register(in: &router)
        ConfigRoutes.register(in: &router)
        UnpoweredRoutes.register(in: &router)
        AccountRoutes.register(in: &router)
        HookRoutes.register(in: &router)
        LogsRoutes.register(in: &router)
        AdminRoutes.register(in: &router)
        AggregateRoutes.register(in: &router)
        BatchRoute.register(in: &router, routes: router) { [unowned self] request, context in try self.dispatch(request, context) }
        writeBatcher = WriteBatcher(storage: storage, writers: storage.concurrentWrites) { [unowned self] request, context in try self.dispatch(request, context) }
    }

    /// Applies `config.schemaDefinitions` (`--schema`), with the master key; run before `start`.
    public func applySchemaDefinitions() throws {
        guard let definitions = config.schemaDefinitions else { return }
        let context = RequestContext(
            config: config, storage: storage, isMaster: true, user: nil, installationId: nil, requestId: "schema", logger: logger,
            publicURL: config.publicServerBase ?? "", transaction: nil, passwords: PreparedPasswords(hasher: config.passwordHasher))
        try SchemaMigration.run(definitions, context: context)
    }

    /// Writes the security check's report to the log (`--security-check` with `--security-check-log`), as Parse at start.
    private func logSecurityCheck() {
        guard config.securityCheck.enabled, config.securityCheck.log else { return }
        let (text, failed) = SecurityCheck.logText(config)
        if failed { logger.warning("\(text)") } else { logger.info("\(text)") }
    }

    /// Starts listening on `config.host` and `config.port`; returns the bound port.
    public func start() throws -> UInt16 {
        try start(on: ListeningSocket(host: config.host, port: config.port))
    }

    /// Starts serving on a socket bound earlier (`roost` binds before it creates any file); returns its port.
    public func start(on listener: consuming ListeningSocket) throws -> UInt16 {
        try startLiveQuery()
        logSecurityCheck()
        // File uploads (`POST /parse/files/name`) over 1 MB go to disk as they arrive, not to memory.
        let uploads = config.mountPath + "/files/"
        let spool = BodySpool(directory: config.dataDirectory) { method, path in method == "POST" && path.hasPrefix(uploads) }
        let server = try HTTPServer(
            listener: listener, threads: config.threads, pinThreads: config.pinThreads,
            maxBodyBytes: config.maxBodyBytes, limits: config.connectionLimits, spool: spool, cors: config.cors
        ) { [unowned self] request, later in self.respond(to: request, later: later) }
        http = server
        pruner = IdempotencyPruner(storage: storage)
        storage.autoIndexes.configure(config.autoIndex, logger: logger)
        if config.autoIndex.enabled { autoIndexSweeper = AutoIndexSweeper(storage: storage) }
        if config.mail.smtpURL != nil {
            mailSender = MailSender(storage: storage, settings: config.mail, logger: logger)
            mailSender?.start()
        }
        return server.port
    }

    /// LiveQuery's server, fed by every commit.
    private func startLiveQuery() throws {
        let live = try LiveQueryServer(
            settings: .init(applicationId: config.applicationId, masterKey: config.masterKey, masterKeyIPs: config.masterKeyIPs,
                            classes: config.liveQueryClasses, logsChanges: config.liveQueryReplayEvents > 0,
                            maxSubscriptionsPerClient: config.liveQueryMaxSubscriptions,
                            maxConnectionsPerAddress: config.liveQueryMaxConnectionsPerIP),
            socketSettings: .init(maxMessageBytes: config.webSocketMaxMessageBytes,
                                  pingIntervalMilliseconds: config.webSocketPingMilliseconds,
                                  closeTimeoutMilliseconds: config.webSocketCloseTimeoutMilliseconds),
            matcher: LiveQueryMatcher(storage: storage, config: config, logger: logger), storage: storage,
            authenticate: { [unowned self] token in try authenticate(token) })
        // On PostgreSQL the log carries every node's changes to every other, so it is written even without resumes
        // (`liveQueryReplayEvents` 0, for benchmarks), and then kept to the last 10,000.
        let shared = storage.isShared
        let records: @Sendable (String) -> Bool = { shared ? live.isLive($0) : live.records($0) }
        let head = try storage.observeCommits(logging: config.liveQueryReplayEvents > 0, records: records,
                                              onCommit: { live.publish($0) }, onLoss: { live.lost(through: $0) })
        live.begin(at: head)
        if config.liveQueryReplayEvents > 0 || shared {
            changeLogTrimmer = ChangeLogTrimmer(storage: storage, windowSeconds: config.liveQueryReplayWindowSeconds,
                                                maxChanges: config.liveQueryReplayEvents > 0 ? config.liveQueryReplayEvents : 10_000)
        }
        liveQuery = live
    }

    /// Finishes requests in flight, stops listening and closes the database.
    public func stop() throws {
        // First: LiveQuery's sockets close with 1001 and give their connection slots back, before reads are
        // interrupted (an event worked out from an interrupted read would reach no one).
        liveQuery?.closeSockets()
        storage.interruptReads()  // Slow queries end now (124), so their requests finish and stop() need not wait.
        liveQuery?.stop()
        http?.stop()  // Waits for parked requests, which the write batcher and the password workers answer.
        http = nil
        writeBatcher.stop()
        passwordWorkers.stop()
        appStoreWorkers.stop()
        pruner?.stop()
        changeLogTrimmer?.stop()
        autoIndexSweeper?.stop()
        mailSender?.stop()
        do {
            try storage.close()
        } catch let error as any DatabaseError where error.isDiskFull {
            // The final checkpoint needs room; every commit is in the WAL, which the next start reads.
            logger.warning("disk full: the database was closed without its final checkpoint (no commit is lost)")
        }
    }

    /// The request pipeline; never throws and never crashes on client input. Returns nil when the
    /// request was parked (only when given `later`): the write batcher or a password worker answers it through `later`.
    func respond(to request: HTTPRequest, later: LaterReply?) -> HTTPResponse? {
        let started = DispatchTime.now()
        let requestId = request.headers["x-request-id"].map { String($0.prefix(64)) } ?? requestCounter.next()
        var requestLogger = logger
        requestLogger[metadataKey: "rid"] = .string(requestId)
        if let refusal = faults.refusal(for: request) { return refusal }
        let outcome: Result<HTTPResponse, Error>
        do {
            guard let response = try handle(request, requestId: requestId, logger: requestLogger, started: started, later: later) else {
                return nil
            }
            outcome = .success(response)
        } catch {
            outcome = .failure(error)
        }
        return finish(outcome, of: request, started: started, logger: requestLogger)
    }

    /// The reply to send for `outcome` (an error becomes Parse's error body), logged.
    private func finish(_ outcome: Result<HTTPResponse, Error>, of request: HTTPRequest, started: DispatchTime,
                        logger: Logger) -> HTTPResponse {
        var response: HTTPResponse
        switch outcome {
        case .success(let answer): response = answer
        case .failure(let error): response = makeErrorResponse(error, logger: logger)
        }
        faults.apply(to: &response, for: request)
        // API replies change with every write and differ by query string and caller: a cache that keys on the
        // path alone (Foundation's URLCache in Parse-Swift on Linux) must not keep them. Files set their own.
        if !response.headers.contains(where: { $0.0 == "Cache-Control" }) { response.headers.append(("Cache-Control", "no-store")) }
        if request.body.count >= MemoryTrim.threshold || response.body.count >= MemoryTrim.threshold { memoryTrim.afterLargeRequest() }
        // Echoed so a client can tell its own reply from one a middlebox substituted (the SDK checks it).
        if let requestId = request.headers["x-parse-request-id"], requestId.utf8.count <= 256 {
            response.headers.append(("X-Parse-Request-Id", requestId))
        }
        let elapsedMicroseconds = (DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1000
        // The path only (still percent-encoded, so it cannot forge lines): query strings can carry
        // credentials (GET /login).
        logger.info("\(request.method) \(request.path) \(response.status) \(RoostServer.milliseconds(elapsedMicroseconds))ms")
        return response
    }

    /// `1234` µs → `"1.234"`, without Foundation's slow `String(format:)`.
    static func milliseconds(_ microseconds: UInt64) -> String {
        let fraction = String(microseconds % 1000)
        return "\(microseconds / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }

    /// Returns nil when the request was parked for the write batcher or the password workers, which answer it through `later`.
    private func handle(_ request: HTTPRequest, requestId: String, logger: Logger, started: DispatchTime,
                        later: LaterReply?) throws -> HTTPResponse? {
        if request.method == "OPTIONS" {  // Parse's `allowCrossDomain`: Express's `res.sendStatus(200)`.
            return HTTPResponse(status: 200, headers: [("Content-Type", "text/plain; charset=utf-8")], body: Array("OK".utf8))
        }
        let mount = config.mountPath
        if WebSocketHandshake.isRequested(request.headers), request.path == mount || request.path == mount + "/" || request.path == "/" {
            return liveQueryUpgrade(request)
        }
        guard request.path == mount || request.path.hasPrefix(mount + "/") || request.path == "/health" else {
            throw APIError.routeNotFound(method: request.method, path: request.path)
        }
        let relative = request.path.hasPrefix(mount + "/") ? request.path.dropFirst(mount.count) : Substring(request.path)
        // Split before decoding, so an encoded "/" (%2F) stays inside its segment.
        let segments = relative.utf8.split(separator: UInt8(ascii: "/")).map {
            HTTPRequest.percentDecode(Substring($0), plusIsSpace: false)
        }
        if segments == ["health"] { return encode(APIResponse(body: ["status": "ok"])) }
        if request.bodyTooLarge { throw APIError.payloadTooLarge(limit: config.maxBodyBytes) }
        if request.bodyOverBudget { throw APIError.bodiesOverBudget }
        if let error = request.bodyWriteError { throw error }  // The disk is full: "database or disk is full".
        if segments.first == "files" { return try handleFile(request, segments: segments) }  // Bodies are not JSON.
        if segments.first == "apps" { return accountPage(request, segments: segments, requestId: requestId, logger: logger,
                                                         started: started, later: later) }

        var body = try parseBody(request.body)
        var method = request.method
        var credentials = Credentials(headers: request.headers)
        if case .object(var members)? = body {
            // The JS SDK form: every call is a POST whose body names the method and carries the keys.
            if method == "POST", let override = members.removeValue(forKey: "_method")?.stringValue {
                method = override.uppercased()
            }
            if credentials.applicationId != config.applicationId { credentials.adopt(from: &members) }
            members["_noBody"] = nil  // A client's marker of an empty body, which Parse drops from every request.
            body = .object(members)
        }
        if method == "GET", case .object(let members)? = body, members.isEmpty { body = nil }

        if credentials.hasMalformedContext { throw ParseError(.invalidJSON, "Invalid object for context.") }
        let access = try credentials.authorizeAccess(config, clientAddress: request.clientAddress)
        let isMaster = access.isMaster
        if access.refusedMaintenanceKey {  // Parse's log line, so an operator sees why the key did nothing.
            logger.error("Request using maintenance key rejected as the request IP address '\(request.clientAddress)' is not set in Parse Server option 'maintenanceKeyIps'.")
        }
        try checkRateLimits(method, String(relative), clientAddress: request.clientAddress, isMaster: isMaster && !access.isMaintenance,
                            sessionToken: credentials.sessionToken)
        // Parse ignores a session token only on POST /login; anywhere else a bad one fails the request.
        let isLogin = method == "POST" && segments == ["login"]
        // Nor on GET /sessions/me, which looks the token up itself (expired sessions too): `SessionRoutes`.
        let isSessionMe = method == "GET" && segments == ["sessions", "me"]
        // A token without `r:` sent to upgrade is a legacy one to Parse, looked up among those (roost has none).
        if segments == ["upgradeToRevocableSession"], let token = credentials.sessionToken, !token.hasPrefix("r:") {
            throw ParseError(.invalidSessionToken, "invalid legacy session token")
        }
        // Once the master key (or the read-only or maintenance key) is accepted, Parse checks no session: a bad token
        // sent beside it (the PHP SDK sends the current user's with every call) is ignored, a good one still names the caller.
        let user = isLogin || isSessionMe ? nil
            : isMaster ? credentials.sessionToken.flatMap { try? authenticate($0) }
            : try credentials.sessionToken.map { try authenticate($0) }
        var context = RequestContext(
            config: config, storage: storage, isMaster: isMaster, user: user, installationId: credentials.installationId,
            requestId: requestId, logger: logger, publicURL: publicURL(request), transaction: nil,
            passwords: PreparedPasswords(hasher: config.passwordHasher))
        if isSessionMe { context.uncheckedSessionToken = credentials.sessionToken }
        context.isReadOnly = access.isReadOnly
        context.isMaintenance = access.isMaintenance
        // A GET calls a webhook only when some class has a `beforeFind` one.
        if try method != "GET" || storage.anyClassHasBeforeFind() {
            context.origin = RequestOrigin(clientAddress: request.clientAddress, headers: request.headers, cloudContext: credentials.cloudContext)
        }
        var apiRequest = APIRequest(method: method, segments: segments, body: body, query: request.query)
        apiRequest.target = request.target
        if method == "GET", PropertyList.wants(request.headers["accept"]) {
            let response = try dispatch(apiRequest, context)
            return HTTPResponse(status: response.status, headers: response.headers + [("Content-Type", PropertyList.contentType)],
                                body: PropertyList.encode(response.body))
        }
        let idempotencyKey = request.headers["x-parse-request-id"].flatMap { Idempotency.applies(method: method, segments: segments) ? $0 : nil }
        let claimedKey = request.headers["x-parse-request-id"].flatMap {
            Idempotency.appliesOutsideWrite(method: method, segments: segments) ? $0 : nil
        }
        let run = { [self] () throws -> HTTPResponse in
            if let claimedKey {
                return encode(try Idempotency.runClaimed(claimedKey, request: apiRequest, context: context) { try dispatch(apiRequest, $0) })
            }
            guard let idempotencyKey else { return encode(try dispatch(apiRequest, context)) }
            return encode(try Idempotency.run(idempotencyKey, request: apiRequest, context: context) { try dispatch(apiRequest, $0) })
        }
        // Passwords are hashed and checked first, on a password worker: never inside a write (a batch's,
        // an idempotent request's), which would hold every other write meanwhile.
        let passwordWork = PasswordPreparation.requests(in: apiRequest, mountPaths: config.batchMountPaths, batchLimit: config.maxBatchSize)
        if !passwordWork.isEmpty {
            guard let later else {
                PasswordPreparation.prepare(passwordWork, context: context)
                return try run()
            }
            later.suspend()
            let steps = passwordWork.map { item in { PasswordPreparation.prepare([item], context: context) } }
            passwordWorkers.submitInTurns(steps[...]) { [self] in
                let reply = Result { try run() }
                later.send { [self] in finish(reply, of: request, started: started, logger: logger) }
            }
            return nil
        }
        // Apple's receipt check waits on another server: it runs on a thread of its own, the connection parked meanwhile,
        // so clients asking for it cannot hold the HTTP threads.
        if let later, ProductRoutes.validatesPurchase(apiRequest) {
            later.suspend()
            appStoreWorkers.submit { [self] in
                let reply = Result { try run() }
                later.send { [self] in finish(reply, of: request, started: started, logger: logger) }
            }
            return nil
        }
        if idempotencyKey != nil || claimedKey != nil { return try run() }
        if let later, WriteBatcher.accepts(apiRequest) {
            later.suspend()
            writeBatcher.submit(apiRequest, context) { [self] outcome in
                // Encoding and logging happen back on the connection's thread, off the writer.
                later.send { [self] in
                    let reply = if case .failure(let error) = outcome, error is WriteBatcher.NeedsOwnWrite {
                        Result { encode(try dispatch(apiRequest, context)) }  // Runs alone, here: see `WriteBatcher`.
                    } else {
                        outcome.map { encode($0) }
                    }
                    return finish(reply, of: request, started: started, logger: logger)
                }
            }
            return nil
        }
        return encode(try dispatch(apiRequest, context))
    }

    /// The pages of emailed links (`AccountPages`); no keys needed, as in Parse. Setting a password hashes it:
    /// that runs on a password worker, the connection parked meanwhile.
    private func accountPage(_ request: HTTPRequest, segments: [String], requestId: String, logger: Logger, started: DispatchTime,
                             later: LaterReply?) -> HTTPResponse? {
        let context = RequestContext(
            config: config, storage: storage, isMaster: false, user: nil, installationId: nil, requestId: requestId, logger: logger,
            publicURL: publicURL(request), transaction: nil, passwords: PreparedPasswords(hasher: config.passwordHasher))
        let pages = AccountPages(context: context)
        guard let later, AccountPages.setsPassword(request.method, segments) else { return pages.respond(request, segments: segments) }
        later.suspend()
        passwordWorkers.submit { [self] in
            let reply = pages.respond(request, segments: segments)
            later.send { [self] in finish(.success(reply), of: request, started: started, logger: logger) }
        }
        return nil
    }

    /// Switches a LiveQuery client to WebSocket (Parse-Swift keeps the server URL's path; other clients use `/`).
    private func liveQueryUpgrade(_ request: HTTPRequest) -> HTTPResponse {
        guard let liveQuery else { return HTTPResponse(status: 503) }
        guard let slot = liveQuery.reserveConnection(from: request.clientAddress, counted: request.countedClient) else {
            return HTTPResponse(status: 429, headers: [("Content-Type", "text/plain"), ("Retry-After", "1")],
                                body: Array("Too many LiveQuery connections from this address (--live-query-max-connections-per-ip)".utf8))
        }
        do {
            let accept = try WebSocketHandshake.accept(method: request.method, headers: request.headers)
            var response = HTTPResponse(status: 101, headers: [
                ("Connection", "Upgrade"), ("Upgrade", "websocket"), ("Sec-WebSocket-Accept", accept)])
            response.upgrade = { connection in liveQuery.adopt(connection, into: slot) }
            return response
        } catch WebSocketHandshake.Refusal.unsupportedVersion {
            return HTTPResponse(status: 426, headers: [("Sec-WebSocket-Version", "13"), ("Content-Type", "text/plain")],
                                body: Array("Upgrade Required".utf8))
        } catch {
            return HTTPResponse(status: 400, headers: [("Content-Type", "text/plain")], body: Array("Bad Request".utf8))
        }
    }

    /// The user of a session token.
    /// - Throws: `ParseError` 209 when the token is unknown or expired.
    func authenticate(_ token: String) throws -> AuthenticatedUser {
        let digest = SessionToken.digest(token)
        var (entry, generation) = storage.sessions.lookup(digest)
        if entry == nil {
            entry = try storage.read { db -> SessionCache.Entry? in
                guard let session = try SessionStore.find(digest: digest, in: db) else { return nil }
                return SessionCache.Entry(userId: session.userId, sessionId: session.objectId,
                                          expiresAt: session.expiresAt.millisecondsSince1970,
                                          updatedAt: session.updatedAt.millisecondsSince1970,
                                          roles: try RoleStore.roleNames(of: session.userId, in: db))
            }
            if let entry { storage.sessions.store(entry, for: digest, generation: generation) }
        }
        guard let entry else { throw ParseError(.invalidSessionToken, "Invalid session token") }
        // A user whose id reads as a role's would hold that role in every ACL check (`aclSubjects`). No sign-up makes
        // one, but an edited import could: refused as Parse's `getAuthForSessionToken` refuses it.
        guard !entry.userId.hasPrefix("role:") else { throw ParseError(.internalServerError, "Invalid object ID.") }
        let now = ParseDate.now().millisecondsSince1970
        guard entry.expiresAt > now else { throw ParseError(.invalidSessionToken, "Session token is expired.") }
        if let sessionRenewal, entry.expiresAt < SessionRecord.neverExpires.millisecondsSince1970,
            sessionRenewal.isDue(updatedAt: entry.updatedAt, now: now) {
            sessionRenewal.renew(sessionId: entry.sessionId)
        }
        return AuthenticatedUser(id: entry.userId, sessionId: entry.sessionId, sessionToken: token, roles: entry.roles)
    }

    /// Parse's `handleRateLimit`: once the keys are checked, before the session is (`RateLimits`).
    func checkRateLimits(_ method: String, _ path: String, clientAddress: String, isMaster: Bool, sessionToken: String?) throws {
        guard !config.rateLimits.isEmpty else { return }
        let caller = RateLimits.Caller(address: clientAddress, isMaster: isMaster, sessionToken: sessionToken) { [self] in
            sessionToken.flatMap { try? authenticate($0).id }
        }
        try config.rateLimits.check(method: method, path: path, caller: caller)
    }

    func dispatch(_ request: APIRequest, _ context: RequestContext) throws -> APIResponse {
        guard let (handler, parameters) = router.match(method: request.method, segments: request.segments) else {
            throw APIError.routeNotFound(method: request.method, path: "/" + request.segments.joined(separator: "/"))
        }
        try ReadOnlyMasterKey.check(method: request.method, segments: request.segments, context: context)
        if let body = request.body, KeywordDenylist.scans(method: request.method, segments: request.segments) {
            try KeywordDenylist.check(body, custom: config.requestKeywordDenylist)
        }
        return try handler(request, context, parameters)
    }

    /// The most JSON values a request body may hold: about what MongoDB's 16 MB document limit lets
    /// a Parse Server store, and ~100 MB at most once parsed (10 million zeros took ~600 MB).
    static let maximumBodyValues = 1_000_000

    /// Parse clients send JSON whatever the Content-Type (the JS SDK uses `text/plain`).
    private func parseBody(_ bytes: [UInt8]) throws -> JSON? {
        guard bytes.contains(where: { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }) else { return nil }
        do {
            return try JSONParser.parse(bytes, maximumValues: RoostServer.maximumBodyValues)
        } catch let error as JSONParseError {
            throw ParseError(.invalidJSON, "Invalid JSON: \(error.description)")
        }
    }

    func encode(_ response: APIResponse) -> HTTPResponse {
        var headers = response.headers
        headers.append(("Content-Type", "application/json; charset=utf-8"))
        return HTTPResponse(status: response.status, headers: headers, body: response.body.encoded())
    }

    private func makeErrorResponse(_ error: Error, logger: Logger) -> HTTPResponse {
        let answer = errorResponse(for: error)
        if answer.isServerFault { logger.error("internal error: \(error)") }
        if case APIError.masterKeyFromOutsideIPs(let address) = error {
            logger.error("Request using master key rejected as the request IP address '\(address)' is not set in --master-key-ips.")
        }
        var response = encode(APIResponse(status: answer.status, body: answer.body))
        if answer.status == 503 { response.headers.append(("Retry-After", "1")) }  // A moment's overload: try again soon.
        return response
    }
}

/// Short request ids for log lines, unique within one run.
final class RequestCounter: Sendable {
    private let value = Atomic<UInt64>(0)

    func next() -> String { String(nextNumber(), radix: 36) }

    func nextNumber() -> UInt64 { value.add(1, ordering: .relaxed).newValue }
}

extension RoostServer {
    /// The public server URL when one is set, else `http://<Host><mount>`: as Parse's `Config.mount`, the base of
    /// `Location` headers and file URLs.
    func publicURL(_ request: HTTPRequest) -> String {
        config.publicServerBase ?? "http://\(request.headers["host"] ?? "\(config.host):\(config.port)")\(config.mountPath)"
    }
}
