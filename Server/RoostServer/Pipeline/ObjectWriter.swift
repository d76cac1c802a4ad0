import RoostCore

/// The save path for ordinary classes, as named steps that take inputs and return outputs:
/// decode the body → check the class → check and extend the schema → apply operations → store.
enum ObjectWriter {
    /// A decoded save body.
    struct Changes {
        var operations: [String: FieldOperation] = [:]
        var types: [String: FieldType] = [:]
        /// The new ACL; `nil` leaves it as it is (a `null` ACL in the body is ignored, as Parse does).
        var acl: JSON?
        /// A client-chosen objectId for a create (with `--allow-custom-object-id`).
        var objectId: String?
    }

    /// `POST /classes/<C>`: 201 `{objectId, createdAt}` with a `Location` header.
    /// - Parameter rules: a system class's extra checks (`_Role`); ordinary classes have none.
    static func create(_ className: String, body: [String: JSON], context: RequestContext,
                       rules: SaveRules? = nil) throws -> APIResponse {
        if !context.isMaster { try checkMasterOnlyClass(className, "create") }
        if rules == nil { try checkClientClassName(className) }
        let triggers = try Triggers(className, context: context)
        var body = body
        var changedByTrigger: [String] = []
        if triggers.has("beforeSave") {
            try triggers.checkCreate()
            let requested = try decode(body, isCreate: true, allowCustomObjectId: context.config.allowCustomObjectId)
            var preview = try apply(requested.operations, to: nil)
            if let acl = requested.acl { preview["ACL"] = acl }
            if let objectId = requested.objectId { preview["objectId"] = .string(objectId) }  // A client-chosen id is shown to the hook.
            if var replaced = try triggers.beforeSave(.object(preview), original: nil, body: body) {
                changedByTrigger = replaced.keys.filter { replaced[$0] != body[$0] }
                if let objectId = body["objectId"] { replaced["objectId"] = objectId }  // A client-chosen id stays.
                body = replaced
            }
        }
        try checkServerDates(body, of: className)
        let changes = try decode(body, isCreate: true, allowCustomObjectId: context.config.allowCustomObjectId)
        try rules?.check(changes, existing: nil)
        let now = ParseDate.now()
        let (createdAt, updatedAt) = try context.isMaintenance ? givenDates(body, else: now) : (now, now)
        let (object, defaulted) = try context.write { db -> (StoredObject, [String]) in
            let current = try SchemaStore.load(className, in: db)
            _ = try ClassPermissions.check(.create, current, context: context)
            var changes = changes
            let defaulted = try FieldOptions.apply(current, to: &changes, isCreate: true)
            let schema = try schemaForWrite(className, changes, current: current, context: context, in: db)
            var object = StoredObject(objectId: try changes.objectId ?? SecureRandom.objectId(length: context.config.objectIdSize),
                                      createdAt: createdAt, updatedAt: updatedAt,
                                      acl: changes.acl, fields: [:])
            object.fields = try apply(changes.operations, to: nil)
            RelationStore.addMarkers(to: &object.fields, schema: schema)
            try ObjectStore.insert(object, into: schema, in: db)
            try RelationStore.apply(changes.operations, className: className, objectId: object.objectId, in: db)
            return (object, defaulted)
        }
        triggers.afterSave(object.wireJSON(excluding: []), original: nil)
        var response: [String: JSON] = ["objectId": .string(object.objectId), "createdAt": .string(object.createdAt.iso)]
        echoResults(of: changes, object, into: &response)  // Parse's `_sanitizeDatabaseResult`, on a create too.
        echo(changedByTrigger + defaulted, of: object, into: &response)  // Parse answers a default as a trigger's change.
        return APIResponse(
            status: 201, body: .object(response),
            headers: [("Location", "\(context.publicURL)/classes/\(className)/\(object.objectId)")])
    }

