import Foundation
import RoostCore
import Testing

/// Parse Server's spec/ParseFile.spec.js, "file upload configuration": who may upload, per Parse's
/// `fileUpload.enableForPublic`, `enableForAnonymousUser` and `enableForAuthenticatedUser`.
/// Roost's flags: `--[no-]enable-file-upload-for-public`, `-anonymous-users` and `-authenticated-users`.
@Suite struct ParseFileUploadPolicySpecTests {
    struct Policy: Sendable, CustomStringConvertible {
        let forPublic: Bool, forAnonymous: Bool, forAuthenticated: Bool
        var description: String { "public \(forPublic), anonymous \(forAnonymous), authenticated \(forAuthenticated)" }

        var flags: [String] {
            [forPublic ? "--enable-file-upload-for-public" : "--no-enable-file-upload-for-public",
             forAnonymous ? "--enable-file-upload-for-anonymous-users" : "--no-enable-file-upload-for-anonymous-users",
             forAuthenticated ? "--enable-file-upload-for-authenticated-users" : "--no-enable-file-upload-for-authenticated-users"]
        }
    }

    // spec: ParseFile.spec.js: rejects all file uploads
    // spec: ParseFile.spec.js: allows all file uploads
    // spec: ParseFile.spec.js: allows file upload only for public
    // spec: ParseFile.spec.js: allows file upload only for anonymous user
    @Test(arguments: [
        Policy(forPublic: false, forAnonymous: false, forAuthenticated: false),
        Policy(forPublic: true, forAnonymous: true, forAuthenticated: true),
        Policy(forPublic: true, forAnonymous: false, forAuthenticated: false),
        Policy(forPublic: false, forAnonymous: true, forAuthenticated: false),
        // (false, false, true), "allows file upload only for authenticated user", is the default: carried in
        // ParseFileSDKSpecTests.onlyRegisteredUsersMayUpload.
    ])
    func whoMayUpload(_ policy: Policy) async throws {
        let server = try TestServer(arguments: fastHashing + policy.flags)
        let hello = Data("Hello World!".utf8)
        func upload(token: String?) async throws -> TestResponse {
            var headers = ["Content-Type": "text/plain"]
            headers["X-Parse-Session-Token"] = token
            return try await server.request("POST", "/files/hello.txt", body: hello, headers: headers)
        }
        func expectAnswer(_ response: TestResponse, allowed: Bool, refusal: String) {
            if allowed {
                #expect(response.status == 201, "\(policy): \(response.text)")
            } else {
                expectError(response, 130, refusal)
            }
        }
        expectAnswer(try await upload(token: nil), allowed: policy.forPublic, refusal: "File upload by public is disabled.")
        let anonymous = try await server.request("POST", "/users", json: ["authData": ["anonymous": ["id": .string(newAnonymousId())]]])
        expectAnswer(try await upload(token: anonymous.json["sessionToken"]?.stringValue ?? ""), allowed: policy.forAnonymous,
                     refusal: "File upload by anonymous user is disabled.")
        let user = try await server.request("POST", "/users", json: ["username": "user", "password": "password"])
        expectAnswer(try await upload(token: user.json["sessionToken"]?.stringValue ?? ""), allowed: policy.forAuthenticated,
                     refusal: "File upload by authenticated user is disabled.")
        // The master key may upload whatever the policy ("allows file upload with master key", carried in ParseFileSpecTests).
        #expect(try await server.request("POST", "/files/hello.txt", body: hello, headers: ["Content-Type": "text/plain"], master: true).status == 201)
    }
}
