import Foundation
import RoostCore
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends Parse REST requests with URLSession and decodes Parse answers and errors.
final class HTTPTransport: Sendable {
    let serverURL: URL
    let applicationId: String
    let clientKey: String?
    private let session: URLSession

    init(serverURL: URL, applicationId: String, clientKey: String?, timeout: TimeInterval) {
        self.serverURL = serverURL
        self.applicationId = applicationId
        self.clientKey = clientKey
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        session = URLSession(configuration: configuration)
    }

    deinit { session.invalidateAndCancel() }

    /// A usable answer: a 2xx status with a JSON object or array.
    struct Reply {
        let status: Int
        let json: JSON
    }

    /// Sends `method path` (relative to the server URL, e.g. `classes/Todo`) and returns the JSON answer.
    /// - Throws: see `exchange`.
    func send(_ method: String, _ path: String, body: JSON? = nil, query: [String: String] = [:],
              sessionToken: String? = nil, requestId: String? = nil) async throws -> JSON {
        try await exchange(method, path, body: body, query: query, sessionToken: sessionToken, requestId: requestId).json
    }

    /// Sends `method path` and returns the status and JSON of a 2xx answer.
    ///
    /// What a reply means (the delivery rules of `saveEventually` build on it):
    /// - `RoostError.transport`: no answer, 5xx, 429, a 2xx whose body is not a JSON object or array (a captive
    ///   portal's page), or a reply echoing another request's `X-Parse-Request-Id`. Retrying may help.
    /// - `RoostError.server`: a Parse error (`{code, error}`) about this request. Retrying does not help.
    /// - `RoostError.misconfigured`: 403 `{"error":"unauthorized"}` (wrong application id) or a 404 without a
    ///   Parse code (no Parse API at the server URL). Nothing helps until the configuration is fixed.
    /// - `RoostError.invalidResponse`: any other refusal that is not a Parse error.
    func exchange(_ method: String, _ path: String, body: JSON? = nil, query: [String: String] = [:],
                  sessionToken: String? = nil, requestId: String? = nil) async throws -> Reply {
        guard var components = URLComponents(url: serverURL.appendingPathComponent(path), resolvingAgainstBaseURL: false) else {
            throw RoostError.invalidArgument("not a URL: \(serverURL.absoluteString)/\(path)")
        }
        if !query.isEmpty {
            components.queryItems = query.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) }
            // '+' means a space to form decoders: send it encoded.
            components.percentEncodedQuery = components.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
        }
        guard let url = components.url else { throw RoostError.invalidArgument("not a URL: \(serverURL.absoluteString)/\(path)") }
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.setValue(applicationId, forHTTPHeaderField: "X-Parse-Application-Id")
        if let clientKey { request.setValue(clientKey, forHTTPHeaderField: "X-Parse-Client-Key") }
        if let sessionToken { request.setValue(sessionToken, forHTTPHeaderField: "X-Parse-Session-Token") }
        if let requestId { request.setValue(requestId, forHTTPHeaderField: "X-Parse-Request-Id") }
        if let body {
            request.httpBody = Data(body.encoded())
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let data: Data, response: URLResponse
        do {
            (data, response) = try await session.data(for: request)
        } catch {
            try Task.checkCancellation()
            throw RoostError.transport(error.localizedDescription)
        }
        let http = response as? HTTPURLResponse
        let status = http?.statusCode ?? 0
        if let requestId, let echoed = http?.value(forHTTPHeaderField: "X-Parse-Request-Id"), echoed != requestId {
            // Someone else's reply (a middlebox replaying or mixing up answers): ours may still come.
            throw RoostError.transport("the reply was for another request")
        }
        let json = try? JSONParser.parse(Array(data))
        if (200..<300).contains(status) {
            guard let json, json.objectValue != nil || json.arrayValue != nil else {
                // A captive portal's page or a truncated body: not an answer from the API.
                throw RoostError.transport("unusable reply (HTTP \(status), not a JSON object)")
            }
            return Reply(status: status, json: json)
        }
        if status >= 500 || status == 429 {
            // The server is overloaded or failing: worth retrying, unlike a Parse error about the request.
            throw RoostError.transport("HTTP \(status)")
        }
        if let json, let code = json["code"]?.numberValue {
            throw RoostError.server(code: ParseErrorCode(rawValue: Int(code)),
                                    message: json["error"]?.stringValue ?? json["message"]?.stringValue ?? "")
        }
        if status == 403, json?["error"] == "unauthorized" {
            throw RoostError.misconfigured("unauthorized: check the application id")
        }
        if status == 404 { throw RoostError.misconfigured("no Parse API at \(serverURL.absoluteString)") }
        if status == 0 { throw RoostError.transport("no HTTP status") }
        throw RoostError.invalidResponse(status: status, body: String(decoding: data, as: UTF8.self))
    }
}
