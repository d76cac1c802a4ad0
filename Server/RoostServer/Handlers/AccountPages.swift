import RoostCore

/// The pages the mailed links lead to, under `<mount>/apps/`, as Parse Server's default `PublicAPIRouter`
/// serves them: the verify link, the reset link and its choose-password form, and their result pages.
/// They are HTML and redirects (302), not JSON; form posts are read as forms.
struct AccountPages {
    let context: RequestContext

    /// Whether a request is a page request that sets a password (its work runs on a password worker).
    static func setsPassword(_ method: String, _ segments: [String]) -> Bool {
        method == "POST" && segments.count == 3 && segments[2] == "request_password_reset"
    }

    /// The answer to `<mount>/apps/…` (`segments` start with "apps").
    func respond(_ request: HTTPRequest, segments: [String]) -> HTTPResponse {
        let mail = context.config.mail
        let route = Array(segments.dropFirst())
        if route.count == 2, route[0] != context.config.applicationId {
            return HTTPResponse(status: 403, headers: [("Content-Type", "application/json; charset=utf-8")],
                                body: Array(#"{"error":"unauthorized"}"#.utf8))
        }
        if route == ["choose_password"], request.method == "GET", request.query["id"] != context.config.applicationId {
            return HTTPResponse(status: 403, headers: [("Content-Type", "application/json; charset=utf-8")],
                                body: Array(#"{"error":"unauthorized"}"#.utf8))
        }
        // The result pages are files (Parse's `express.static(public_html)`), served whatever the options.
        if request.method == "GET", route.count == 1, let page = staticPage(route[0], request) { return page }
        guard mail.publicServerURL != nil else { return text(404, "Not found.") }
        switch (request.method, route.count == 2 ? route[1] : route.first ?? "") {
        case ("GET", "verify_email") where route.count == 2: return verifyEmail(request)
        case ("POST", "resend_verification_email") where route.count == 2: return resendVerification(request)
        case ("GET", "request_password_reset") where route.count == 2: return openResetLink(request)
        case ("POST", "request_password_reset") where route.count == 2: return resetPassword(request)
        case ("GET", "choose_password") where route.count == 1: return choosePassword(request)
        default:
            return text(404, "Not found.")
        }
    }

    private func staticPage(_ name: String, _ request: HTTPRequest) -> HTTPResponse? {
        if name == "invalid_verification_link.html" {
            return html(AccountPageHTML.invalidVerificationLink(username: request.query["username"], appId: request.query["appId"]))
        }
        guard let page = AccountPageHTML.messages[name] else { return nil }
        return html(AccountPageHTML.page(title: page.title, body: "<h1>\(AccountPageHTML.escape(page.message))</h1>"))
    }

    // MARK: Email verification

    private func verifyEmail(_ request: HTTPRequest) -> HTTPResponse {
        guard let username = nonEmpty(request.query["username"]), let token = nonEmpty(request.query["token"]) else {
            return redirect(to: "invalid_link.html")
        }
        guard (try? EmailVerification.verify(username: username, token: token, context: context)) == true else {
            return redirect(to: "invalid_verification_link.html", query: [("username", username), ("appId", context.config.applicationId)])
        }
        return redirect(to: "verify_email_success.html", query: [("username", username)])
    }

    private func resendVerification(_ request: HTTPRequest) -> HTTPResponse {
        guard let username = nonEmpty(Self.form(request)["username"]) else { return redirect(to: "invalid_link.html") }
        let sent = (try? EmailVerification.resend(username: username, context: context)) ?? false
        return redirect(to: sent ? "link_send_success.html" : "link_send_fail.html")
    }

    // MARK: Password reset

    /// The mailed link: a good token leads on to the form (Parse's `requestResetPassword`).
    private func openResetLink(_ request: HTTPRequest) -> HTTPResponse {
        guard let username = nonEmpty(request.query["username"]), let token = nonEmpty(request.query["token"]),
            (try? PasswordReset.check(username: username, token: token, context: context)) != nil
        else { return redirect(to: "invalid_link.html") }
        return redirect(to: "choose_password", query: chooseQuery(username: username, token: token, error: nil))
    }

    private func choosePassword(_ request: HTTPRequest) -> HTTPResponse {
        let action = context.config.mail.appPageURL("request_password_reset", applicationId: context.config.applicationId)
        return html(AccountPageHTML.choosePassword(
            appName: request.query["app"] ?? "", action: action, username: request.query["username"] ?? "",
            token: request.query["token"] ?? "", error: nonEmpty(request.query["error"])))
    }

    /// The form's post (or the same fields as JSON, with `X-Requested-With: XMLHttpRequest` for Parse's
    /// JSON answers): Parse's `resetPassword`.
    private func resetPassword(_ request: HTTPRequest) -> HTTPResponse {
        let fields = Self.form(request)
        let isXHR = request.headers["x-requested-with"]?.lowercased() == "xmlhttprequest"  // Express's `req.xhr`.
        let username = nonEmpty(fields["username"]), token = nonEmpty(fields["token"]), password = nonEmpty(fields["new_password"])
        guard let username, let token, let password else {
            if !isXHR { return redirect(to: "invalid_link.html") }
            if username == nil { return error(.usernameMissing, "Missing username") }
            if token == nil { return error(.otherCause, "Missing token") }
            return error(.passwordMissing, "Missing password")
        }
        do {
            try PasswordReset.reset(username: username, token: token, newPassword: password, context: context)
        } catch {
            let message = (error as? PasswordReset.Refusal)?.message ?? "Failed to reset password"
            if !(error is PasswordReset.Refusal) { context.logger.error("password reset failed: \(error)") }
            if isXHR { return self.error(.otherCause, message) }
            return redirect(to: "choose_password", query: chooseQuery(username: username, token: token, error: message))
        }
        if isXHR { return json(200, #""Password successfully reset""#) }
        return redirect(to: "password_reset_success.html", query: [("username", username)])
    }

    /// The choose-password page's parameters, in the order Parse's `qs.stringify` calls write them.
    private func chooseQuery(username: String, token: String, error: String?) -> [(String, String)] {
        let appId = context.config.applicationId, app = context.config.mail.appName ?? ""
        guard let error else { return [("token", token), ("id", appId), ("username", username), ("app", app)] }
        return [("username", username), ("token", token), ("id", appId), ("error", error), ("app", app)]
    }

    // MARK: Answers

    /// A 302 to `<publicServerURL>/apps/<page>` with the query encoded as Node's `querystring.stringify`.
    private func redirect(to page: String, query: [(String, String)] = []) -> HTTPResponse {
        var location = "\(context.config.mail.publicServerURL ?? "")/apps/\(page)"
        if !query.isEmpty { location += "?" + query.map { "\($0.0)=\(URIComponent.encode($0.1))" }.joined(separator: "&") }
        return HTTPResponse(status: 302, headers: [("Location", location), ("Referrer-Policy", "no-referrer")],
                            body: Array("Found. Redirecting to \(location)".utf8))
    }

    private func html(_ page: String) -> HTTPResponse {
        HTTPResponse(status: 200, headers: [("Content-Type", "text/html; charset=utf-8"), ("Referrer-Policy", "no-referrer"),
                                            ("X-Frame-Options", "DENY")], body: Array(page.utf8))
    }

    private func text(_ status: Int, _ body: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "text/html; charset=utf-8")], body: Array(body.utf8))
    }

    private func json(_ status: Int, _ body: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "application/json; charset=utf-8")], body: Array(body.utf8))
    }

    private func error(_ code: ParseErrorCode, _ message: String) -> HTTPResponse {
        json(400, ParseError(code, message).json.jsonText)
    }

    private func nonEmpty(_ value: String?) -> String? { value.flatMap { $0.isEmpty ? nil : $0 } }

    /// A form body (`application/x-www-form-urlencoded`), or a JSON object's string fields.
    static func form(_ request: HTTPRequest) -> [String: String] {
        if request.body.first(where: { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }) == UInt8(ascii: "{") {
            guard case .object(let members)? = try? JSONParser.parse(request.body, maximumValues: 100) else { return [:] }
            return members.compactMapValues { $0.stringValue }
        }
        return HTTPRequest.splitTarget("?" + String(decoding: request.body, as: UTF8.self)).query
    }
}
