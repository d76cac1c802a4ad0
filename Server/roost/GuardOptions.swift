import ArgumentParser
import Foundation
import RoostCore
import RoostServer

/// The flags that guard an app's data and its server, after Parse Server's options of the same job:
/// `readOnlyMasterKey`, `maintenanceKey`, `enableAnonymousUsers`, `enforcePrivateUsers`, `protectedFields` and the deprecated `userSensitiveFields`, `security`
/// (the security check), `schema` (defined schemas), `allowOrigin`, `allowHeaders` and `rateLimit`, each also a `ROOST_*` variable. A bad value stops the server with the flag or variable named.
struct GuardOptions: ParsableArguments {
    @Option(help: "A second master key that reads everything and writes nothing (119), as Parse's readOnlyMasterKey; from --master-key-ips only (env ROOST_READ_ONLY_MASTER_KEY, default none).")
    var readOnlyMasterKey: String?
    @Option(help: "A key for migrations, as Parse's maintenanceKey (header X-Parse-Maintenance-Key): the master key's access to objects, and creates that keep the createdAt and updatedAt they give; not the master key's routes (env ROOST_MAINTENANCE_KEY, default none).")
    var maintenanceKey: String?
    @Option(help: "Comma-separated addresses or CIDR ranges the maintenance key is accepted from (env ROOST_MAINTENANCE_KEY_IPS, default 127.0.0.1,::1).")
    var maintenanceKeyIps: String?
    @Flag(inversion: .prefixedNo, help: "Accept anonymous sign-ups (authData.anonymous), as Parse's enableAnonymousUsers (env ROOST_ENABLE_ANONYMOUS_USERS, default on).")
    var enableAnonymousUsers: Bool?
    @Flag(inversion: .prefixedNo, help: "Create users that name no ACL readable by themselves only, as Parse's enforcePrivateUsers; --no-enforce-private-users lets everyone read them (env ROOST_ENFORCE_PRIVATE_USERS, default on).")
    var enforcePrivateUsers: Bool?
    @Option(help: "Fields hidden per class, as Parse's protectedFields: a JSON object such as {\"_User\": {\"*\": [\"phone\"]}}, added to each class's own; other users' email stays hidden (env ROOST_PROTECTED_FIELDS).")
    var protectedFields: String?
    @Option(help: "Comma-separated _User fields only the user and the master key see (Parse's deprecated userSensitiveFields; env ROOST_USER_SENSITIVE_FIELDS).")
    var userSensitiveFields: String?
    @Flag(inversion: .prefixedNo, help: "Answer GET /security with a report of weak settings, as Parse's security.enableCheck (env ROOST_SECURITY_CHECK, default off).")
    var securityCheck: Bool?
    @Flag(inversion: .prefixedNo, help: "With --security-check, write the report to the log at start, as Parse's security.enableCheckLog (env ROOST_SECURITY_CHECK_LOG, default off).")
    var securityCheckLog: Bool?
    @Option(help: "A JSON file of class schemas applied at start, as Parse's schema option: {\"definitions\": [{\"className\": \"Game\", \"fields\": {...}, \"indexes\": {...}, \"classLevelPermissions\": {...}}], \"lockSchemas\": true} (env ROOST_SCHEMA, default none).")
    var schema: String?
    @Option(help: "Keys and values refused in request data (105), replacing Parse's default list, as Parse's requestKeywordDenylist: a JSON array such as [{\"key\": \"^secret\"}, {\"key\": \"code\", \"value\": \"eval\\\\(\"}], strings as regular expressions (env ROOST_REQUEST_KEYWORD_DENYLIST, default _bsontype with Code, constructor, __proto__).")
    var requestKeywordDenylist: String?
    @Option(help: "Comma-separated origins browsers may call from, as Parse's allowOrigin: Access-Control-Allow-Origin is the request's Origin when it is one of them, else the first (env ROOST_ALLOW_ORIGIN, default *).")
    var allowOrigin: String?
    @Option(help: "Comma-separated request headers browsers may send, added to Parse's own list in Access-Control-Allow-Headers, as Parse's allowHeaders (env ROOST_ALLOW_HEADERS, default none).")
    var allowHeaders: String?
    @Option(help: "Requests per time window per client, by path, as Parse's rateLimit: a JSON object or array such as [{\"requestPath\": \"/classes/*\", \"requestTimeWindow\": 60000, \"requestCount\": 100}]; over it, 429 (env ROOST_RATE_LIMIT, default none).")
    var rateLimit: String?