    /// The results of `Increment`/`Add`/`AddUnique`/`Remove`, as Parse answers them.
    private static func echoResults(of changes: Changes, _ object: StoredObject, into response: inout [String: JSON]) {
        for (key, operation) in changes.operations where operation.echoesResult {
            if nestedFieldName(key) != nil {
                // `a.b` answers `{"a": {"b": …}}` (Parse's `_expandResultOnKeyPath`).
                response = expanded(response, path: key.split(separator: ".").map(String.init)[...], from: .object(object.fields))
            } else {
                response[key] = object.fields[key] ?? .null
            }
        }
    }

    /// Parse answers the fields a `beforeSave` webhook changed with their saved values, and one it removed with the
    /// `Delete` it answered (Parse's `_updateResponseWithData`, for clients that support a forwarded delete).
    static func echo(_ keys: [String], of object: StoredObject, into response: inout [String: JSON]) {
        for key in keys {
            response[key] = key == "ACL" ? object.acl ?? .null : object.fields[key] ?? ["__op": "Delete"]
        }
    }

    /// `PUT /classes/<C>/<id>`: 200 `{updatedAt}` plus the results of `Increment`/`Add`/`AddUnique`/`Remove`.
    static func update(_ className: String, objectId: String, body: [String: JSON], context: RequestContext,
                       rules: SaveRules? = nil) throws -> APIResponse {
        if !context.isMaster { try checkMasterOnlyClass(className, "update") }
        if rules == nil { try checkClientClassName(className) }
        let triggers = try Triggers(className, context: context)
        var body = body
        var changedByTrigger: [String] = []
        if triggers.has("beforeSave") {
            let current = try triggers.current(objectId, for: .update)
            let requested = try decode(body, isCreate: false)
            var preview = current
            preview.fields = try apply(requested.operations, to: current.fields)
            if let acl = requested.acl { preview.acl = acl }
            if let replaced = try triggers.beforeSave(preview.wireJSON(excluding: []), original: current.wireJSON(excluding: []), body: body) {
                changedByTrigger = replaced.keys.filter { replaced[$0] != body[$0] }
                body = replaced
            }
        }
        try checkServerDates(body, of: className)
        let changes = try decode(body, isCreate: false)
        let (object, original) = try context.write { db -> (StoredObject, StoredObject) in
            let loaded = try SchemaStore.load(className, in: db)
            let grant = try ClassPermissions.check(.update, loaded, context: context)
            guard let current = loaded,
                var object = try ObjectStore.fetch(objectId, from: current, in: db)?.decoded(),
                context.canWrite(object.acl),  // Writing needs write access only; refused looks like missing.
                ClassPermissions.allows(grant, object, context: context)
            else { throw objectNotFound }
            let original = object
            try rules?.check(changes, existing: object)
            var changes = changes
            _ = try FieldOptions.apply(current, to: &changes, isCreate: false)
            let schema = try schemaForWrite(className, changes, current: current, updating: object, context: context, in: db)
            object.fields = try apply(changes.operations, to: object.fields)
            RelationStore.addMarkers(to: &object.fields, schema: schema)  // A `Delete` does not remove a relation (Parse keeps its pairs).
            if let acl = changes.acl { object.acl = acl }
            object.updatedAt = max(ParseDate.now(), object.updatedAt)
            try ObjectStore.update(object, in: schema, in: db)
            try RelationStore.apply(changes.operations, className: className, objectId: objectId, in: db)
            // A renamed role: the roles cached with each session name it by its old name.
            if className == RoleStore.className, changes.operations["name"] != nil { db.changedAuthentication = true }
            return (object, original)
        }
        triggers.afterSave(object.wireJSON(excluding: []), original: original.wireJSON(excluding: []))
        var response: [String: JSON] = ["updatedAt": .string(object.updatedAt.iso)]
        echoResults(of: changes, object, into: &response)
        echo(changedByTrigger, of: object, into: &response)
        return APIResponse(body: .object(response))
    }

    static var objectNotFound: ParseError { ParseError(.objectNotFound, "Object not found.") }

