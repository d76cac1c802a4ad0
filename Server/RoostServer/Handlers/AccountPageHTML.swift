/// The HTML of the account pages, saying what Parse Server's `public_html` pages and its `choose_password`
/// view say, but working without JavaScript: the forms are plain HTML forms.
enum AccountPageHTML {
    /// A whole page: `title`, then `body` (already HTML).
    static func page(title: String, body: String) -> String {
        """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="referrer" content="no-referrer">
        <title>\(escape(title))</title>
        <style>
        body { font-family: system-ui, sans-serif; max-width: 28rem; margin: 4rem auto; padding: 0 1rem; color: #222; }
        h1 { font-size: 1.4rem; } label { display: block; margin: 1rem 0 .3rem; }
        input[type=password] { width: 100%; padding: .5rem; font-size: 1rem; box-sizing: border-box; }
        button { margin-top: 1rem; padding: .5rem 1rem; font-size: 1rem; } .error { color: #b00020; }
        </style>
        </head>
        <body>
        \(body)
        </body>
        </html>
        """
    }

    /// The static pages of Parse's `public_html`, by file name: title and message.
    static let messages: [String: (title: String, message: String)] = [
        "invalid_link.html": ("Invalid Link", "Invalid Link"),
        "link_send_success.html": ("Invalid Link", "Link Sent! Check your email."),
        "link_send_fail.html": ("Invalid Link", "No link sent. User not found or email already verified"),
        "verify_email_success.html": ("Email Verification", "Successfully verified your email!"),
        "password_reset_success.html": ("Password Reset", "Successfully updated your password!"),
    ]

    /// `invalid_verification_link.html`: with the `username` and `appId` Parse passes, a form asking for a new link.
    static func invalidVerificationLink(username: String?, appId: String?) -> String {
        var body = "<h1>Invalid Verification Link</h1>"
        if let username, let appId {
            body += """
                <form method="POST" action="\(escape(URIComponent.encode(appId)))/resend_verification_email">
                <input type="hidden" name="username" value="\(escape(username))">
                <button type="submit">Resend Link</button>
                </form>
                """
        }
        return page(title: "Invalid Link", body: body)
    }

    /// `choose_password`: the new password form, posting to `action` with the username and token hidden.
    static func choosePassword(appName: String, action: String, username: String, token: String, error: String?) -> String {
        let problem = error.map { "<p class=\"error\" role=\"alert\">\(escape($0))</p>" } ?? ""
        return page(title: "Password Reset", body: """
            <h1>Reset Your Password\(appName.isEmpty ? "" : " for " + escape(appName))</h1>
            <p>You requested a password reset for \(escape(username)).</p>
            \(problem)
            <form id="password_form" method="POST" action="\(escape(action))">
            <input type="hidden" name="username" value="\(escape(username))">
            <input type="hidden" name="token" value="\(escape(token))">
            <label for="password">New Password</label>
            <input id="password" type="password" name="new_password" autocomplete="new-password" required>
            <button id="change_password" type="submit">Change Password</button>
            </form>
            """)
    }

    static func escape(_ text: String) -> String { MailTemplates.escapeHTML(text) }
}
