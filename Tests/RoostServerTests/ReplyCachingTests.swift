import Foundation
import RoostCore
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// API replies are never cached (a cache keyed on the path alone, like Foundation's URLCache under Parse-Swift
/// on Linux, would answer one query with another's rows); files are, with validators for conditional GETs.
@Suite struct ReplyCachingTests {
    @Test func apiRepliesSayNoStore() async throws {
        let s = try TestServer()
        let id = try await s.create("Item", ["n": 1])
        let replies = [
            try await s.request("GET", "/classes/Item/\(id)"),
            try await s.request("GET", "/classes/Item", query: ["where": #"{"n":1}"#]),
            try await s.request("PUT", "/config", json: ["params": ["a": 1]], master: true),
            try await s.request("GET", "/config"),
            try await s.request("GET", "/classes/Item/missing0000"),  // An error too.
            try await s.request("GET", "/health"),
        ]
        for reply in replies { #expect(reply.headers["cache-control"] == "no-store", "\(reply.status) \(reply.text)") }
    }

    @Test func filesAreCacheableAndAnswer304WhenUnchanged() async throws {
        let s = try TestServer()
        let upload = try await s.request("POST", "/files/hello.txt", body: Data("hello".utf8), headers: ["Content-Type": "text/plain"],
                                         master: true)
        let url = try #require(upload.json["url"]?.stringValue)
        let first = try await s.request("GET", String(url.dropFirst(s.baseURL.count)))
        #expect(first.status == 200 && first.text == "hello")
        #expect(first.headers["cache-control"] == "public, max-age=31536000, immutable")
        let etag = try #require(first.headers["etag"])
        let modified = try #require(first.headers["last-modified"])
        #expect(etag.hasPrefix("\"") && etag.hasSuffix("\""))
        #expect(modified.hasSuffix(" GMT") && modified.count == 29, "\(modified)")

        // A session without a cache of its own, so every request reaches the server as sent.
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        let session = URLSession(configuration: configuration)
        func get(_ headers: [String: String]) async throws -> (status: Int, body: Data, etag: String?) {
            var request = URLRequest(url: URL(string: url)!)
            for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
            let (data, response) = try await session.data(for: request)
            let http = try #require(response as? HTTPURLResponse)
            return (http.statusCode, data, http.value(forHTTPHeaderField: "ETag"))
        }
        for headers in [["If-None-Match": etag], ["If-None-Match": "\"other\", W/\(etag)"], ["If-None-Match": "*"],
                        ["If-Modified-Since": modified]] {
            let again = try await get(headers)
            #expect(again.status == 304 && again.body.isEmpty, "\(headers): \(again.status)")
            #expect(again.etag == etag)
        }
        for headers in [["If-None-Match": "\"other\""], ["If-Modified-Since": "Thu, 01 Jan 1970 00:00:00 GMT"],
                        ["If-Modified-Since": "yesterday"],
                        // If-None-Match decides when both are sent.
                        ["If-None-Match": "\"other\"", "If-Modified-Since": modified]] {
            let again = try await get(headers)
            #expect(again.status == 200 && again.body == Data("hello".utf8), "\(headers): \(again.status)")
        }
    }
}
