import Foundation
import RoostCore

/// Users: sign-up, log-in, anonymous and automatic users, conversion, the current user on disk.
extension RoostClient {
    /// The logged-in user, loaded from the storage directory on first use. With `enableAutomaticUser()`
    /// it is never nil: a local anonymous user is made (and kept on disk) without any network.
    public var currentUser: RoostUser? {
        lock.lock()
        if !loadedCurrentUser {
            loadedCurrentUser = true
            currentUserStorage = userStore.load().map { RoostUser(record: $0, client: self) }
        }
        if currentUserStorage == nil, isAutomaticUserEnabled, let id = try? userStore.anonymousId() {
            let user = RoostUser(lazyAnonymousId: id, client: self)
            currentUserStorage = user
            lock.unlock()
            persist(user)
            return user
        }
        let user = currentUserStorage
        lock.unlock()
        return user
    }

    /// Makes `currentUser` never nil: an anonymous user that exists only locally until it, or an object
    /// pointing to it or naming it in an ACL, is first saved; then it is created on the server.
    public func enableAutomaticUser() {
        lock.withLock { isAutomaticUserEnabled = true }
    }

    /// Signs up. If the current user is anonymous, converts that user instead: same objectId, so all of its
    /// data stays its own, and the anonymous link is removed. If the server refuses (202 username taken,
    /// 203 email taken) or cannot be reached, nothing changes locally: the user stays anonymous and logged in.
    @discardableResult
    public func signUp(username: String, password: String, email: String? = nil) async throws -> RoostUser {
        var body: [String: JSON] = ["username": .string(username), "password": .string(password)]
        if let email { body["email"] = .string(email) }
        if let current = currentUser, current.isLazy, eventually.store.pendingCount > 0 {
            // Queued commands name this user: create it first, so the account they land in is the one converted.
            try await current.save()
            if let objectId = current.objectId { try eventually.store.record(localId: current.localId, objectId: objectId) }
        }
        if let current = currentUser, current.isAnonymous, !current.isLazy, let id = current.objectId {
            body["authData"] = ["anonymous": nil]
            // The server revokes the anonymous sessions: queued commands sent meanwhile retry (see EventuallyQueue.refuse).
            current.lock.withLock { current.sessionChangesInFlight += 1 }
            defer { current.lock.withLock { current.sessionChangesInFlight -= 1 } }
            let answer = try await transport.send("PUT", "users/\(id)", body: .object(body), sessionToken: current.sessionToken)
            current.lock.withLock {
                current.state.serverData["username"] = .string(username)
                if let email { current.state.serverData["email"] = .string(email) }
                var providers = current.state.serverData["authData"]?.objectValue ?? [:]
                providers.removeValue(forKey: "anonymous")
                current.state.serverData["authData"] = providers.isEmpty ? nil : .object(providers)
                if let updated = answer["updatedAt"] { current.state.updatedAt = Date(roostJSON: updated) }
                if let token = answer["sessionToken"]?.stringValue { current.sessionTokenStorage = token }
            }
            persist(current)
            return current
        }
        // A lazy automatic user becomes this account (same instance: local pointers to it stay right).
        let user = currentUser.flatMap { $0.isLazy ? $0 : nil } ?? RoostUser(client: self)
        let answer = try await transport.send("POST", "users", body: .object(body))
        user.applyServerObject(answer.removing("sessionToken"))
        user.lock.withLock {
            user.lazyAnonymousId = nil
            user.state.pending.removeValue(forKey: "authData")  // Signed up with a password instead.
            user.state.serverData["username"] = .string(username)
            if let email { user.state.serverData["email"] = .string(email) }
            user.sessionTokenStorage = answer["sessionToken"]?.stringValue
        }
        setCurrentUser(user)
        return user
    }

    /// Logs in; the user becomes the current user and is kept on disk.
    /// - Throws: `RoostError.server` 101 "Invalid username/password."
    @discardableResult
    public func logIn(username: String, password: String) async throws -> RoostUser {
        let answer = try await transport.send("POST", "login", body: ["username": .string(username), "password": .string(password)])
        return adoptUser(answer)
    }

