import Foundation

/// The verification and password reset mails: subject, text and HTML, with Parse's placeholders
/// `%username%`, `%email%`, `%appname%` and `%link%`. The defaults say what Parse Server's default mails
/// say; a file in `<data dir>/mail/` replaces one part (read at start-up):
/// `verify_email_subject.txt`, `verify_email.txt`, `verify_email.html`,
/// `password_reset_subject.txt`, `password_reset.txt`, `password_reset.html`.
public struct MailTemplates: Sendable {
    struct Template: Sendable {
        var subject: String
        var text: String
        var html: String
    }

    enum Kind: String {
        case verifyEmail = "verify_email"
        case passwordReset = "password_reset"
    }

    public init() {}

    var verifyEmail = Template(
        subject: "Please verify your e-mail for %appname%",
        text: "Hi,\n\nYou are being asked to confirm the e-mail address %email% with %appname%\n\nClick here to confirm it:\n%link%",
        html: """
            <p>Hi,</p><p>You are being asked to confirm the e-mail address %email% with %appname%.</p>
            <p><a href="%link%">Click here to confirm it.</a></p>
            """)
    var passwordReset = Template(
        subject: "Password Reset for %appname%",
        text: "Hi,\n\nYou requested to reset your password for %appname% (your username is '%username%').\n\nClick here to reset it:\n%link%",
        html: """
            <p>Hi,</p><p>You requested to reset your password for %appname% (your username is '%username%').</p>
            <p><a href="%link%">Click here to reset it.</a></p>
            """)

    /// The defaults, with each part found in `<directory>/mail/` instead.
    public static func load(dataDirectory directory: String) -> MailTemplates {
        var templates = MailTemplates()
        func read(_ name: String) -> String? { try? String(contentsOfFile: "\(directory)/mail/\(name)", encoding: .utf8) }
        for kind in [Kind.verifyEmail, .passwordReset] {
            var template = templates[kind]
            if let subject = read("\(kind.rawValue)_subject.txt") { template.subject = subject.trimmingCharacters(in: .whitespacesAndNewlines) }
            if let text = read("\(kind.rawValue).txt") { template.text = text }
            if let html = read("\(kind.rawValue).html") { template.html = html }
            templates[kind] = template
        }
        return templates
    }

    subscript(kind: Kind) -> Template {
        get { kind == .verifyEmail ? verifyEmail : passwordReset }
        set { if kind == .verifyEmail { verifyEmail = newValue } else { passwordReset = newValue } }
    }

    /// The subject, text and HTML of a mail, placeholders filled (HTML-escaped in the HTML part).
    func render(_ kind: Kind, values: [String: String]) -> (subject: String, text: String, html: String) {
        let template = self[kind]
        return (Self.fill(template.subject, values, escape: { $0 }), Self.fill(template.text, values, escape: { $0 }),
                Self.fill(template.html, values, escape: Self.escapeHTML))
    }

    /// One pass over the template, so a value that contains a placeholder (a username `%link%`) stays as it is.
    private static func fill(_ template: String, _ values: [String: String], escape: (String) -> String) -> String {
        var result = ""
        var rest = template[...]
        while let start = rest.firstIndex(of: "%") {
            result += rest[..<start]
            let afterStart = rest.index(after: start)
            if let end = rest[afterStart...].firstIndex(of: "%"), let value = values[String(rest[afterStart..<end])] {
                result += escape(value)
                rest = rest[rest.index(after: end)...]
            } else {
                result += "%"
                rest = rest[afterStart...]
            }
        }
        return result + rest
    }

    static func escapeHTML(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
