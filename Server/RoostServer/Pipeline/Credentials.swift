import RoostCore

/// The keys a request presents, from `X-Parse-*` headers or, for the JS SDK, from `_`-keys in the body.
struct Credentials {
    var applicationId: String?
    var masterKey: String?
    var clientKeys: [String] = []
    var sessionToken: String?
    var installationId: String?

    init(headers: [String: String]) {
        applicationId = headers["x-parse-application-id"]
        masterKey = headers["x-parse-master-key"]
        sessionToken = headers["x-parse-session-token"]
        installationId = headers["x-parse-installation-id"]
        clientKeys = ["x-parse-rest-api-key", "x-parse-client-key", "x-parse-javascript-key", "x-parse-windows-key"]
            .compactMap { headers[$0] }
    }

    /// The JS SDK form: keys travel in the body, and are removed from it before routing.
    mutating func adopt(from body: inout [String: JSON]) {
        applicationId = body.removeValue(forKey: "_ApplicationId")?.stringValue
        masterKey = body.removeValue(forKey: "_MasterKey")?.stringValue ?? masterKey
        sessionToken = body.removeValue(forKey: "_SessionToken")?.stringValue ?? sessionToken
        installationId = body.removeValue(forKey: "_InstallationId")?.stringValue ?? installationId
        for key in ["_JavaScriptKey", "_ClientKey"] {
            if let value = body.removeValue(forKey: key)?.stringValue { clientKeys.append(value) }
        }
        for key in ["_ClientVersion", "_RevocableSession", "_context", "_noBody"] { body.removeValue(forKey: key) }
    }

    /// Checks the application id and, when configured, the client key; returns whether the master key was given.
    /// A wrong master key is not an error (the request runs without it), as in Parse.
    /// - Throws: `APIError.unauthorized`, also for the right master key from an address not in `masterKeyIPs`.
    func authorize(_ config: ServerConfig, clientAddress: String) throws -> Bool {
        guard let applicationId, SecureRandom.constantTimeEquals(applicationId, config.applicationId) else {
            throw APIError.unauthorized
        }
        let isMaster = masterKey.map { !config.masterKey.isEmpty && SecureRandom.constantTimeEquals($0, config.masterKey) } ?? false
        if isMaster, !config.masterKeyIPs.contains(clientAddress), !config.masterKeyIPs.contains("0.0.0.0/0") {
            throw APIError.unauthorized
        }
        let configuredKeys = [config.restAPIKey, config.clientKey].compactMap { $0 }
        if !configuredKeys.isEmpty, !isMaster {
            let matches = clientKeys.contains { given in configuredKeys.contains { SecureRandom.constantTimeEquals(given, $0) } }
            guard matches else { throw APIError.unauthorized }
        }
        return isMaster
    }
}
