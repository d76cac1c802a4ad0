import RoostCore

/// `/schemas` (master key only): list, read, create, change and drop class schemas.
enum SchemaRoutes {
    static func register(in router: inout Router) {
        router.add("GET", "schemas") { _, context, _ in
            try context.requireMaster()
            let stored = try context.read { db in try SchemaStore.all(in: db) + [try sessionSchema(in: db)].compactMap { $0 } }
            let schemas = stored.filter { VolatileSchemas.json(of: $0.className) == nil }  // Parse lists none of them.
            return APIResponse(body: ["results": .array(schemas.sorted { $0.className < $1.className }.map(\.json))])
        }
        router.add("GET", "schemas/:className") { _, context, parameters in
            try context.requireMaster()
            let className = parameters["className"]
            if let volatile = VolatileSchemas.json(of: className) { return APIResponse(body: volatile) }
            let schema = try context.read { db in
                className == SessionRoutes.sessionSchema.className ? try sessionSchema(in: db) : try SchemaStore.load(className, in: db)
            }
            guard let schema else { throw classMissing(className) }
            return APIResponse(body: schema.json)
        }
        router.add("POST", "schemas") { request, context, _ in
            try context.requireMaster()
            try refuseWhenLocked(context)
            let body = try request.bodyObject()
            guard let className = body["className"]?.stringValue else {
                throw ParseError(.missingRequiredField, "POST /schemas needs a class name.")
            }
            return try create(className, body: body, context: context)
        }
        router.add("POST", "schemas/:className") { request, context, parameters in
            try context.requireMaster()
            try refuseWhenLocked(context)
            let body = try bodyNaming(parameters["className"], request)
            return try create(parameters["className"], body: body, context: context)
        }
        router.add("PUT", "schemas/:className") { request, context, parameters in
            try context.requireMaster()
            try refuseWhenLocked(context)
            let body = try bodyNaming(parameters["className"], request)
            return try update(parameters["className"], body: body, context: context)
        }
        router.add("DELETE", "schemas/:className") { _, context, parameters in
            try context.requireMaster()
            try drop(parameters["className"], context: context)
            return APIResponse(body: [:])
        }
    }

    /// With `--schema` and its `lockSchemas`, the file is the one source of truth (Parse's `checkIfDefinedSchemasIsUsed`).
    private static func refuseWhenLocked(_ context: RequestContext) throws {
        if context.config.schemaDefinitions?.lockSchemas == true {
            throw ParseError(.operationForbidden, "Cannot perform this operation when schemas options is used.")
        }
    }

    /// The request body; a `className` in it must be the one in the path (103 otherwise).
    private static func bodyNaming(_ className: String, _ request: APIRequest) throws -> [String: JSON] {
        let body = try request.bodyObject()
        if let named = body["className"]?.stringValue, named != className {
            throw ParseError(.invalidClassName, "Class name mismatch between \(named) and \(className).")
        }
        return body
    }

    /// `_Session` keeps its rows in a table of its own, outside `_schema`; Parse lists the class once
    /// sessions exist, with its fields.
    private static func sessionSchema(in db: some SQLQuerying) throws -> ClassSchema? {
        guard try !db.fetchRows("SELECT 1 FROM _session LIMIT 1", [], cacheable: true).isEmpty else { return nil }
        var schema = SessionRoutes.sessionSchema
        schema.fields["sessionToken"] = .string
        return schema
    }

    static func classMissing(_ className: String) -> ParseError {
        ParseError(.invalidClassName, "Class \(className) does not exist.")
    }

