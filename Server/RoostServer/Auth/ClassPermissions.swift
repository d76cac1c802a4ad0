import RoostCore

/// Class-level permissions (`classLevelPermissions` in the schema), checked before each operation.
///
/// An operation key that is absent means public; `{}` means master key only. Entries grant `*`,
/// user ids, `role:<name>` or `requiresAuthentication`; `pointerFields` (and `readUserFields` /
/// `writeUserFields`) grant access only to objects whose named field points to the caller, which
/// becomes part of the query. The master key bypasses all of it.
enum ClassPermissions {
    enum Operation: String {
        case find, count, get, create, update, delete, addField

        var isRead: Bool { self == .find || self == .count || self == .get }
    }

    /// What the caller may do: everything, or only objects whose fields point to them.
    enum Grant: Equatable {
        case all
        case ownedThrough([String])
    }

    /// - Throws: `ParseError` 119 when refused, 101 when only authenticated users may and there is no user.
    static func check(_ operation: Operation, _ schema: ClassSchema?, context: RequestContext) throws -> Grant {
        guard !context.isMaster, let permissions = schema?.classLevelPermissions?.objectValue,
            let entry = permissions[operation.rawValue]
        else { return .all }
        let subjects = context.aclSubjects ?? []
        if subjects.contains(where: { entry[$0] == true }) { return .all }
        if entry["requiresAuthentication"] == true {
            guard context.user != nil else {
                throw ParseError(.objectNotFound, "Permission denied, user needs to be authenticated.")
            }
            return .all
        }
        let userFieldsKey = operation.isRead ? "readUserFields" : "writeUserFields"
        let fields = (entry["pointerFields"]?.arrayValue ?? []) + (permissions[userFieldsKey]?.arrayValue ?? [])
        let names = fields.compactMap(\.stringValue)
        // Without a user, nothing is found or written this way (Parse's `addPointerPermissions` drops the query:
        // 101 for a write). `addField` this way holds only on an update of such an object (`ObjectWriter.extendSchema`).
        if !names.isEmpty, operation != .create {
            return .ownedThrough(names)
        }
        throw ParseError(.operationForbidden, "Permission denied for action \(operation.rawValue) on class \(schema!.className).")
    }

    /// The query constraint that keeps a `.ownedThrough` grant to the caller's objects.
    static func constraint(for grant: Grant, context: RequestContext) -> QueryConstraint? {
        guard case .ownedThrough(let fields) = grant else { return nil }
        guard let user = context.user else { return .or([]) }  // Matches nothing.
        let pointer = WireValue.pointer(UserStore.className, user.id)
        return .or(fields.map { .field($0, .equalTo(pointer)) })
    }

    /// Whether an object satisfies a `.ownedThrough` grant (for single-object writes).
    static func allows(_ grant: Grant, _ object: StoredObject, context: RequestContext) -> Bool {
        guard case .ownedThrough(let fields) = grant else { return true }
        guard let userId = context.user?.id else { return false }
        return fields.contains { field in
            let value = object.fields[field]
            if value?["objectId"]?.stringValue == userId { return true }
            return value?.arrayValue?.contains { $0["objectId"]?.stringValue == userId } ?? false
        }
    }

    /// `protectedFields` entries `userField:<field>`: on an object whose `<field>` points to the caller (or lists
    /// them), what is hidden is intersected with the entry's fields (Parse's `filterSensitiveData`).
    static func userFieldRules(_ schema: ClassSchema, context: RequestContext) -> [(field: String, fields: Set<String>)] {
        guard !context.isMaster, let entries = protectedFieldEntries(schema, context: context) else { return [] }
        return entries.compactMap { key, value in
            guard key.hasPrefix("userField:"), let list = value.arrayValue else { return nil }
            return (String(key.dropFirst("userField:".count)), Set(list.compactMap(\.stringValue)))
        }
    }

    /// The fields hidden on one object: `hidden` (`protectedFields(_:context:)`), narrowed by the `userField:`
    /// rules whose field points to the caller on this object.
    static func protectedFields(_ hidden: Set<String>, of fields: [String: JSON], rules: [(field: String, fields: Set<String>)],
                                context: RequestContext) -> Set<String> {
        guard let userId = context.user?.id else { return hidden }
        var result = hidden
        for rule in rules {
            let value = fields[rule.field]
            let pointsToCaller = value?["objectId"]?.stringValue == userId
                || (value?.arrayValue?.contains { $0["objectId"]?.stringValue == userId } ?? false)
            if pointsToCaller { result.formIntersection(rule.fields) }
        }
        return result
    }

    /// The class's `protectedFields` with the server's option added (`ServerProtectedFields`: on `_User` the `*`
    /// entry always holds `email`, and another entry that applies, `role:Admin: []`, can show it).
    static func protectedFieldEntries(_ schema: ClassSchema, context: RequestContext) -> [String: JSON]? {
        context.config.protectedFields.entries(schema.classLevelPermissions?["protectedFields"]?.objectValue, of: schema.className)
    }

    /// Fields hidden from this caller by `protectedFields`: the intersection of every entry that applies.
    static func protectedFields(_ schema: ClassSchema, context: RequestContext) -> Set<String> {
        guard !context.isMaster, let entries = protectedFieldEntries(schema, context: context) else { return [] }
        var applicable = ["*"] + (context.aclSubjects ?? [])
        if context.user != nil { applicable.append("authenticated") }
        let sets = applicable.compactMap { entries[$0]?.arrayValue }.map { Set($0.compactMap(\.stringValue)) }
        guard var hidden = sets.first else { return [] }
        for set in sets.dropFirst() { hidden.formIntersection(set) }
        return hidden
    }
}
