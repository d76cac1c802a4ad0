import Foundation
import RoostCore

/// `/files` (REST guide, "Files"): answered before the JSON pipeline, because uploads are raw bytes.
///
/// As Parse Server's defaults: uploads need a registered user's session or the master key
/// (public and anonymous uploads are refused with 130); downloads need no keys, only the app id
/// in the URL; deletes need the master key. Extensions outside `--file-extensions` (HTML, SVG and XML
/// by default) are refused to clients with 130.
extension RoostServer {
    func handleFile(_ request: HTTPRequest, segments: [String]) throws -> HTTPResponse {
        switch (request.method, segments.count) {
        case ("GET", 3): return try download(request, applicationId: segments[1], name: segments[2])
        // Metadata needs a files adapter that keeps it; Parse answers `{}` for adapters without.
        case ("GET", 4) where segments[2] == "metadata": return encode(APIResponse(body: [:]))
        case ("POST", 1): throw ParseError(.invalidFileName, "Filename not provided.")
        case ("POST", 2): return try upload(request, name: segments[1])
        case ("DELETE", 2): return try deleteFile(request, name: segments[1])
        default:
            // Parse hands other paths to its API, which asks for the app id first.
            _ = try Credentials(headers: request.headers).authorize(config, clientAddress: request.clientAddress)
            throw APIError.routeNotFound(method: request.method, path: "/" + segments.joined(separator: "/"))
        }
    }

    private func upload(_ request: HTTPRequest, name: String) throws -> HTTPResponse {
        var credentials = Credentials(headers: request.headers)
        var bytes = request.spooledBody.map { UploadBytes.spooled($0) } ?? .memory(request.body)
        var contentType = request.headers["content-type"]
        var fileData: JSON?  // The JS SDK's metadata and tags, which roost does not keep (Parse's S3 adapter does).
        // Keys in the body (the JS SDK's form, below) only when the headers have none: then a spooled body is read.
        if credentials.applicationId != config.applicationId,
            case .object(var members)? = try? JSONParser.parse(request.spooledBody.map { try $0.read(0, $0.count) } ?? request.body),
            members["_ApplicationId"] != nil {
            // The JS SDK form: a JSON body with the keys, the type and the file as base64.
            credentials.adopt(from: &members)
            contentType = members["_ContentType"]?.stringValue
            fileData = members["fileData"]
            guard let base64 = members["base64"]?.stringValue, let decoded = Base64.decode(base64) else {
                throw ParseError(.fileSaveError, "Invalid file upload.")
            }
            bytes = .memory(decoded)
        }
        let isMaster = try credentials.authorize(config, clientAddress: request.clientAddress)
        try checkRateLimits("POST", String(request.path.dropFirst(config.mountPath.count)), clientAddress: request.clientAddress,
                            isMaster: isMaster, sessionToken: credentials.sessionToken)
        if !isMaster {  // Parse's `FilesRouter.createHandler`: who may upload, by the caller's kind.
            if let token = credentials.sessionToken {
                let user = try authenticate(token)
                if try isAnonymous(user.id) {
                    guard config.fileUploadsForAnonymousUsers else { throw ParseError(.fileSaveError, "File upload by anonymous user is disabled.") }
                } else if !config.fileUploadsForAuthenticatedUsers {
                    throw ParseError(.fileSaveError, "File upload by authenticated user is disabled.")
                }
            } else if !config.fileUploadsForPublic {
                throw ParseError(.fileSaveError, "File upload by public is disabled.")
            }
        }
        guard name.utf8.count <= 128 else { throw ParseError(.invalidFileName, "Filename too long.") }
        guard FileStore.isValidName(name) else { throw ParseError(.invalidFileName, "Filename contains invalid characters.") }
        guard !bytes.isEmpty else { throw ParseError(.fileSaveError, "Invalid file upload.") }
        for part in ["metadata", "tags"] { if let data = fileData?[part] { try KeywordDenylist.check(data, custom: config.requestKeywordDenylist) } }
        let storedName = FileStore.name(name, withExtensionFor: contentType)
        if !isMaster { try fileExtensions.check(name: name, contentType: contentType, storedName: storedName) }
        let stored = try files.save(bytes, name: storedName)
        let url = FileURLs(base: "\(publicURL(request))/files/\(config.applicationId)/").url(for: stored)
        var response = encode(APIResponse(status: 201, body: ["url": .string(url), "name": .string(stored)]))
        response.headers.append(("Location", url))
        return response
    }

    private func download(_ request: HTTPRequest, applicationId: String, name: String) throws -> HTTPResponse {
        guard applicationId == config.applicationId else {
            return encode(APIResponse(status: 403, body: ParseError(.operationForbidden, "Invalid application ID.").json))
        }
        guard let file = try files.read(name) else {
            return HTTPResponse(status: 404, headers: [("Content-Type", "text/plain")], body: Array("File not found.".utf8))
        }
        // A stored name's bytes never change (an upload always gets a new name): caches may keep them.
        let validators = [("ETag", file.etag), ("Last-Modified", HTTPDate.format(secondsSince1970: file.modifiedSeconds)),
                          ("Cache-Control", "public, max-age=31536000, immutable")]
        if FileCaching.isFresh(request.headers, etag: file.etag, modifiedSeconds: file.modifiedSeconds) {
            return HTTPResponse(status: 304, headers: validators)
        }
        let headers = FileStore.servingHeaders(of: name) + validators
        if let range = FileRange(header: request.headers["range"], size: file.size) {
            return file.response(status: 206, headers: headers + [("Accept-Ranges", "bytes"), ("Content-Range", range.contentRange)],
                                 range: range.start..<range.end)
        }
        return file.response(status: 200, headers: headers, range: 0..<file.size)
    }

    private func deleteFile(_ request: HTTPRequest, name: String) throws -> HTTPResponse {
        guard try Credentials(headers: request.headers).authorize(config, clientAddress: request.clientAddress) else {
            throw APIError.masterKeyRequired
        }
        guard try files.delete(name) else { throw ParseError(.fileDeleteError, "Could not delete file.") }
        return HTTPResponse(status: 200)
    }

    private func isAnonymous(_ userId: String) throws -> Bool {
        try storage.read { db in
            guard let user = try UserStore.fetch(userId, in: db) else { return false }
            if case .object(let authData)? = user.fields["authData"], let anonymous = authData["anonymous"], anonymous != .null { return true }
            return false
        }
    }
}
