import RoostCore

/// `/installations` and `/classes/_Installation`: the devices of an app, as Parse Server keeps them.
///
/// Clients create, read and update installations; only the master key may list or delete them.
/// A create names the device by `installationId` (or the `X-Parse-Installation-Id` header) or
/// `deviceToken`, and gives its `deviceType`; `InstallationMatch` turns a create for a device
/// already stored into an update of it.
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
                return try save(&body, objectId: nil, context: context)
            }
            router.add("GET", base) { request, context, _ in
                try ClassRoutes.find(className, request: request, context: context, isSystemRoute: true)  // Master key only (`ClassRoutes.checkFindAllowed`).
            }
            router.add("GET", base + "/:objectId") { request, context, parameters in
                try ClassRoutes.get(className, parameters["objectId"], request: request, context: context, isSystemRoute: true)
            }
            router.add("PUT", base + "/:objectId") { request, context, parameters in
                var body = try request.bodyObject()
                return try save(&body, objectId: parameters["objectId"], context: context)
            }
            router.add("DELETE", base + "/:objectId") { _, context, parameters in
                guard context.isMaster else { throw refused("delete") }
                return try ClassRoutes.delete(className, parameters["objectId"], context: context, isSystemRoute: true)
            }
        }
    }

    /// A create or update, after `InstallationMatch` decided which stored installation it is about.
    /// The lookup and the save share one transaction: two saves of one device make one record.
    private static func save(_ body: inout [String: JSON], objectId: String?, context: RequestContext) throws -> APIResponse {
        try context.write { db in
            var inTransaction = context
            inTransaction.transaction = db
            let match = InstallationMatch(schema: try schema(in: db), db: db)
            let headerId = context.isMaster ? nil : context.installationId
            guard let target = try match.resolve(&body, objectId: objectId, headerInstallationId: headerId) else {
                return try ObjectWriter.create(className, body: body, context: inTransaction, rules: Rules())
            }
            if objectId == nil {  // A create about a stored device updates it.
                body.removeValue(forKey: "objectId")
                body.removeValue(forKey: "createdAt")
            }
            return try ObjectWriter.update(className, objectId: target, body: body, context: inTransaction, rules: Rules())
        }
    }

    static func refused(_ operation: String) -> ParseError {
        ParseError(.operationForbidden, "Clients aren't allowed to perform the \(operation) operation on the installation collection.")
    }

    /// The `_Installation` schema with Parse's default fields, created on first use.
    static func schema(in db: any SQLConnection) throws -> ClassSchema {
        if let schema = try SchemaStore.load(className, in: db) { return schema }
        let schema = try SchemaStore.create(className, fields: defaultFields, classLevelPermissions: nil, in: db)
        for key in ["installationId", "deviceToken"] {
            try db.execute("CREATE INDEX \"c\(schema.id)_\(key)\" ON \(schema.tableName) (json_extract(data, '$.\(key)'))", cacheable: false)
        }
        return schema
    }

    /// Parse's checks on installations are `InstallationMatch`'s, made before the save.
    struct Rules: SaveRules {
        func check(_ changes: ObjectWriter.Changes, existing: StoredObject?) throws {}
    }
}
