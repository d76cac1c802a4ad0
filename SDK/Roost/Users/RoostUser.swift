import Foundation
import RoostCore

/// A `_User`. Its session token is kept apart from its fields; its password is sent, never kept.
public final class RoostUser: RoostObject, @unchecked Sendable {
    /// Set for an automatic user that exists only on this device so far. Guarded by `lock`.
    var lazyAnonymousId: String?
    var sessionTokenStorage: String?
    /// Requests in flight that will replace the session (a sign-up converting this anonymous user):
    /// until they answer, a 209 for a queued command may come from the old token being revoked.
    var sessionChangesInFlight = 0

    public init(client: RoostClient? = nil) {
        super.init(className: "_User", client: client)
    }

    /// The local id of the automatic user of `anonymousId` (the same in every process on one storage directory).
    static func automaticLocalId(_ anonymousId: String) -> String { "local_anon_" + anonymousId }

    /// The automatic user of an anonymous id, local-only until its first save.
    init(lazyAnonymousId anonymousId: String, client: RoostClient) {
        super.init(className: "_User", client: client, localId: RoostUser.automaticLocalId(anonymousId))
        makeLazy(anonymousId: anonymousId)
    }

    public var username: String? {
        get { self["username"] }
        set { self["username"] = newValue }
    }

    public var email: String? {
        get { self["email"] }
        set { self["email"] = newValue }
    }

    /// Write-only: sent with the next save, never kept locally.
    public func setPassword(_ password: String) { set("password", password) }

    /// The session token, once the user exists on the server and is logged in here.
    public var sessionToken: String? { lock.withLock { sessionTokenStorage } }

    /// An anonymous user (automatic, or logged in with `logInAnonymously`) that has not signed up.
    public var isAnonymous: Bool {
        lock.withLock { lazyAnonymousId != nil || (state.serverData["authData"]?["anonymous"].map { $0 != .null } ?? false) }
    }

    /// Whether this user is logged in on this device (an automatic user always is).
    public var isAuthenticated: Bool { lock.withLock { sessionTokenStorage != nil || lazyAnonymousId != nil } }

    /// Whether this is an automatic user not yet created on the server.
    public var isLazy: Bool { lock.withLock { lazyAnonymousId != nil } }

    override class var transientKeys: Set<String> { ["password"] }

    override func applyServerFields(_ fields: [String: JSON]) {
        if let token = fields["sessionToken"]?.stringValue {
            sessionTokenStorage = token
            lazyAnonymousId = nil  // Created on the server: no longer lazy.
        }
    }

    /// Makes this the local-only automatic user: its first save (POST /users with the anonymous id) creates it.
    private func makeLazy(anonymousId: String) {
        lock.withLock { lazyAnonymousId = anonymousId }
        record("authData", .set(["anonymous": ["id": .string(anonymousId)]]))
    }

    override func didSave() {
        client.persistIfCurrent(self)
    }

    /// The fields to keep on disk.
    var record: CurrentUserStore.Record {
        lock.withLock {
            var fields = state.serverData
            fields.removeValue(forKey: "password")
            return CurrentUserStore.Record(
                objectId: state.objectId, sessionToken: sessionTokenStorage, anonymousId: lazyAnonymousId,
                isLazy: lazyAnonymousId != nil, fields: fields,
                createdAt: state.createdAt.map { ParseDate(millisecondsSince1970: Int64($0.timeIntervalSince1970 * 1000)).iso },
                updatedAt: state.updatedAt.map { ParseDate(millisecondsSince1970: Int64($0.timeIntervalSince1970 * 1000)).iso })
        }
    }

    /// A user restored from disk.
    convenience init(record: CurrentUserStore.Record, client: RoostClient) {
        if record.isLazy, let id = record.anonymousId {
            self.init(lazyAnonymousId: id, client: client)
        } else {
            self.init(client: client)
        }
        state.objectId = record.objectId
        state.serverData = record.fields
        state.isDataAvailable = true
        state.createdAt = record.createdAt.flatMap { Date(roostJSON: .string($0)) }
        state.updatedAt = record.updatedAt.flatMap { Date(roostJSON: .string($0)) }
        sessionTokenStorage = record.sessionToken
    }
}