    /// Ordinary classes only; `_` classes have their own endpoints and rules.
    static func checkClientClassName(_ className: String) throws {
        if className.hasPrefix("_"), Names.systemClasses.contains(className) {
            throw ParseError(.operationForbidden, "Clients aren't allowed to write the \(className) collection through this endpoint.")
        }
        guard Names.isValidIdentifier(className) else {
            throw ParseError(.invalidClassName, "Invalid classname: \(className), classnames can only have alphanumeric characters and _, and must start with an alpha character ")
        }
    }

    /// Parse's internal classes (push and job status, hooks, config, idempotency records) are the master key's
    /// alone; Roost keeps none of them as classes (the master key is told the name is invalid), and refuses clients
    /// as Parse does (`enforceRoleSecurity`).
    static func checkMasterOnlyClass(_ className: String, _ operation: String) throws {
        if masterOnlyClasses.contains(className) {
            throw ParseError(.operationForbidden, "Clients aren't allowed to perform the \(operation) operation on the \(className) collection.")
        }
    }

    static let masterOnlyClasses: Set<String> = ["_JobStatus", "_PushStatus", "_Hooks", "_GlobalConfig", "_GraphQLConfig", "_JobSchedule", "_Idempotency"]

    /// A create with the maintenance key keeps the `createdAt` it gives (a Date), and its `updatedAt` if given and not
    /// earlier (else that `createdAt`), as Parse's `RestWrite`; without a `createdAt` both are now.
    private static func givenDates(_ body: [String: JSON], else now: ParseDate) throws -> (ParseDate, ParseDate) {
        func date(_ key: String) -> ParseDate? {
            guard body[key]?["__type"] == "Date", let iso = body[key]?["iso"]?.stringValue else { return nil }
            return ParseDate(iso: iso)
        }
        guard let createdAt = date("createdAt") else { return (now, now) }
        let updatedAt = date("updatedAt") ?? createdAt
        if updatedAt < createdAt { throw ParseError(.validationError, "updatedAt cannot occur before createdAt") }
        return (createdAt, updatedAt)
    }

    /// Parse's schema check of `createdAt` and `updatedAt`, which comes before it ignores their values (the server sets
    /// them): anything but a Date (or null) is 111, `schema mismatch for <C>.createdAt; expected Date but got Number`.
    static func checkServerDates(_ body: [String: JSON], of className: String) throws {
        for key in ["createdAt", "updatedAt"] {
            guard let value = body[key], value != .null, let type = (try? FieldOperation.decode(value))?.1, type != .date else { continue }
            throw ParseError(.incorrectType, "schema mismatch for \(className).\(key); expected Date but got \(type.displayName)")
        }
    }

