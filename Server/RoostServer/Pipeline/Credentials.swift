import RoostCore

/// The keys a request presents, from `X-Parse-*` headers or, for the JS SDK, from `_`-keys in the body.
struct Credentials {
    var applicationId: String?
    var masterKey: String?
    /// `X-Parse-Maintenance-Key` (a header only, as Parse reads it).
    var maintenanceKey: String?
    /// The headers' master key when the application id came from the body: Parse takes the body's id only when that
    /// key is absent or right (`handleParseHeaders`), and refuses the request otherwise.
    private var headerMasterKeyBesideBodyId: String?
    /// The request's headers, where the client keys are read only when the server has one configured (most have none;
    /// four lookups for every request cost 1k instructions).
    private let headers: [String: String]
    /// The JS SDK's client keys, from the body.
    private var bodyClientKey: String?
    private var bodyJavaScriptKey: String?
    var sessionToken: String?
    var installationId: String?
    /// `Authorization: Basic base64(appId:masterKey)`, which Parse accepts for master-level calls
    /// (`appId:javascript-key=…` names a JavaScript key instead).
    var basicAuth: (applicationId: String, masterKey: String?, javascriptKey: String?)?
    /// Cloud Code's context (`X-Parse-Cloud-Context` or `_context`) is not an object. Parse refuses such a request
    /// (107) before anything else, so Roost does too.
    var hasMalformedContext = false
    /// That context, given to webhooks as Parse gives it to Cloud Code (`context`).
    var cloudContext: [String: JSON] = [:]

    init(headers: [String: String]) {
        if let header = headers["authorization"], header.lowercased().hasPrefix("basic "),
            let decoded = Base64.decode(String(header.dropFirst("basic ".count)).trimmingSpaces) {
            let parts = String(decoding: decoded, as: UTF8.self).split(separator: ":", omittingEmptySubsequences: false)
            if parts.count == 2 {
                let isJavaScriptKey = parts[1].hasPrefix("javascript-key=")
                basicAuth = (String(parts[0]), isJavaScriptKey ? nil : String(parts[1]),
                             isJavaScriptKey ? String(parts[1].dropFirst("javascript-key=".count)) : nil)
            }
        }
        applicationId = headers["x-parse-application-id"]
        masterKey = headers["x-parse-master-key"]
        maintenanceKey = headers["x-parse-maintenance-key"]
        sessionToken = headers["x-parse-session-token"]
        installationId = headers["x-parse-installation-id"]
        self.headers = headers
        if let context = headers["x-parse-cloud-context"] {
            if case .object(let members)? = try? JSONParser.parse(context) { cloudContext = members } else { hasMalformedContext = true }
        }
    }

    /// The JS SDK form: keys travel in the body, and are removed from it before routing.
    mutating func adopt(from body: inout [String: JSON]) {
        headerMasterKeyBesideBodyId = masterKey
        applicationId = body.removeValue(forKey: "_ApplicationId")?.stringValue
        masterKey = body.removeValue(forKey: "_MasterKey")?.stringValue ?? masterKey
        sessionToken = body.removeValue(forKey: "_SessionToken")?.stringValue ?? sessionToken
        installationId = body.removeValue(forKey: "_InstallationId")?.stringValue ?? installationId
        bodyClientKey = body.removeValue(forKey: "_ClientKey")?.stringValue
        bodyJavaScriptKey = body.removeValue(forKey: "_JavaScriptKey")?.stringValue
        switch body.removeValue(forKey: "_context") {
        case .string(let text)? where !text.isEmpty:
            if case .object(let members)? = try? JSONParser.parse(text) { cloudContext = members } else { hasMalformedContext = true }
        case .object(let members)?: cloudContext = members
        case .number(let number)?: hasMalformedContext = number != 0
        case .bool(true)?: hasMalformedContext = true
        default: break  // An array is taken as is (Parse passes it on); null, false and "" count as absent (JavaScript truthiness).
        }
        for key in ["_ClientVersion", "_RevocableSession", "_noBody"] { body.removeValue(forKey: key) }
    }

