import Foundation
import RoostCore

/// Parse Server's `schema` option (`--schema FILE`): the classes an app defines in a file, applied at every start as
/// Parse's `DefinedSchemas` applies them. Each definition (`className`, `fields`, `indexes`, `classLevelPermissions`)
/// creates its class or brings it in line: new fields and indexes added, a field's options (`required`,
/// `defaultValue`) updated, changed indexes made again, removed indexes dropped; fields missing from the definition
/// dropped only with `deleteExtraFields`, fields whose type changed made again (their values lost) only with
/// `recreateModifiedFields`. Permissions are the definition's, with `addField` closed to clients (so are the
/// operations it leaves out); classes left out keep theirs, with `addField` closed too. `lockSchemas` refuses
/// `POST` and `PUT /schemas` (119) so the file stays the one source of truth; `strict` logs what the database has
/// that the file does not. Built-in fields, the system classes' own indexes and automatic indexes are never touched.
public struct SchemaDefinitions: Sendable {
    let definitions: [[String: JSON]]
    let strict: Bool
    let deleteExtraFields: Bool
    let recreateModifiedFields: Bool
    public let lockSchemas: Bool

    public struct Invalid: Error, CustomStringConvertible {
        public let description: String
    }

    private static let options: Set<String> = ["definitions", "strict", "deleteExtraFields", "recreateModifiedFields", "lockSchemas"]

    /// The option's JSON (the file's text), checked.
    public init(json: String) throws(Invalid) {
        guard case .object(let members)? = try? JSONParser.parse(json) else { throw Invalid(description: "not a JSON object") }
        if let unknown = members.keys.sorted().first(where: { !Self.options.contains($0) }) {
            let hint = unknown == "beforeMigration" || unknown == "afterMigration" ? " (Parse's migration functions are JavaScript)" : ""
            throw Invalid(description: "unknown key \"\(unknown)\"\(hint); expected \(Self.options.sorted().joined(separator: ", "))")
        }
        guard case .array(let list)? = members["definitions"] ?? .array([]) else {
            throw Invalid(description: "\"schema.definitions\" must be an array of schemas")
        }
        var definitions: [[String: JSON]] = []
        for entry in list {
            guard case .object(let definition) = entry, let className = definition["className"]?.stringValue else {
                throw Invalid(description: "each of \"schema.definitions\" must be an object with a className")
            }
            if definitions.contains(where: { $0["className"]?.stringValue == className }) {
                throw Invalid(description: "the class \(className) is defined twice")
            }
            for key in ["fields", "indexes", "classLevelPermissions"] where definition[key] != nil && definition[key]?.objectValue == nil {
                throw Invalid(description: "\(className).\(key) must be an object")
            }
            definitions.append(definition)
        }
        self.definitions = definitions
        func flag(_ name: String) throws(Invalid) -> Bool {
            guard let value = members[name] else { return false }
            guard let flag = value.boolValue else { throw Invalid(description: "\"schema.\(name)\" must be true or false") }
            return flag
        }
        strict = try flag("strict")
        deleteExtraFields = try flag("deleteExtraFields")
        recreateModifiedFields = try flag("recreateModifiedFields")
        lockSchemas = try flag("lockSchemas")
    }
}

/// Applies `SchemaDefinitions` through the `/schemas` operations, with the master key (Parse's `DefinedSchemas`).
enum SchemaMigration {
    /// Runs the definitions, again from a fresh read up to three times when another node changes the same classes
    /// meanwhile (Parse retries as often).
    static func run(_ definitions: SchemaDefinitions, context: RequestContext) throws {
        var attempt = 0
        while true {
            do {
                return try runOnce(definitions, context: context)
            } catch {
                attempt += 1
                guard attempt <= 3 else { throw error }
                context.logger.warning("schema definitions: \(error); trying again (\(attempt) of 3)")
                Thread.sleep(forTimeInterval: 0.2 * Double(attempt))
            }
        }
    }

