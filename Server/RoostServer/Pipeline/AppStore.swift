import Foundation
import RoostCore

/// Apple's receipt check for `POST /validate_purchase` (`ProductRoutes`), as Parse Server calls it: the receipt sent to
/// `verifyReceipt` as `{"receipt-data": ...}`, its `status` 0 meaning valid.
enum AppStore {
    static let productionURL = urls.production
    static let sandboxURL = urls.sandbox
    /// How long one check may take: it runs on `RoostServer`'s App Store threads, its connection parked meanwhile.
    static let timeout: TimeInterval = 15

    /// Apple's endpoints, or two others for tests (`ROOST_TEST_APP_STORE_URLS`: production and sandbox, space-separated).
    private static let urls: (production: String, sandbox: String) = {
        let given = ProcessInfo.processInfo.environment["ROOST_TEST_APP_STORE_URLS"]?.split(separator: " ").map(String.init) ?? []
        return given.count == 2 ? (given[0], given[1])
            : ("https://buy.itunes.apple.com/verifyReceipt", "https://sandbox.itunes.apple.com/verifyReceipt")
    }()

    /// Whether a request may skip the check with `bypassAppStoreValidation` (Parse allows it when `TESTING=1`; Roost
    /// only under `ROOST_TEST_BYPASS_APP_STORE=1`, a name nobody sets by accident).
    static let bypassesValidation = ProcessInfo.processInfo.environment["ROOST_TEST_BYPASS_APP_STORE"] == "1"

    /// Apple's `status` for the receipt, nil when there was no usable answer (Parse's `parseInt` of a missing one: NaN).
    static func verify(_ receipt: JSON, at url: String) -> Int? {
        let body = JSON.object(["receipt-data": receipt]).encoded()
        guard let reply = JSONPost.post(Array(body), to: url, header: nil, within: timeout, maxReplyBytes: 1 << 20),
            let answer = try? JSONParser.parse(reply.body) else { return nil }
        switch answer["status"] {
        case .number(let number)?: return number.isFinite && abs(number) < 1e9 ? Int(number) : nil
        case .string(let text)?: return Int(text.prefix { $0.isNumber || $0 == "-" })
        default: return nil
        }
    }

    /// Parse's `APP_STORE_ERRORS`.
    static func message(for status: Int?) -> String {
        switch status {
        case 21000?: "The App Store could not read the JSON object you provided."
        case 21002?: "The data in the receipt-data property was malformed or missing."
        case 21003?: "The receipt could not be authenticated."
        case 21004?: "The shared secret you provided does not match the shared secret on file for your account."
        case 21005?: "The receipt server is not currently available."
        case 21006?: "This receipt is valid but the subscription has expired."
        case 21007?: "This receipt is from the test environment, but it was sent to the production environment for verification. Send it to the test environment instead."
        case 21008?: "This receipt is from the production environment, but it was sent to the test environment for verification. Send it to the production environment instead."
        default: "unknown error."
        }
    }
}