    func apply(to config: inout ServerConfig, _ settings: Settings) throws {
        config.readOnlyMasterKey = settings.string(readOnlyMasterKey, "read-only-master-key").flatMap { $0.isEmpty ? nil : $0 }
        config.maintenanceKey = settings.string(maintenanceKey, "maintenance-key").flatMap { $0.isEmpty ? nil : $0 }
        if let ranges = try settings.addressRanges(maintenanceKeyIps, "maintenance-key-ips") { config.maintenanceKeyIPs = ranges }
        if let text = settings.string(requestKeywordDenylist, "request-keyword-denylist") {
            let source = Settings.source(requestKeywordDenylist, "request-keyword-denylist")
            guard case .array(let entries)? = try? JSONParser.parse(text) else {
                throw ValidationError("invalid \(source): requestKeywordDenylist must be an array (a JSON array)")
            }
            do {
                config.requestKeywordDenylist = try entries.map(KeywordDenylist.Entry.init)
            } catch {
                throw ValidationError("invalid \(source): \(error)")
            }
        }
        try applyCORS(to: &config, settings)
        if let value = try settings.boolean(enableAnonymousUsers, "enable-anonymous-users") { config.enableAnonymousUsers = value }
        if let value = try settings.boolean(enforcePrivateUsers, "enforce-private-users") { config.enforcePrivateUsers = value }
        try applyProtectedFields(to: &config, settings)
        if let value = try settings.boolean(securityCheck, "security-check") { config.securityCheck.enabled = value }
        if let value = try settings.boolean(securityCheckLog, "security-check-log") { config.securityCheck.log = value }
        if let path = settings.string(schema, "schema") {
            let source = Settings.source(schema, "schema")
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw ValidationError("cannot read \(source): \(path)")
            }
            do {
                config.schemaDefinitions = try SchemaDefinitions(json: text)
            } catch {
                throw ValidationError("invalid schema definitions in \(path) (\(source)): \(error)")
            }
        }
        if let value = settings.string(rateLimit, "rate-limit") {
            do {
                config.rateLimits = try RateLimits(json: value)
            } catch {
                let source = Settings.source(rateLimit, "rate-limit")
                throw ValidationError("invalid value for \(source): \(error)")
            }
        }
    }

    /// `--allow-origin` and `--allow-headers`: lists as Parse's `arrayParser` reads them (comma-separated, trimmed).
    private func applyCORS(to config: inout ServerConfig, _ settings: Settings) throws {
        func list(_ flag: String?, _ name: String, valid: (String) -> Bool, expected: String) throws -> [String] {
            let entries = (settings.string(flag, name) ?? "").split(separator: ",")
                .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            if let bad = entries.first(where: { !valid($0) }) {
                throw ValidationError("invalid entry in \(Settings.source(flag, name)): '\(bad)' (expected \(expected))")
            }
            return entries
        }
        let origins = try list(allowOrigin, "allow-origin", valid: { CORS.isHeaderSafe($0) && !$0.contains(" ") },
                               expected: "an origin such as https://example.com, or *")
        let headers = try list(allowHeaders, "allow-headers", valid: CORS.isHeaderName, expected: "a header name")
        config.cors = CORS(origins: origins, extraAllowedHeaders: headers)
    }

    /// `--protected-fields` and `--user-sensitive-fields`, merged with Parse's default as Parse merges them.
    private func applyProtectedFields(to config: inout ServerConfig, _ settings: Settings) throws {
        let sensitive = settings.string(userSensitiveFields, "user-sensitive-fields")?.split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty } ?? []
        do {
            config.protectedFields = try ServerProtectedFields(json: settings.string(protectedFields, "protected-fields"),
                                                               userSensitiveFields: sensitive)
        } catch {
            let source = Settings.source(protectedFields, "protected-fields")
            throw ValidationError("invalid value for \(source): \(error) (expected a JSON object of classes, of entries "
                + "such as *, authenticated or role:<name>, of field names: {\"_User\": {\"*\": [\"phone\"]}})")
        }
    }
}