    /// Checks the application id (from the headers, the body or Basic auth) and, when configured, the client key; returns whether the master key was given.
    /// A wrong master key is not an error (the request runs without it), as in Parse.
    /// - Throws: `APIError.unauthorized`; `.masterKeyFromOutsideIPs` for the right master key from an address not in
    ///   `masterKeyIPs`.
    func authorize(_ config: ServerConfig, clientAddress: String) throws -> Bool {
        let access = try authorizeAccess(config, clientAddress: clientAddress)
        return access.isMaster && !access.isMaintenance
    }

    /// What `authorizeAccess` found the caller may do.
    struct Access {
        var isMaster = false
        /// The master key given is `--read-only-master-key` (`RequestContext.isReadOnly`).
        var isReadOnly = false
        /// The maintenance key was given, from an address it is accepted from (`RequestContext.isMaintenance`).
        var isMaintenance = false
        /// The maintenance key was given from an address it is not accepted from, for the caller to log.
        var refusedMaintenanceKey = false
    }

    /// `authorize`, also telling whether the master key given is `--read-only-master-key` (a master key that may not
    /// write), accepted from the same addresses only, and whether the maintenance key was given. As Parse's
    /// `handleParseHeaders`: the maintenance key, from its addresses, is taken before the master key and the client
    /// keys; from elsewhere the request goes on as if it had none.
    func authorizeAccess(_ config: ServerConfig, clientAddress: String) throws -> Access {
        var applicationId = applicationId, masterKey = masterKey, basicJavaScriptKey: String?
        if let basicAuth, SecureRandom.constantTimeEquals(basicAuth.applicationId, config.applicationId) {
            applicationId = basicAuth.applicationId
            masterKey = basicAuth.masterKey ?? masterKey
            basicJavaScriptKey = basicAuth.javascriptKey
        }
        guard let applicationId, SecureRandom.constantTimeEquals(applicationId, config.applicationId) else {
            throw APIError.unauthorized
        }
        if let headerMasterKeyBesideBodyId, !SecureRandom.constantTimeEquals(headerMasterKeyBesideBodyId, config.masterKey),
            !isReadOnlyMasterKey(headerMasterKeyBesideBodyId, config) {
            throw APIError.unauthorized
        }
        var access = Access()
        if let maintenanceKey, let expected = config.maintenanceKey, !expected.isEmpty,
            SecureRandom.constantTimeEquals(maintenanceKey, expected) {
            if config.maintenanceKeyIPs.contains(where: { $0.contains(clientAddress) }) {
                return Access(isMaster: true, isMaintenance: true)
            }
            access.refusedMaintenanceKey = true
        }
        let isFullMaster = masterKey.map { !config.masterKey.isEmpty && SecureRandom.constantTimeEquals($0, config.masterKey) } ?? false
        access.isReadOnly = !isFullMaster && (masterKey.map { isReadOnlyMasterKey($0, config) } ?? false)
        access.isMaster = isFullMaster || access.isReadOnly
        let isMaster = access.isMaster
        if isMaster, !config.masterKeyIPs.contains(where: { $0.contains(clientAddress) }) {
            throw APIError.masterKeyFromOutsideIPs(address: clientAddress)
        }
        // As Parse: once any client key is configured, one of them must match its own header.
        if !isMaster, config.restAPIKey != nil || config.clientKey != nil || config.javascriptKey != nil || config.dotNetKey != nil {
            func matches(_ expected: String?, _ given: @autoclosure () -> String?) -> Bool {
                guard let expected, let given = given() else { return false }
                return SecureRandom.constantTimeEquals(given, expected)
            }
            guard matches(config.restAPIKey, headers["x-parse-rest-api-key"])
                || matches(config.clientKey, bodyClientKey ?? headers["x-parse-client-key"])
                || matches(config.javascriptKey, basicJavaScriptKey ?? bodyJavaScriptKey ?? headers["x-parse-javascript-key"])
                || matches(config.dotNetKey, headers["x-parse-windows-key"])
            else { throw APIError.unauthorized }
        }
        return access
    }
}

extension Credentials {
    fileprivate func isReadOnlyMasterKey(_ key: String, _ config: ServerConfig) -> Bool {
        guard let readOnly = config.readOnlyMasterKey, !readOnly.isEmpty else { return false }
        return SecureRandom.constantTimeEquals(key, readOnly)
    }
}

private extension String {
    var trimmingSpaces: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
