import RoostCore

/// Hashes and checks the passwords of a request before it runs (on a password worker), so that its
/// writes — which a batch or `X-Parse-Request-Id` makes share one transaction — never run PBKDF2
/// while holding the single writer (see `PreparedPasswords`).
enum PasswordPreparation {
    /// The requests of `request` that hash or check a password: itself, or the items of a batch
    /// (at most `batchLimit`: a larger batch is refused before anything runs).
    static func requests(in request: APIRequest, mountPaths: @autoclosure () -> [String], batchLimit: Int) -> [APIRequest] {
        if PasswordWorkers.accepts(request) { return [request] }
        guard request.method == "POST", request.segments == ["batch"], case .object(let body)? = request.body,
            let items = body["requests"]?.arrayValue, items.count <= batchLimit
        else { return [] }
        let paths = mountPaths()  // Worked out for batches only: every request comes here.
        return items.compactMap { try? BatchRoute.describedRequest($0, mountPaths: paths) }.filter(PasswordWorkers.accepts)
    }

    /// Does the password work of `requests` into `context.passwords`. A request that will fail is
    /// skipped (its handler reports the error when it runs).
    static func prepare(_ requests: [APIRequest], context: RequestContext) {
        precondition(context.transaction == nil, "password work is prepared before the writer is taken")
        for request in requests {
            try? prepare(request, context: context)
        }
    }

    private static func prepare(_ request: APIRequest, context: RequestContext) throws {
        if request.segments == ["login"] || request.segments == ["verifyPassword"] {
            return try LogIn.preparePasswords(request, context: context)
        }
        // A sign-up or a user update that sets a password (only the user themself or the master key may).
        guard case .object(let body)? = request.body, let password = body["password"]?.stringValue, !password.isEmpty else { return }
        if request.method == "PUT" {
            guard context.isMaster || context.user?.id == request.segments.last else { return }
        } else {
            guard let username = body["username"]?.stringValue, !username.isEmpty else { return }
        }
        try context.passwords.prepareHash(of: password)
        // A password change checks the latest passwords too (`maxPasswordHistory`): those checks are made now.
        if request.method == "PUT", let userId = request.segments.last {
            let recent = try context.read { db in try PasswordRecord.recentHashes(of: userId, policy: context.config.passwordPolicy, in: db) }
            for stored in recent { _ = context.verifyPassword(password, against: stored) }
        }
    }
}