    /// Step 1: the body's keys and values → operations with their inferred types.
    static func decode(_ body: [String: JSON], isCreate: Bool, allowCustomObjectId: Bool = false) throws -> Changes {
        var changes = Changes()
        for (key, value) in body {
            switch key {
            case "createdAt", "updatedAt":
                continue  // Set by the server; Parse ignores client values.
            case "objectId":
                // On update it names the object already; Parse ignores it, and a null one unless ids are the client's.
                guard isCreate, value != .null || allowCustomObjectId else { continue }
                guard allowCustomObjectId else { throw ParseError(.invalidKeyName, "objectId is an invalid field name.") }
                guard let id = value.stringValue, !id.isEmpty else { throw ParseError(.missingObjectId, "objectId must not be empty, null or undefined") }
                guard id.utf8.count <= 64, id.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }) else {
                    throw ParseError(.invalidKeyName, "objectId may only contain letters, digits, _ and -, at most 64.")
                }
                changes.objectId = id
                continue
            case "id" where isCreate && value != .null && value != "":
                throw ParseError(.invalidKeyName, "id is an invalid field name.")
            case "ACL":
                if value != .null { changes.acl = try ACL.validate(value) }
                continue
            default:
                if !isCreate, QueryAccess.isAuthDataId(key) {  // Parse's `DatabaseController.update`, whatever the class.
                    throw ParseError(.invalidKeyName, "Invalid field name for update: \(key)")
                }
                if !isCreate, let top = nestedFieldName(key) {
                    // `a.b` on an update changes a key inside Object field `a`, as Parse's `$set: {"a.b": …}`.
                    let (operation, _) = try FieldOperation.decode(value)
                    if case .relation = operation { throw ParseError(.invalidKeyName, "Invalid field name: \(key).") }
                    changes.operations[key] = operation
                    // Parse's `enforceFieldExists`: `a.<digits>` reaches into an Array, anything else into an Object.
                    let second = key.split(separator: ".")[1]
                    changes.types[top] = second.allSatisfy({ $0.isASCII && $0.isNumber }) ? .array : .object
                    continue
                }
                guard Names.isValidFieldName(key) else { throw ParseError(.invalidKeyName, "Invalid field name: \(key).") }
            }
            // The JS SDK saves a relation it read back as its value: Parse's `transformUpdate` skips it, and only
            // the schema learns (or checks) the field.
            if let target = relationValueTarget(value) {
                changes.types[key] = .relation(targetClass: target)
                continue
            }
            let (operation, type) = try FieldOperation.decode(value)
            changes.operations[key] = operation
            if let type { changes.types[key] = type }
        }
        return changes
    }

    /// The target class of `{"__type": "Relation", "className": <C>}`, as Parse answers a relation field.
    private static func relationValueTarget(_ value: JSON) -> String? {
        guard case .object(let members) = value, members.count == 2, members["__type"] == "Relation",
            let target = members["className"]?.stringValue, Names.isValidClassName(target)
        else { return nil }
        return target
    }

    /// Step 2: the class schema, created on first write and extended with new fields.
    /// - Throws: 119 when the class does not exist and the client may not create classes; 111 on a type mismatch.
    /// - Parameter current: the schema when the caller already loaded it in this transaction.
    static func schemaForWrite(_ className: String, _ changes: Changes, current: ClassSchema?? = nil, updating object: StoredObject? = nil,
                               context: RequestContext, in db: any SQLConnection) throws -> ClassSchema {
        guard let schema = try current ?? SchemaStore.load(className, in: db) else {
            guard context.isMaster || context.config.allowClientClassCreation else {
                throw ParseError(.operationForbidden, "This user is not allowed to access non-existent class: \(className)")
            }
            try ClassSchema.checkSingleGeoPoint(changes.types)
            let schema = try SchemaStore.create(className, fields: changes.types, classLevelPermissions: nil, in: db)
            try IndexStore.indexNewPointers(changes.types, of: schema, in: db)
            return schema
        }
        return try extendSchema(schema, with: changes.types, updating: object, context: context, in: db)
    }

    /// Records the types of new fields; a field written with another type than recorded is refused.
    /// - Parameter object: the object being updated (`nil` on create): pointer permissions on `addField` let a user
    ///   add fields to the objects that point to them, and only while updating one (Parse's `canAddField`).
    /// - Throws: `ParseError` 111 on a type mismatch or a second GeoPoint field; 119 or 101 when `addField` is refused.
    static func extendSchema(_ schema: ClassSchema, with types: [String: FieldType], updating object: StoredObject? = nil,
                             context: RequestContext, in db: any SQLConnection) throws -> ClassSchema {
        var schema = schema
        if types.keys.contains(where: { schema.fields[$0] == nil }) {
            let grant = try ClassPermissions.check(.addField, schema, context: context)
            if grant != .all {
                guard let object else {
                    throw ParseError(.operationForbidden, "Permission denied for action addField on class \(schema.className).")
                }
                guard ClassPermissions.allows(grant, object, context: context) else { throw objectNotFound }
            }
        }
        var added: [String: FieldType] = [:]
        for (key, type) in types {
            if let recorded = schema.fields[key] {
                guard recorded == type else {
                    throw ParseError(.incorrectType, "schema mismatch for \(schema.className).\(key); expected \(recorded.displayName) but got \(type.displayName)")
                }
            } else {
                schema.fields[key] = type
                added[key] = type
            }
        }
        if !added.isEmpty {
            try ClassSchema.checkSingleGeoPoint(schema.fields)
            try SchemaStore.save(schema, in: db)
            try IndexStore.indexNewPointers(added, of: schema, in: db)
            try RelationStore.markExisting(added, schema: schema, in: db)
        }
        return schema
    }

    /// Step 3: the fields after the operations; `fields` is `nil` for a new object.
    static func apply(_ operations: [String: FieldOperation], to fields: [String: JSON]?) throws -> [String: JSON] {
        guard let fields else {
            // A new object: Parse flattens the operations (`flattenUpdateOperatorsForCreate`), so
            // `AddUnique` stores its objects as given, duplicates included.
            return try operations.compactMapValues { operation in
                if case .addUnique(let objects) = operation { return .array(objects) }
                return try operation.applied(to: nil)
            }
        }
        var result = fields
        for (key, operation) in operations {
            if let top = nestedFieldName(key) {
                let path = key.split(separator: ".").dropFirst().map(String.init)
                result[top] = try applying(operation, at: path[...], in: result[top])
            } else {
                result[key] = try operation.applied(to: fields[key])
            }
        }
        return result
    }

    /// `target` with the value at `path` of `source` copied in at the same path.
    private static func expanded(_ target: [String: JSON], path: ArraySlice<String>, from source: JSON?) -> [String: JSON] {
        var result = target
        let key = path[path.startIndex]
        if path.count == 1 {
            result[key] = source?[key] ?? .null
        } else {
            result[key] = .object(expanded(result[key]?.objectValue ?? [:], path: path.dropFirst(), from: source?[key]))
        }
        return result
    }

    /// The Object field a dotted key (`a.b.c`) changes, when every part is non-empty and the first a valid field name.
    /// Not into fields the server manages (`authData`, `ACL`, credentials...): a dotted key there would skip their checks.
    static func nestedFieldName(_ key: String) -> String? {
        guard key.utf8.contains(UInt8(ascii: ".")) else { return nil }
        let parts = key.split(separator: ".", omittingEmptySubsequences: false)
        guard let first = parts.first.map(String.init), Names.isValidFieldName(first), !managedFields.contains(first),
              !parts.contains(where: { $0.isEmpty || $0.utf8.contains(UInt8(ascii: "$")) })
        else { return nil }
        return first
    }

    private static let managedFields: Set<String> = Names.reservedFields.union(
        ["authData", "username", "password", "email", "emailVerified", "sessionToken", "_hashed_password"])

    /// `value` (an Object, an Array indexed by a number, or nothing yet) with the operation applied at `path` inside it;
    /// an index past the end pads the array with nulls, as MongoDB's update on `items.3` does.
    private static func applying(_ operation: FieldOperation, at path: ArraySlice<String>, in value: JSON?) throws -> JSON? {
        let key = path[path.startIndex]
        // Padding is bounded per key (1,000 past the end), so a body of many such keys cannot build millions of nulls.
        if case .array(var elements)? = value, key.allSatisfy({ $0.isASCII && $0.isNumber }), let index = Int(key),
           index < elements.count + 1_000 {
            while elements.count <= index { elements.append(.null) }
            let changed = path.count == 1
                ? try operation.applied(to: elements[index]) : try applying(operation, at: path.dropFirst(), in: elements[index])
            elements[index] = changed ?? .null
            return .array(elements)
        }
        var members: [String: JSON]
        switch value {
        case nil, .null?: members = [:]
        case .object(let existing)?: members = existing
        default: throw ParseError(.incorrectType, "Cannot change a key inside a field that is not an object.")
        }
        if path.count == 1 {
            members[key] = try operation.applied(to: members[key])
        } else {
            members[key] = try applying(operation, at: path.dropFirst(), in: members[key])
        }
        return .object(members)
    }
}
