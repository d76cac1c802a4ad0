import Foundation
import RoostCore

/// A connection to one Roost (or Parse) server: configuration, the current user and the local
/// state kept in a storage directory.
///
/// ```swift
/// let client = try RoostClient(.init(serverURL: URL(string: "http://127.0.0.1:1337/parse")!, applicationId: "roost"))
/// let todo = client.object("Todo")
/// todo["title"] = "Buy milk"
/// try await todo.save()
/// ```
/// Several clients with different storage directories can live in one process (two "devices").
/// For single-client apps, `RoostClient.initialize(_:)` also makes the client `RoostClient.shared`.
///
/// Concurrency: every operation has an `async` form; `…Blocking()` twins wait on the calling
/// thread (for scripts; never call them from async code); `…InBackground { result in }` variants
/// call back on a background thread. A command-line program has no main run loop and needs none.
public final class RoostClient: @unchecked Sendable {
    public struct Configuration: Sendable {
        /// The API root, mount path included (`http://127.0.0.1:1337/parse`).
        public var serverURL: URL
        public var applicationId: String
        public var clientKey: String?
        /// Where the current user (and later the offline queue) are kept. Default:
        /// `$XDG_DATA_HOME/roost/<program name>` (`~/.local/share/roost/<program name>`).
        public var storageDirectory: URL
        public var requestTimeout: TimeInterval

        public init(serverURL: URL, applicationId: String, clientKey: String? = nil, storageDirectory: URL? = nil,
                    requestTimeout: TimeInterval = 30) {
            self.serverURL = serverURL
            self.applicationId = applicationId
            self.clientKey = clientKey
            self.storageDirectory = storageDirectory ?? Configuration.defaultStorageDirectory()
            self.requestTimeout = requestTimeout
        }

        static func defaultStorageDirectory() -> URL {
            let environment = ProcessInfo.processInfo.environment
            let base = environment["XDG_DATA_HOME"].map { URL(fileURLWithPath: $0) }
                ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share")
            return base.appendingPathComponent("roost").appendingPathComponent(ProcessInfo.processInfo.processName)
        }
    }

    public let configuration: Configuration
    let transport: HTTPTransport
    let userStore: CurrentUserStore
    let lock = NSLock()
    var loadedCurrentUser = false
    var currentUserStorage: RoostUser?
    var isAutomaticUserEnabled = false
    /// The durable `saveEventually` queue (resumes draining at start when commands are left).
    private(set) var eventually: EventuallyQueue!
    /// Cached query results and pinned objects.
    let localStore: LocalStore

    /// Creates the storage directory (mode 0700) if needed.
    public init(_ configuration: Configuration) throws {
        self.configuration = configuration
        transport = HTTPTransport(serverURL: configuration.serverURL, applicationId: configuration.applicationId,
                                  clientKey: configuration.clientKey, timeout: configuration.requestTimeout)
        try FileManager.default.createDirectory(at: configuration.storageDirectory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        userStore = CurrentUserStore(directory: configuration.storageDirectory)
        let queueStore = try EventuallyStore(directory: configuration.storageDirectory)
        localStore = try LocalStore(directory: configuration.storageDirectory, pins: queueStore.database)
        eventually = EventuallyQueue(client: self, store: queueStore)
        if eventually.store.pendingCount > 0 { eventually.signal() }
    }

    deinit {
        liveQueryStorage?.stop()
        eventually?.shutdown()
    }

    private var liveQueryStorage: LiveQueryConnection?
    /// The LiveQuery socket shared by this client's subscriptions (made on first use).
    var liveQuery: LiveQueryConnection {
        lock.withLock {
            if let connection = liveQueryStorage { return connection }
            let connection = LiveQueryConnection(client: self)
            liveQueryStorage = connection
            return connection
        }
    }

    /// Live subscriptions follow the current user's session: called wherever it may have changed.
    func sessionDidChange() {
        lock.withLock { liveQueryStorage }?.sessionMayHaveChanged()
    }

    private static let sharedLock = NSLock()
    nonisolated(unsafe) private static var sharedClient: RoostClient?

    /// Creates a client and makes it `shared`: the one-line setup for single-client apps.
    @discardableResult
    public static func initialize(_ configuration: Configuration) throws -> RoostClient {
        let client = try RoostClient(configuration)
        sharedLock.withLock { sharedClient = client }
        return client
    }

    /// The client set up by `initialize(_:)`; using it before is a programming error.
    public static var shared: RoostClient {
        guard let client = sharedLock.withLock({ sharedClient }) else {
            preconditionFailure("Call RoostClient.initialize(_:) before using RoostClient.shared")
        }
        return client
    }

    /// A new, unsaved object of `className`.
    public func object(_ className: String) -> RoostObject {
        className == "_User" ? RoostUser(client: self) : RoostObject(className: className, client: self)
    }

    /// An object known by id; `fetch()` loads it.
    func makeObject(className: String, objectId: String) -> RoostObject {
        if className == "_User" {
            let user = RoostUser(client: self)
            user.state.objectId = objectId
            return user
        }
        return RoostObject(className: className, objectId: objectId, client: self)
    }

    /// The current user's session token, if the user exists on the server.
    var sessionToken: String? { currentUser?.sessionToken }

    /// A request with the current user's session; a 209 clears that session (see `handleSessionError`).
    func request(_ method: String, _ path: String, body: JSON? = nil, query: [String: String] = [:]) async throws -> JSON {
        do {
            return try await transport.send(method, path, body: body, query: query, sessionToken: sessionToken)
        } catch {
            handleSessionError(error)
            throw error
        }
    }

    /// On 209 (invalid or expired session) the cached session is useless: forget it so the app can log in again.
    func handleSessionError(_ error: Error) {
        guard (error as? RoostError)?.code == .invalidSessionToken else { return }
        lock.withLock {
            currentUserStorage = nil
            loadedCurrentUser = true
        }
        userStore.delete()
        sessionDidChange()
    }
}
