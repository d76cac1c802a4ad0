import Foundation
import RoostCore
import RoostTestSupport
import Testing

/// Parse Server's spec/PurchaseValidation.spec.js over REST: `_Product` (required fields, `downloadName`) and
/// `POST /validate_purchase`, with two local servers standing in for Apple's production and sandbox `verifyReceipt`.
@Suite struct PurchaseValidationSpecTests {
    let production: WebhookReceiver
    let sandbox: WebhookReceiver
    let server: TestServer

    init() throws {
        production = try WebhookReceiver(reply: #"{"status":21002}"#)
        sandbox = try WebhookReceiver(reply: #"{"status":0}"#)
        server = try TestServer(environment: ["ROOST_TEST_APP_STORE_URLS": "\(production.url) \(sandbox.url)", "ROOST_TEST_BYPASS_APP_STORE": "1"])
    }

    /// The spec's `createProduct`, by a client without the master key; answers the download file's name.
    private func createProduct() async throws -> String {
        let uploaded = try await server.request("POST", "/files/name.txt", body: Data("download_file".utf8), headers: ["Content-Type": "text/plain"],
                                                master: true)  // Parse's default: clients without a user may not upload.
        let name = try #require(uploaded.json["name"]?.stringValue, "\(uploaded.text)")
        let file: JSON = ["__type": "File", "name": .string(name)]
        _ = try await server.create("_Product", ["download": file, "icon": file, "title": "a product", "subtitle": "a product", "order": 1,
                                                "productIdentifier": "a-product"])
        return name
    }

    private func validate(_ body: JSON) async throws -> TestResponse {
        try await server.request("POST", "/validate_purchase", json: body, headers: ["X-Parse-REST-API-Key": "rest"])
    }

    private let receipt: JSON = ["__type": "Bytes", "base64": .string(Data("receipt".utf8).base64EncodedString())]

    // spec: PurchaseValidation.spec.js: should bypass appstore validation
    @Test func bypassingTheAppStoreAnswersTheDownload() async throws {
        let name = try await createProduct()
        let answer = try await validate(["productIdentifier": "a-product", "receipt": receipt, "bypassAppStoreValidation": true])
        #expect(answer.status == 200 && answer.json["__type"] == "File" && answer.json["name"] == .string(name), "\(answer.text)")
        let url = try #require(answer.json["url"]?.stringValue)
        #expect(url.hasPrefix(server.baseURL + "/files/"), "\(url)")
        #expect(try await server.request("GET", String(url.dropFirst(server.baseURL.count))).text == "download_file")
        #expect(production.requests.isEmpty && sandbox.requests.isEmpty)
    }

    // spec: PurchaseValidation.spec.js: should fail for missing receipt
    // spec: PurchaseValidation.spec.js: should fail for missing product identifier
    @Test func aMissingReceiptOrProductIdentifierIs107() async throws {
        let refused: JSON = ["code": 107, "error": "missing receipt or productIdentifier"]
        for body: JSON in [["productIdentifier": "a-product", "bypassAppStoreValidation": true],
                           ["receipt": receipt, "bypassAppStoreValidation": true], ["receipt": "", "productIdentifier": "a-product"]] {
            let answer = try await validate(body)
            #expect(answer.status == 400 && answer.json == refused, "\(body): \(answer.text)")
        }
    }

    // spec: PurchaseValidation.spec.js: should bypass appstore validation and not find product
    @Test func anUnknownProductIs101() async throws {
        _ = try await createProduct()
        let answer = try await validate(["productIdentifier": "another-product", "receipt": receipt, "bypassAppStoreValidation": true])
        #expect(answer.status == 404 && answer.json == ["code": 101, "error": "Object not found."], "\(answer.text)")
    }

    // spec: PurchaseValidation.spec.js: should fail at appstore validation
    @Test func appleRefusingTheReceiptIsAnsweredWithItsStatus() async throws {
        _ = try await createProduct()
        let answer = try await validate(["productIdentifier": "a-product", "receipt": receipt])
        #expect(answer.status == 200, "\(answer.text)")
        #expect(answer.json == ["status": 21002, "error": "The data in the receipt-data property was malformed or missing."], "\(answer.text)")
        // Apple got the receipt as base64 text; 21002 is final, so the sandbox was not asked.
        let sent = try JSONParser.parse(Array(try #require(production.requests.last).body))
        #expect(sent == ["receipt-data": .string(Data("receipt".utf8).base64EncodedString())])
        #expect(sandbox.requests.isEmpty)
    }

    @Test func aTestEnvironmentReceiptIsCheckedInTheSandbox() async throws {
        let name = try await createProduct()
        production.reply(with: #"{"status":21007}"#)
        let valid = try await validate(["productIdentifier": "a-product", "receipt": "cmVjZWlwdA=="])
        #expect(valid.status == 200 && valid.json["name"] == .string(name), "\(valid.text)")
        #expect(production.requests.count == 1 && sandbox.requests.count == 1)
        sandbox.reply(with: "<html>not json</html>")  // No usable answer: Parse's NaN status, sent as null.
        let broken = try await validate(["productIdentifier": "a-product", "receipt": "cmVjZWlwdA=="])
        #expect(broken.json == ["status": .null, "error": "unknown error."], "\(broken.text)")
    }

    /// Apple's check waits on another server: the connection is parked, so other requests are answered meanwhile, and a
    /// batch (one write for all its items) may not hold it.
    @Test func purchaseChecksHoldNeitherTheHTTPThreadsNorABatch() async throws {
        _ = try await createProduct()
        production.holdReplies()
        defer { production.releaseReplies() }
        async let checks = withThrowingTaskGroup(of: TestResponse.self) { group in
            // As many as the App Store threads (and more than the test server's HTTP threads); the test's client keeps
            // more connections than that to the server.
            for _ in 0..<4 { group.addTask { try await validate(["productIdentifier": "a-product", "receipt": "cmVjZWlwdA=="]) } }
            return try await group.reduce(into: [TestResponse]()) { $0.append($1) }
        }
        for _ in 0..<200 where production.requests.count < 4 { try await Task.sleep(for: .milliseconds(50)) }
        #expect(production.requests.count == 4)
        // While Apple has not answered, the server answers others (on the HTTP threads, all of them would wait).
        let answered = try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask { try await server.request("GET", "/health").status == 200 }
            group.addTask {
                try await Task.sleep(for: .seconds(10))  // Under `AppStore.timeout`, which would free held threads.
                production.releaseReplies()  // So that the request above can end too.
                return false
            }
            defer { group.cancelAll() }
            return try await group.next() ?? false
        }
        #expect(answered, "a request waited for Apple's answer to others")
        production.releaseReplies()
        // Apple's refusal, or (on a machine so loaded that the hold outlasted `AppStore.timeout`) no answer in time.
        #expect(try await checks.allSatisfy { $0.status == 200 && [21002, .null].contains($0.json["status"]) })
        let batch = try await server.request("POST", "/batch", json: ["requests": [["method": "POST", "path": "/parse/validate_purchase",
                                                                                       "body": ["productIdentifier": "a-product", "receipt": "x"]]]])
        #expect(batch.status == 400 && batch.json == ["code": 107, "error": "cannot route POST /validate_purchase"], "\(batch.text)")
    }

    // spec: PurchaseValidation.spec.js: should not create a _Product
    // spec: PurchaseValidation.spec.js: should be able to update a _Product
    // spec: PurchaseValidation.spec.js: should not be able to remove a require key in a _Product
    @Test func productsNeedTheirFieldsAndNameTheirDownload() async throws {
        let empty = try await server.request("POST", "/classes/_Product", json: [:])
        #expect(empty.status == 400 && empty.json == ["code": 111, "error": "productIdentifier is required."], "\(empty.text)")
        let zeroOrder = try await server.request("POST", "/classes/_Product", json: [
            "productIdentifier": "p", "icon": ["__type": "File", "name": "i.png"], "order": 0, "title": "t", "subtitle": "s"])
        #expect(zeroOrder.json == ["code": 111, "error": "order is required."], "\(zeroOrder.text)")
        let name = try await createProduct()
        let product = try #require(try await server.results("_Product", [:]).first)
        #expect(product["downloadName"] == .string(name), "\(product)")
        let id = try #require(product["objectId"]?.stringValue)
        let retitled = try await server.request("PUT", "/classes/_Product/\(id)", json: ["title": "a new title"])
        #expect(retitled.status == 200, "\(retitled.text)")
        let fetched = try await server.fetch("_Product", id)
        #expect(fetched["title"] == "a new title" && fetched["downloadName"] == .string(name), "\(fetched)")
        let untitled = try await server.request("PUT", "/classes/_Product/\(id)", json: ["title": ["__op": "Delete"]])
        #expect(untitled.status == 400 && untitled.json == ["code": 111, "error": "title is required."], "\(untitled.text)")
        let schema = try await server.request("GET", "/schemas/_Product", master: true)
        #expect(schema.json["fields"]?["downloadName"] == ["type": "String"] && schema.json["fields"]?["icon"] == ["type": "File"], "\(schema.text)")
    }

    /// Parse's `SecurityRouter` with `security.enableCheck` off, its default.
    @Test func theSecurityCheckIsOffAndTheMasterKeysToAsk() async throws {
        let client = try await server.request("GET", "/security")
        #expect(client.status == 403 && client.json == ["error": "unauthorized: master key is required"], "\(client.text)")
        let master = try await server.request("GET", "/security", master: true)
        #expect(master.status == 409, "\(master.text)")
        #expect(master.json == ["error": "Enable Parse Server option `security.enableCheck` to run security check."])
    }
}