    static func create(_ className: String, body: [String: JSON], context: RequestContext) throws -> APIResponse {
        // Parse looks for the class before checking its name: `_User` and `_Role` exist from the start.
        let systemClassExists = try Names.systemClasses.contains(className) && context.read { db in try exists(className, in: db) }
        if VolatileSchemas.json(of: className) != nil || systemClassExists {
            throw ParseError(.invalidClassName, "Class \(className) already exists.")
        }
        // `_Installation` and `_Product` may be created before their first object; `_Session` may not (its rows live in a
        // table of its own).
        guard Names.isValidIdentifier(className) || className == InstallationRoutes.className || className == ProductRoutes.className else {
            throw ParseError(.invalidClassName, "Invalid classname: \(className), classnames can only have alphanumeric characters and _, and must start with an alpha character ")
        }
        var fields: [String: FieldType] = [:], options: [String: JSON] = [:]
        for (name, value) in body["fields"]?.objectValue ?? [:] {
            let type = try fieldType(name, value, of: className)
            fields[name] = type
            options[name] = try FieldOptions.checked(value, type: type, className: className, field: name)
        }
        try ClassSchema.checkSingleGeoPoint(fields)
        // `null` is no permissions: the defaults. (JSON takes a `nil` literal as its own null, hence `.none`.)
        let permissions: JSON? = body["classLevelPermissions"] == .null ? .none : body["classLevelPermissions"]
        if let permissions {
            try ClassPermissionsValidation.validate(permissions, fieldType: { fields[$0] ?? ClassSchema.defaultFields[$0] },
                                                    allowCustomObjectId: context.config.allowCustomObjectId)
        }
        let schema = try context.write { db -> ClassSchema in
            if try SchemaStore.load(className, in: db) != nil {
                throw ParseError(.invalidClassName, "Class \(className) already exists.")
            }
            var schema: ClassSchema
            if className == InstallationRoutes.className {  // Made as its first device makes it, then given the fields.
                schema = try InstallationRoutes.schema(in: db)
                schema.fields.merge(fields) { builtIn, _ in builtIn }
                schema.classLevelPermissions = permissions.map(ClassSchema.completed)
                try SchemaStore.save(schema, in: db)
            } else {
                let builtIn = className == ProductRoutes.className ? ProductRoutes.defaultFields : [:]
                schema = try SchemaStore.create(className, fields: fields.merging(builtIn) { _, builtIn in builtIn },
                                                classLevelPermissions: permissions, in: db)
            }
            if !options.isEmpty {
                schema.fieldOptions.merge(options) { _, given in given }
                try SchemaStore.save(schema, in: db)
            }
            try IndexStore.indexNewPointers(fields, of: schema, in: db)
            if let indexes = body["indexes"] {
                schema = try IndexStore.apply(indexes, to: schema, in: db)
                try SchemaStore.save(schema, in: db)
            }
            return schema
        }
        return APIResponse(body: schema.json)
    }

    static func update(_ className: String, body: [String: JSON], context: RequestContext) throws -> APIResponse {
        let schema = try context.write { db -> ClassSchema in
            guard var schema = try SchemaStore.load(className, in: db) else { throw classMissing(className) }
            let deletedIndexes = Set((body["indexes"]?.objectValue ?? [:]).filter { $0.value["__op"]?.stringValue == "Delete" }.keys)
            for (name, value) in body["fields"]?.objectValue ?? [:] {
                let existing = schema.type(of: name)
                if value["__op"]?.stringValue == "Delete" {
                    if builtInFields(of: className).contains(name) {  // Each is in the class for Parse (`_User`'s password too).
                        throw ParseError(.init(rawValue: 136), "field \(name) cannot be changed")
                    }
                    guard existing != nil else {
                        throw ParseError(.invalidSchemaOperation, "Field \(name) does not exist, cannot delete.")
                    }
                    // Only names already in the schema (validated when added) reach the SQL below.
                    schema.fields.removeValue(forKey: name)
                    schema.fieldOptions.removeValue(forKey: name)
                    schema = try TextIndex.forget(name, of: schema, in: db)  // Before the rows change: nothing left to keep in step.
                    try IndexStore.dropDeclared(on: name, from: &schema, deletedByRequest: deletedIndexes, db: db)
                    try db.execute("UPDATE \(schema.tableName) SET data = json_remove(data, '$.\(name)')", cacheable: false)
                    try IndexStore.dropAutomatic(name, from: &schema, db: db)
                    try db.writeState.changeRecorder?.markGap(in: className, in: db)  // Objects changed without events.
                    try RelationStore.deleteField(className: className, field: name, in: db)
                } else if let existing {
                    // A field sent again as it is stays (Parse-Swift sends a fetched schema's fields back); Parse compares
                    // the type's name first (255), then the whole type as it ensures the field (111).
                    guard value["type"]?.stringValue == existing.name else {
                        throw ParseError(.invalidSchemaOperation, "Field \(name) exists, cannot update.")
                    }
                    if let sent = FieldType(schemaJSON: value), sent != existing {
                        throw ParseError(.incorrectType, "schema mismatch for \(className).\(name); expected \(existing.displayName) but got \(sent.displayName)")
                    }
                    // Its options become the ones sent (Parse's `updateFieldOptions`).
                    if schema.fields[name] != nil { schema.fieldOptions[name] = FieldOptions.of(value) }
                } else {
                    let type = try fieldType(name, value, of: className)
                    schema.fields[name] = type
                    schema.fieldOptions[name] = try FieldOptions.checked(value, type: type, className: className, field: name)
                    try RelationStore.markExisting([name: type], schema: schema, in: db)
                }
            }
            try ClassSchema.checkSingleGeoPoint(schema.fields)
            if let permissions = body["classLevelPermissions"] {
                let known = schema
                try ClassPermissionsValidation.validate(permissions, fieldType: { known.type(of: $0) },
                                                        allowCustomObjectId: context.config.allowCustomObjectId)
                // null: back to the defaults.
                schema.classLevelPermissions = permissions == .null ? JSON?.none : ClassSchema.completed(permissions)
            }
            if let indexes = body["indexes"] {
                schema = try IndexStore.apply(indexes, to: schema, in: db)
                // Parse re-reads the collection's indexes after a change and lists its primary key's among them.
                var listed = schema.indexes?.objectValue ?? [:]
                listed["_id_"] = ["_id": 1]
                schema.indexes = .object(listed)
            }
            try SchemaStore.save(schema, in: db)
            return schema
        }
        return APIResponse(body: schema.json)
    }

