import Foundation
import RoostCore

/// `/classes/_Product` and `POST /validate_purchase`: Parse Server's in-app purchase downloads (`IAPValidationRouter`).
/// A `_Product` names an App Store product and the file it unlocks; `validate_purchase` has Apple check a receipt and
/// answers the product's `download` file, or Apple's refusal as `{status, error}` (HTTP 200, as Parse answers it).
///
/// Through `/classes/_Product` it is an ordinary class that starts with Parse's fields, five of them required on create
/// (111 `<field> is required.`, JavaScript's falsy values counting as missing) and not deletable on update; a save that
/// sets `download` sets `downloadName` to the file's name.
enum ProductRoutes {
    static let className = "_Product"
    static let defaultFields: [String: FieldType] = [
        "productIdentifier": .string, "download": .file, "downloadName": .string, "icon": .file, "order": .number,
        "title": .string, "subtitle": .string,
    ]
    /// Parse's `requiredColumns.write._Product`, in its order (the first missing one is named).
    static let requiredFields = ["productIdentifier", "icon", "order", "title", "subtitle"]

    static func register(in router: inout Router) {
        let base = "classes/" + className
        router.add("POST", base) { request, context, _ in
            try ClassRoutes.ensureSchema(className, context: context) { db in
                try SchemaStore.load(className, in: db) ?? SchemaStore.create(className, fields: defaultFields, classLevelPermissions: nil, in: db)
            }
            return try ObjectWriter.create(className, body: namingDownload(try request.bodyObject()), context: context, rules: Rules())
        }
        router.add("GET", base) { request, context, _ in
            try ClassRoutes.find(className, request: request, context: context, isSystemRoute: true)
        }
        router.add("GET", base + "/:objectId") { request, context, parameters in
            try ClassRoutes.get(className, parameters["objectId"], request: request, context: context, isSystemRoute: true)
        }
        router.add("PUT", base + "/:objectId") { request, context, parameters in
            try ObjectWriter.update(className, objectId: parameters["objectId"], body: namingDownload(try request.bodyObject()),
                                    context: context, rules: Rules())
        }
        router.add("DELETE", base + "/:objectId") { _, context, parameters in
            try ClassRoutes.delete(className, parameters["objectId"], context: context, isSystemRoute: true)
        }
        router.add("POST", "validate_purchase") { request, context, _ in
            try validatePurchase(try request.bodyObject(), context: context)
        }
    }

    /// Whether `request` asks Apple to check a receipt (`RoostServer` runs it off the HTTP threads; a batch may not hold it).
    static func validatesPurchase(_ request: APIRequest) -> Bool {
        request.method == "POST" && request.segments == ["validate_purchase"]
    }

    /// Parse's `RestWrite`: `downloadName` follows the name of the `download` file a save sets.
    private static func namingDownload(_ body: [String: JSON]) -> [String: JSON] {
        guard case .object(let file)? = body["download"], file["__type"] == .string("File"), let name = file["name"] else { return body }
        var body = body
        body["downloadName"] = name
        return body
    }

    /// Parse's `SchemaController.validateRequiredColumns` for `_Product`.
    struct Rules: SaveRules {
        func check(_ changes: ObjectWriter.Changes, existing: StoredObject?) throws {
            for field in requiredFields {
                let missing: Bool
                switch changes.operations[field] {
                case .set(let value)?: missing = existing == nil && !value.isJavaScriptTruthy
                case .delete?: missing = true
                case nil: missing = existing == nil
                default: missing = false  // An operation (Increment...) is an object: truthy to Parse.
                }
                if missing { throw ParseError(.incorrectType, "\(field) is required.") }
            }
        }
    }

    /// `POST /validate_purchase`: `{receipt, productIdentifier}`, the receipt as base64 text or `Bytes`.
    static func validatePurchase(_ body: [String: JSON], context: RequestContext) throws -> APIResponse {
        guard var receipt = body["receipt"], receipt.isJavaScriptTruthy, let productIdentifier = body["productIdentifier"],
            productIdentifier.isJavaScriptTruthy
        else { throw ParseError(.invalidJSON, "missing receipt or productIdentifier") }
        if case .object(let bytes) = receipt, bytes["__type"] == .string("Bytes") { receipt = bytes["base64"] ?? .null }
        if !(AppStore.bypassesValidation && body["bypassAppStoreValidation"]?.isJavaScriptTruthy == true) {
            // Apple's answer for a receipt from its test environment sends it there (Parse's order).
            var status = AppStore.verify(receipt, at: AppStore.productionURL)
            if status == 21007 { status = AppStore.verify(receipt, at: AppStore.sandboxURL) }
            if status != 0 { return APIResponse(body: ["status": status.map { .number(Double($0)) } ?? .null, "error": .string(AppStore.message(for: status))]) }
        }
        return APIResponse(body: try download(of: productIdentifier, context: context))
    }

    /// The `download` file of the one product with this identifier that the caller may read; 101 if there is not one.
    private static func download(of productIdentifier: JSON, context: RequestContext) throws -> JSON {
        let query = APIRequest(method: "GET", segments: ["classes", className],
                               body: .object(["where": .object(["productIdentifier": productIdentifier])]))
        let found = try ClassRoutes.find(className, request: query, context: context, isSystemRoute: true)
        guard case .array(let results)? = found.body["results"], results.count == 1 else { throw ObjectWriter.objectNotFound }
        var product = results[0]
        if case .encodedFragment(let bytes) = product { product = try JSONParser.parse(bytes) }
        return product["download"] ?? .object([:])
    }
}
