import Foundation
import RoostCore

/// Parse Server's security check (`security.enableCheck`, `--security-check`): `GET /security` with the master key
/// answers a report of weak settings, in Parse's format (version 1.0.0) and with its checks, and
/// `--security-check-log` writes it to the log at start (Parse's `enableCheckLog`). Off by default: 409.
enum SecurityCheck {
    static func register(in router: inout Router) {
        router.add("GET", "security") { _, context, _ in
            try context.requireMaster()
            guard context.config.securityCheck.enabled else { throw APIError.securityCheckDisabled }
            return APIResponse(body: report(context.config))
        }
    }

    private struct Check {
        let title: String
        let warning: String
        let solution: String
        let passes: Bool
    }

    /// Parse's two groups, their checks answered for this server.
    private static func groups(_ config: ServerConfig) -> [(name: String, checks: [Check])] {
        let server = [
            Check(title: "Secure master key", warning: "The Parse Server master key is insecure and vulnerable to brute force attacks.",
                  solution: "Choose a longer and/or more complex master key with a combination of upper- and lowercase characters, numbers and special characters.",
                  passes: isComplex(config.masterKey)),
            Check(title: "Security log disabled", warning: "Security checks in logs may expose vulnerabilities to anyone with access to logs.",
                  solution: "Change Parse Server configuration to 'security.enableCheckLog: false'.",
                  passes: !config.securityCheck.log),
            Check(title: "Client class creation disabled",
                  warning: "Attackers are allowed to create new classes without restriction and flood the database.",
                  solution: "Change Parse Server configuration to 'allowClientClassCreation: false'.",
                  passes: !config.allowClientClassCreation),
            // Roost's users are always created without public access (Parse's `enforcePrivateUsers`, on by default).
            Check(title: "Users are created without public access",
                  warning: "Users with public read access are exposed to anyone who knows their object IDs, or to anyone who can query the Parse.User class.",
                  solution: "Change Parse Server configuration to 'enforcePrivateUsers: true'.", passes: true),
        ]
        // SQLite's file has no password to guess; a PostgreSQL URL's password is held to the master key's rule.
        let password = config.databaseURL.flatMap { URLComponents(string: $0)?.password }
        let database = [
            Check(title: "Secure database password", warning: "The database password is insecure and vulnerable to brute force attacks.",
                  solution: "Choose a longer and/or more complex password with a combination of upper- and lowercase characters, numbers and special characters.",
                  passes: config.databaseURL == nil || password.map(isComplex) == true),
        ]
        return [("Parse Server Configuration", server), ("Database", database)]
    }

    /// Parse's rule: at least 14 characters, and three of upper case, lower case, digits and other characters. Also
    /// (Roost's addition) any secret of 32 characters or more: the key Roost generates is 48 hex digits, 192 random
    /// bits, which Parse's rule would call weak for its two kinds of characters.
    static func isComplex(_ secret: String) -> Bool {
        if secret.count >= 32 { return true }
        guard secret.count >= 14 else { return false }
        let kinds = [secret.contains { $0.isUppercase }, secret.contains { $0.isLowercase }, secret.contains { $0.isNumber },
                     secret.unicodeScalars.contains { !(CharacterSet.alphanumerics.contains($0) || $0 == "_") }]
        return kinds.filter { $0 }.count >= 3
    }

    static func report(_ config: ServerConfig) -> JSON {
        var failed = false
        let groups: [JSON] = groups(config).map { group in
            let checks: [JSON] = group.checks.map { check in
                guard !check.passes else { return ["title": .string(check.title), "state": "success"] }
                return ["title": .string(check.title), "state": "fail", "warning": .string(check.warning), "solution": .string(check.solution)]
            }
            let groupFailed = group.checks.contains { !$0.passes }
            failed = failed || groupFailed
            return ["name": .string(group.name), "state": groupFailed ? "fail" : "success", "checks": .array(checks)]
        }
        return ["report": ["version": "1.0.0", "state": failed ? "fail" : "success", "groups": .array(groups)]]
    }

    /// The report as Parse's `CheckRunner` writes it to the log, and whether a check failed.
    static func logText(_ config: ServerConfig) -> (text: String, failed: Bool) {
        var output = "", checks = 0, failures = 0
        for group in groups(config) {
            output += "\n- \(group.name)"
            for check in group.checks {
                checks += 1
                output += "\n   \(check.passes ? "✅" : "❌") \(check.title)"
                if !check.passes {
                    failures += 1
                    output += "\n      Warning: \(check.warning) \(check.solution)"
                }
            }
        }
        let header = "\n###################################\n#                                 #\n#   Parse Server Security Check   #"
            + "\n#                                 #\n###################################\n"
        let summary = "\n\(failures > 0 ? "Warning: " : "")\(failures) weak security setting(s) found\(failures > 0 ? "!" : "")"
            + "\n\(checks) check(s) executed\n0 check(s) skipped\n"
        return (header + summary + output, failures > 0)
    }
}
