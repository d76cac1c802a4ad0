import RoostCore

/// `PUT` and `DELETE /users/<id>`: only the user themself (or the master key).
///
/// A new password deletes every session of the user and, for the user themself, starts a new one
/// whose token is in the reply. This is also anonymous conversion: the anonymous session sends
/// `username`, `password` and `"authData": {"anonymous": null}`; the account keeps its objectId
/// and everything it owns. A taken username or email (202/203) changes nothing.
enum UserUpdate {
    static func handle(_ userId: String, body: [String: JSON], context: RequestContext) throws -> APIResponse {
        try checkSelf(userId, context: context, refusal: "Cannot modify user \(userId).")
        let credentials = try UserWriter.credentials(from: body, context: context)
        let changes = try ObjectWriter.decode(credentials.rest, isCreate: false)
        let hash = try credentials.password.map { try context.hashPassword($0) }  // Before taking the writer (hashed ahead inside a batch).
        return try context.write { db in
            let schema = try UserStore.schema(in: db)
            guard var user = try ObjectStore.fetch(userId, from: schema, in: db)?.decoded() else { throw ObjectWriter.objectNotFound }
            try UserWriter.checkUnique(credentials, userId: userId, schema: schema, in: db)
            let extended = try ObjectWriter.extendSchema(schema, with: changes.types, context: context, in: db)
            user.fields = try UserWriter.applying(credentials, changes, to: user.fields)
            if let acl = changes.acl { user.acl = UserWriter.ownerACL(acl, userId: userId) }
            user.updatedAt = max(ParseDate.now(), user.updatedAt)
            try ObjectStore.update(user, in: extended, in: db)

            var reply: [String: JSON] = ["updatedAt": .string(user.updatedAt.iso)]
            for (key, operation) in changes.operations where operation.echoesResult { reply[key] = user.fields[key] ?? .null }
            if let hash {
                try UserStore.setPasswordHash(hash, of: userId, in: db)
                try SessionStore.deleteAll(userId: userId, in: db)
                if !context.isMaster {
                    reply["sessionToken"] = .string(
                        try UserWriter.startSession(for: userId, action: "login", provider: "password", context: context, in: db))
                }
            }
            return APIResponse(body: .object(reply))
        }
    }

    static func delete(_ userId: String, context: RequestContext) throws -> APIResponse {
        try checkSelf(userId, context: context, refusal: "Insufficient auth to delete user")
        try context.write { db in
            guard let schema = try SchemaStore.load(UserStore.className, in: db),
                try ObjectStore.delete(userId, from: schema, in: db)
            else { throw ObjectWriter.objectNotFound }
            try UserStore.deletePassword(of: userId, in: db)
            try SessionStore.deleteAll(userId: userId, in: db)
        }
        return APIResponse(body: [:])
    }

    /// 206 unless the caller is this user or holds the master key.
    private static func checkSelf(_ userId: String, context: RequestContext, refusal: String) throws {
        if context.isMaster { return }
        guard let user = context.user else { throw ParseError(.sessionMissing, refusal) }
        guard user.id == userId else { throw ParseError(.sessionMissing, "Insufficient auth.") }
    }
}