    static func drop(_ className: String, context: RequestContext) throws {
        guard Names.isValidClassName(className) else {
            throw ParseError(.invalidClassName, "Invalid classname: \(className), classnames can only have alphanumeric characters and _, and must start with an alpha character ")
        }
        try context.write { db in
            guard let schema = try SchemaStore.load(className, in: db) else { return }
            let count = try ObjectStore.count(FindQuery(), in: schema, in: db)
            guard count == 0 else {
                throw ParseError(.invalidSchemaOperation, "Class \(className) is not empty, contains \(count) objects, cannot drop schema.")
            }
            try SchemaStore.drop(schema, in: db)
        }
    }

    /// A new field's declaration `{"type": "Pointer", "targetClass": "_User"}`, checked in Parse's order
    /// (`validateSchemaData`, `fieldTypeIsInvalid`).
    private static func fieldType(_ name: String, _ value: JSON, of className: String) throws -> FieldType {
        guard Names.isValidFieldName(name) || Names.reservedFields.contains(name) else {
            throw ParseError(.invalidKeyName, "invalid field name: \(name)")
        }
        if builtInFields(of: className).contains(name) {
            throw ParseError(.init(rawValue: 136), "field \(name) cannot be added")
        }
        guard let typeName = value["type"]?.stringValue else { throw ParseError(.invalidJSON, "invalid JSON") }
        if typeName == "Pointer" || typeName == "Relation" {
            let target = value["targetClass"] ?? .null
            if [.null, .string(""), .bool(false), .number(0)].contains(target) {  // JavaScript's falsy values.
                throw ParseError(.missingRequiredField, "type \(typeName) needs a class name")
            }
            guard let targetClass = target.stringValue else { throw ParseError(.invalidJSON, "invalid JSON") }
            guard Names.isValidClassName(targetClass) || otherParseClasses.contains(targetClass) else {
                throw ParseError(.invalidClassName, "Invalid classname: \(targetClass), classnames can only have alphanumeric characters and _, and must start with an alpha character ")
            }
        }
        guard let type = FieldType(schemaJSON: value), type != .acl else {
            throw ParseError(.incorrectType, "invalid field type: \(typeName)")
        }
        return type
    }

    /// Parse's system classes that Roost does not keep: fields may still point to them, as Parse allows.
    private static let otherParseClasses: Set<String> = ["_PushStatus", "_JobStatus", "_JobSchedule", "_Idempotency"]

    /// The fields a class has from Parse's `defaultColumns`: never added or deleted through `/schemas` (136).
    static func builtInFields(of className: String) -> Set<String> {
        var fields = Set(ClassSchema.defaultFields.keys)
        switch className {
        case UserStore.className: fields.formUnion(UserStore.defaultFields.keys); fields.insert("password")
        case RoleStore.className: fields.formUnion(RoleStore.defaultFields.keys)
        case InstallationRoutes.className: fields.formUnion(InstallationRoutes.defaultFields.keys)
        case AudienceRoutes.className: fields.formUnion(AudienceRoutes.defaultFields.keys)
        case ProductRoutes.className: fields.formUnion(ProductRoutes.defaultFields.keys)
        case SessionRoutes.sessionSchema.className: fields.formUnion(SessionRoutes.sessionSchema.fields.keys); fields.insert("sessionToken")
        default: break
        }
        return fields
    }

    /// Whether a system class exists: `_Session` once a session does, the others once their schema is stored.
    private static func exists(_ className: String, in db: some SQLQuerying) throws -> Bool {
        className == SessionRoutes.sessionSchema.className ? try sessionSchema(in: db) != nil : try SchemaStore.load(className, in: db) != nil
    }
}
