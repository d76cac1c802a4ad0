import RoostCore

/// `/installations` and `/classes/_Installation`: the devices of an app, as Parse Server keeps them.
///
/// Clients create, read and update installations; only the master key may list or delete them.
/// A create names the device by `installationId` (or the `X-Parse-Installation-Id` header) or
/// `deviceToken`, and gives its `deviceType`; a create for an `installationId` already stored
/// updates that installation instead, so a reinstalling client keeps one record.
enum InstallationRoutes {
    static let className = "_Installation"
    static let defaultFields: [String: FieldType] = [
        "installationId": .string, "deviceToken": .string, "channels": .array, "deviceType": .string,
        "pushType": .string, "GCMSenderId": .string, "timeZone": .string, "localeIdentifier": .string,
        "badge": .number, "appVersion": .string, "appName": .string, "appIdentifier": .string, "parseVersion": .string,
    ]

    static func register(in router: inout Router) {
        for base in ["installations", "classes/_Installation"] {
            router.add("POST", base) { request, context, _ in
                var body = try request.bodyObject()
                if body["installationId"] == nil, let header = context.installationId { body["installationId"] = .string(header) }
                if case .string(let id)? = body["installationId"] { body["installationId"] = .string(id.lowercased()) }
                // The lookup and the save in one transaction: two saves of one installationId make one record.
                return try context.write { db in
                    var inTransaction = context
                    inTransaction.transaction = db
                    let schema = try schema(in: db)
                    if case .string(let id)? = body["installationId"],
                        let existing = try db.fetchRows("SELECT objectId FROM \(schema.tableName) WHERE json_extract(data, '$.installationId') = ?",
                                                        [.text(id)], cacheable: true).first?.first?.text {
                        body.removeValue(forKey: "installationId")  // Already stored, and unchangeable.
                        return try ObjectWriter.update(className, objectId: existing, body: body, context: inTransaction, rules: Rules())
                    }
                    return try ObjectWriter.create(className, body: body, context: inTransaction, rules: Rules())
                }
            }
            router.add("GET", base) { request, context, _ in
                guard context.isMaster else { throw refused("find") }
                return try ClassRoutes.find(className, request: request, context: context, isSystemRoute: true)
            }
            router.add("GET", base + "/:objectId") { request, context, parameters in
                try ClassRoutes.get(className, parameters["objectId"], request: request, context: context, isSystemRoute: true)
            }
            router.add("PUT", base + "/:objectId") { request, context, parameters in
                var body = try request.bodyObject()
                if case .string(let id)? = body["installationId"] { body["installationId"] = .string(id.lowercased()) }
                return try ObjectWriter.update(className, objectId: parameters["objectId"], body: body, context: context, rules: Rules())
            }
            router.add("DELETE", base + "/:objectId") { _, context, parameters in
                guard context.isMaster else { throw refused("delete") }
                return try ClassRoutes.delete(className, parameters["objectId"], context: context, isSystemRoute: true)
            }
        }
    }

    private static func refused(_ operation: String) -> ParseError {
        ParseError(.operationForbidden, "Clients aren't allowed to perform the \(operation) operation on the installation collection.")
    }

    /// The `_Installation` schema with Parse's default fields, created on first use.
    private static func schema(in db: SQLiteConnection) throws -> ClassSchema {
        if let schema = try SchemaStore.load(className, in: db) { return schema }
        let schema = try SchemaStore.create(className, fields: defaultFields, classLevelPermissions: nil, in: db)
        try db.execute("CREATE INDEX \"c\(schema.id)_installationId\" ON \(schema.tableName) (json_extract(data, '$.installationId'))",
                       cacheable: false)
        return schema
    }

    /// Parse's `RestWrite.handleInstallation` checks.
    struct Rules: SaveRules {
        func check(_ changes: ObjectWriter.Changes, existing: StoredObject?) throws {
            let installationId = changes.operations["installationId"], deviceType = changes.operations["deviceType"]
            guard let existing else {
                guard isSetString(installationId) || isSetString(changes.operations["deviceToken"]) else {
                    throw ParseError(.missingRequiredField,
                                     "at least one ID field (deviceToken, installationId) must be specified in this operation")
                }
                guard isSetString(deviceType) else {
                    throw ParseError(.missingRequiredField, "deviceType must be specified in this operation")
                }
                return
            }
            // An installation without an id may be given one; a stored id never changes.
            if let installationId, let stored = existing.fields["installationId"], installationId != .set(stored) {
                throw ParseError(.invalidInstallationId, "installationId may not be changed in this operation")
            }
            if let deviceType, deviceType != .set(existing.fields["deviceType"] ?? .null) {
                throw ParseError(.invalidInstallationId, "deviceType may not be changed in this operation")
            }
        }

        private func isSetString(_ operation: FieldOperation?) -> Bool {
            if case .set(.string(let text))? = operation { return !text.isEmpty }
            return false
        }
    }
}