    /// Logs in anonymously with this storage directory's anonymous id: the same account every time.
    @discardableResult
    public func logInAnonymously() async throws -> RoostUser {
        let id = try userStore.anonymousId()
        let authData: JSON = ["anonymous": ["id": .string(id)]]
        var answer = try await transport.send("POST", "users", body: ["authData": authData])
        if answer["authData"] == nil, case .object(var members) = answer {  // A new account's reply leaves it out.
            members["authData"] = authData
            answer = .object(members)
        }
        return adoptUser(answer)
    }

    /// Makes the user of `sessionToken` the current user.
    @discardableResult
    public func become(sessionToken: String) async throws -> RoostUser {
        var answer = try await transport.send("GET", "users/me", sessionToken: sessionToken)
        if answer["sessionToken"] == nil, case .object(var members) = answer {
            members["sessionToken"] = .string(sessionToken)
            answer = .object(members)
        }
        return adoptUser(answer)
    }

    /// Ends the session on the server (when reachable) and forgets the current user locally either way.
    public func logOut() async throws {
        let user = currentUser
        var token = user?.sessionToken
        if let user, let sessionToken = token {
            let keys = [user.objectId, user.localId].compactMap { $0 }
            if try keys.contains(where: { try eventually.store.pendingCount(userKey: $0) > 0 }) {
                // Commands of this user are still queued: they keep the session, and the logout waits behind them.
                try eventually.store.queueLogout(userKey: user.objectId ?? user.localId, sessionToken: sessionToken)
                eventually.signal()
                token = nil
            }
        }
        lock.withLock {
            currentUserStorage = nil
            loadedCurrentUser = true
        }
        userStore.delete()
        sessionDidChange()
        if let token { _ = try await transport.send("POST", "logout", sessionToken: token) }
    }

    /// Blocking twins, for scripts.
    @discardableResult
    public func signUpBlocking(username: String, password: String, email: String? = nil) throws -> RoostUser {
        try runBlocking { try await self.signUp(username: username, password: password, email: email) }
    }

    @discardableResult
    public func logInBlocking(username: String, password: String) throws -> RoostUser {
        try runBlocking { try await self.logIn(username: username, password: password) }
    }

    public func logOutBlocking() throws { try runBlocking { try await self.logOut() } }

    @discardableResult
    public func logInAnonymouslyBlocking() throws -> RoostUser { try runBlocking { try await self.logInAnonymously() } }

    @discardableResult
    public func becomeBlocking(sessionToken: String) throws -> RoostUser {
        try runBlocking { try await self.become(sessionToken: sessionToken) }
    }

    /// A user from a log-in answer (the whole user plus `sessionToken`) becomes the current user.
    private func adoptUser(_ answer: JSON) -> RoostUser {
        let user = RoostUser(client: self)
        user.applyServerObject(answer.removing("sessionToken"))
        user.lock.withLock { user.sessionTokenStorage = answer["sessionToken"]?.stringValue }
        setCurrentUser(user)
        return user
    }

    func setCurrentUser(_ user: RoostUser) {
        lock.withLock {
            currentUserStorage = user
            loadedCurrentUser = true
        }
        persist(user)
        eventually.signal()  // Commands waiting for this user to sign in again can go now.
    }

    /// Writes `user` to disk when it is the current user (after its saves: new token, new fields).
    func persistIfCurrent(_ user: RoostUser) {
        if lock.withLock({ currentUserStorage === user }) { persist(user) }
    }

    private func persist(_ user: RoostUser) {
        try? userStore.save(user.record)
        sessionDidChange()  // A log-in, sign-up (conversion) or new token: live subscriptions reconnect with it.
    }
}

extension JSON {
    /// This object without `key`.
    func removing(_ key: String) -> JSON {
        guard case .object(var members) = self else { return self }
        members.removeValue(forKey: key)
        return .object(members)
    }
}
