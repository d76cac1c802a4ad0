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

    /// Sends `method path` (relative to the server URL, e.g. `classes/Todo`) and returns the JSON answer.
    /// - Throws: `RoostError.server` for a Parse error body, `.transport` when there is no answer.
    func send(_ method: String, _ path: String, body: JSON? = nil, query: [String: String] = [:],
              sessionToken: String? = nil, requestId: String? = nil) async throws -> JSON {
        var components = URLComponents(url: serverURL.appendingPathComponent(path), resolvingAgainstBaseURL: false)!
        if !query.isEmpty {
            components.queryItems = query.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) }
            // '+' means a space to form decoders: send it encoded.
            components.percentEncodedQuery = components.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
        }
        var request = URLRequest(url: components.url!)
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
            throw RoostError.transport(error.localizedDescription)
        }
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        let json = try? JSONParser.parse(Array(data))
        if (200..<300).contains(status), let json { return json }
        if status >= 500 || status == 429 {
            // The server is overloaded or failing: worth retrying, unlike a Parse error about the request.
            throw RoostError.transport("HTTP \(status)")
        }
        if let json, let code = json["code"]?.numberValue {
            throw RoostError.server(code: ParseErrorCode(rawValue: Int(code)),
                                    message: json["error"]?.stringValue ?? json["message"]?.stringValue ?? "")
        }
        if status == 0 { throw RoostError.transport("no HTTP status") }
        throw RoostError.invalidResponse(status: status, body: String(decoding: data, as: UTF8.self))
    }
}
