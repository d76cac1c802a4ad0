import RoostCore

/// Save and delete trigger webhooks on `_User`, as Parse runs them on any class. The hook is never shown a password
/// (Parse's shows a new one in plain text) and cannot set one or change auth data: the client's stand as sent.
enum UserTriggers {
    /// The body a user save goes on with after `beforeSave`, and the fields the hook changed (answered back with
    /// `ObjectWriter.echo`). Called when the class has the hook (its callers check, as they read the user only then).
    /// - Parameter current: the stored user of an update (nil for a sign-up).
    static func beforeSave(_ triggers: Triggers, body: [String: JSON], current: StoredObject?,
                           context: RequestContext) throws -> (body: [String: JSON], changed: [String]) {
        var shown = body
        let password = shown.removeValue(forKey: "password")
        // What would be saved, as the save computes it.
        let credentials = try UserWriter.credentials(from: shown, context: context)
        let changes = try ObjectWriter.decode(credentials.rest, isCreate: current == nil)
        var fields = try UserWriter.applying(credentials, changes, to: current?.fields)
        let object: JSON
        if var updated = current {
            updated.fields = fields
            if let acl = changes.acl { updated.acl = acl }
            object = updated.wireJSON()
        } else {
            if let acl = changes.acl { fields["ACL"] = acl }
            object = .object(fields)
        }
        guard var replaced = try triggers.beforeSave(object, original: current?.wireJSON(), body: shown) else { return (body, []) }
        // Neither a password nor auth data comes from the hook: the client's stand (a conversion's unlink among them).
        for key in ["password", "sessionToken", "authData"] { replaced.removeValue(forKey: key) }
        if let authData = shown["authData"] { replaced["authData"] = authData }
        // The answer holds every field of the user; those the client did not send and the hook left as stored are no
        // change (else an unchanged email would count as a new one, and `emailVerified` as the client's to set).
        if let current {
            for (key, value) in replaced where shown[key] == nil && (key == "ACL" ? current.acl : current.fields[key]) == value {
                replaced.removeValue(forKey: key)
            }
        }
        let changed = replaced.keys.filter { replaced[$0] != shown[$0] }
        if let password { replaced["password"] = password }
        return (replaced, changed)
    }
}
