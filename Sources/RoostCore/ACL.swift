/// Access control lists: `{"*": {"read": true}, "<userId>": {"read": true, "write": true}, "role:Admins": {...}}`.
public enum ACL {
    /// Checks the shape of an ACL and returns it without `false` entries.
    /// - Throws: `ParseError` 123 "Invalid ACL." for anything else.
    public static func validate(_ value: JSON) throws -> JSON {
        guard case .object(let entries) = value else { throw invalid }
        var result: [String: JSON] = [:]
        for (subject, permissions) in entries {
            guard !subject.isEmpty, case .object(let flags) = permissions else { throw invalid }
            var kept: [String: JSON] = [:]
            for (permission, flag) in flags {
                guard permission == "read" || permission == "write", let granted = flag.boolValue else { throw invalid }
                if granted { kept[permission] = .bool(true) }
            }
            if !kept.isEmpty { result[subject] = .object(kept) }
        }
        return .object(result)
    }

    /// The subjects (`*`, user ids, `role:<name>`) granted `permission` ("read" or "write").
    public static func subjects(of acl: JSON, granting permission: String) -> [String] {
        guard case .object(let entries) = acl else { return [] }
        return entries.compactMap { subject, flags in flags[permission]?.boolValue == true ? subject : nil }.sorted()
    }

    private static var invalid: ParseError { ParseError(.invalidACL, "Invalid ACL.") }
}
