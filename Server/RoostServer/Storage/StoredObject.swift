import RoostCore

/// One object as stored: the built-in columns plus its fields in wire encoding.
public struct StoredObject: Sendable, Equatable {
    public var objectId: String
    public var createdAt: ParseDate
    public var updatedAt: ParseDate
    /// `nil` means no ACL: public read and write.
    public var acl: JSON?
    public var fields: [String: JSON]

    /// The object as Parse answers it: `createdAt`/`updatedAt` as plain ISO strings.
    /// - Parameter keys: when given, only these fields (the built-in ones are always kept).
    func wireJSON(keys: Set<String>? = nil, excluding: Set<String> = []) -> JSON {
        var result: [String: JSON] = [:]
        for (name, value) in fields where (keys?.contains(name) ?? true) && !excluding.contains(name) {
            result[name] = value
        }
        result["objectId"] = .string(objectId)
        result["createdAt"] = .string(createdAt.iso)
        result["updatedAt"] = .string(updatedAt.iso)
        if let acl { result["ACL"] = acl }
        return .object(result)
    }
}