    private static func runOnce(_ definitions: SchemaDefinitions, context: RequestContext) throws {
        let stored = try context.read { db in try SchemaStore.all(in: db) }.filter { VolatileSchemas.json(of: $0.className) == nil }
        var existing: [String: JSON] = [:]
        for schema in stored { existing[schema.className] = schema.json }
        for definition in definitions.definitions {
            let className = definition["className"]?.stringValue ?? ""
            do {
                if let current = existing[className] {
                    try update(className, definition, current: current, definitions, context: context)
                } else {
                    try create(className, definition, context: context)
                }
            } catch {
                throw SchemaDefinitions.Invalid(description: "the class \(className) could not be \(existing[className] == nil ? "created" : "updated"): \(error)")
            }
        }
        let defined = Set(definitions.definitions.compactMap { $0["className"]?.stringValue })
        let undefined = existing.keys.filter { !defined.contains($0) }.sorted()
        if definitions.strict {
            let extra = undefined.filter { !Names.systemClasses.contains($0) }
            if !extra.isEmpty {
                context.logger.warning("The following schemas are currently present in the database, but not explicitly defined in a schema: \"\(extra.joined(separator: "\", \""))\"")
            }
        }
        for className in undefined {  // Kept as they are, but closed to new fields (written once, not at every start).
            let permissions = existing[className]?["classLevelPermissions"]?.objectValue ?? [:]
            guard permissions["addField"] != [:] else { continue }
            _ = try SchemaRoutes.update(className, body: ["classLevelPermissions": closedToNewFields(permissions)], context: context)
        }
    }

    private static func create(_ className: String, _ definition: [String: JSON], context: RequestContext) throws {
        if definition["classLevelPermissions"] == nil {
            context.logger.warning("classLevelPermissions not provided for \(className).")
        }
        var body: [String: JSON] = ["className": .string(className), "classLevelPermissions": permissions(definition)]
        body["fields"] = .object((definition["fields"]?.objectValue ?? [:]).filter { !isBuiltIn(className, $0.key) })
        let indexes = (definition["indexes"]?.objectValue ?? [:]).filter { !isProtectedIndex(className, $0.key) }
        if !indexes.isEmpty { body["indexes"] = .object(indexes) }
        _ = try SchemaRoutes.create(className, body: body, context: context)
    }

    private static func update(_ className: String, _ definition: [String: JSON], current: JSON,
                               _ definitions: SchemaDefinitions, context: RequestContext) throws {
        let wanted = (definition["fields"]?.objectValue ?? [:]).filter { !isBuiltIn(className, $0.key) }
        let have = (current["fields"]?.objectValue ?? [:]).filter { !isBuiltIn(className, $0.key) }
        var fields: [String: JSON] = wanted.filter { have[$0.key] == nil }
        var extra: [String] = [], retyped: [String] = []
        for (name, field) in have {
            guard let local = wanted[name] else {
                extra.append(name)
                continue
            }
            if field["type"] != local["type"] || field["targetClass"] != local["targetClass"] {
                retyped.append(name)
            } else if field != local {
                fields[name] = local  // Same type, other options: re-declared with them.
            }
        }
        if definitions.deleteExtraFields {
            for name in extra { fields[name] = ["__op": "Delete"] }
        } else if definitions.strict, !extra.isEmpty {
            context.logger.warning("The following fields exist in the database for \"\(className)\", but are missing in the schema : \"\(extra.sorted().joined(separator: "\" ,\""))\"")
        }
        if definitions.recreateModifiedFields, !retyped.isEmpty {
            // Dropped (values and all) first, then declared with the new type below.
            var drops = fields.filter { $0.value["__op"]?.stringValue == "Delete" }
            for name in retyped { drops[name] = ["__op": "Delete"] }
            _ = try SchemaRoutes.update(className, body: ["fields": .object(drops)], context: context)
            fields = fields.filter { $0.value["__op"]?.stringValue != "Delete" }
            for name in retyped { fields[name] = wanted[name] }
        } else if definitions.strict {
            for name in retyped.sorted() {
                context.logger.warning("The field \"\(name)\" type differ between the schema and the database for \"\(className)\"")
            }
        }

        let wantedIndexes = definition["indexes"]?.objectValue ?? [:]
        let haveIndexes = current["indexes"]?.objectValue ?? [:]
        var indexes: [String: JSON] = [:], changedIndexes: [String: JSON] = [:]
        for (name, keys) in wantedIndexes where haveIndexes[name] == nil && !isProtectedIndex(className, name) { indexes[name] = keys }
        // Automatic indexes (`_auto_…`) are Roost's own, made for the queries that come: not the file's to keep or drop.
        for (name, keys) in haveIndexes where !isProtectedIndex(className, name) && !name.hasPrefix(IndexStore.automaticPrefix) {
            guard let local = wantedIndexes[name] else {
                indexes[name] = ["__op": "Delete"]
                continue
            }
            if local != keys {
                indexes[name] = ["__op": "Delete"]
                changedIndexes[name] = local
            }
        }
        var body: [String: JSON] = ["classLevelPermissions": permissions(definition)]
        if !fields.isEmpty { body["fields"] = .object(fields) }
        if !indexes.isEmpty { body["indexes"] = .object(indexes) }
        _ = try SchemaRoutes.update(className, body: body, context: context)
        if !changedIndexes.isEmpty { _ = try SchemaRoutes.update(className, body: ["indexes": .object(changedIndexes)], context: context) }
    }

    /// The definition's permissions with `addField` closed: new fields come from the file only.
    private static func permissions(_ definition: [String: JSON]) -> JSON {
        closedToNewFields(definition["classLevelPermissions"]?.objectValue ?? [:])
    }

    private static func closedToNewFields(_ permissions: [String: JSON]) -> JSON {
        var closed = permissions
        closed["addField"] = [:]
        return .object(closed)
    }

    private static func isBuiltIn(_ className: String, _ field: String) -> Bool {
        SchemaRoutes.builtInFields(of: className).contains(field)
    }

    /// Parse's `isProtectedIndex`: the primary key's and the system classes' own.
    static func isProtectedIndex(_ className: String, _ name: String) -> Bool {
        switch className {
        case UserStore.className: ["_id_", "case_insensitive_username", "case_insensitive_email", "username_1", "email_1"].contains(name)
        case RoleStore.className: ["_id_", "name_1"].contains(name)
        case "_Idempotency": ["_id_", "reqId_1"].contains(name)
        default: name == "_id_"
        }
    }
}
