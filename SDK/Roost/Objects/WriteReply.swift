import RoostCore

/// What the server answers a write that succeeded (or a fetch). A reply of another shape did not come from the
/// API for this request (a captive portal, a proxy mixing up replies, a truncated body), and is
/// treated as no reply at all: trusting `{"objectId": <someone else's object>}` would point the
/// local object, and every later edit of it, at another user's object.
enum WriteReply {
    /// - Parameters:
    ///   - method: `POST` (a create), `PUT` (an update) or `DELETE`.
    ///   - status: the HTTP status, when the reply had one of its own (not a `/batch` item).
    static func isWellFormed(_ answer: JSON, method: String, className: String, status: Int?) -> Bool {
        guard answer.objectValue != nil else { return false }
        switch method {
        case "POST":
            // A create answers 201; signing in an existing anonymous user or updating a known
            // installation answers 200.
            let statuses = ["_User", "_Installation"].contains(className) ? [200, 201] : [201]
            guard status.map(statuses.contains) ?? true else { return false }
            return !(answer["objectId"]?.stringValue ?? "").isEmpty && answer["createdAt"]?.stringValue != nil
        case "PUT":
            return answer["updatedAt"]?.stringValue != nil
        default:
            return true
        }
    }

    /// A fetch's answer: the object asked for (trusting another would turn the local object into it).
    static func isObject(_ answer: JSON, withId objectId: String) -> Bool {
        answer["objectId"]?.stringValue == objectId
    }

    /// A `/batch` answer: one item per request, each a `success` or a Parse `error`.
    static func isWellFormedBatch(_ answer: JSON, count: Int) -> Bool {
        guard let items = answer.arrayValue, items.count == count else { return false }
        return items.allSatisfy { item in
            item["success"]?.objectValue != nil || item["error"]?["code"]?.numberValue != nil
        }
    }

    /// The error a reply of the wrong shape stands for: nothing usable arrived, so retrying is right.
    static let unusable = RoostError.transport("unusable reply: not an answer to this request")
}
