/// A Parse error code, as sent in `{"code": n, "error": "..."}`.
///
/// Unknown codes decode too (`ParseErrorCode(rawValue: 9999)`), so clients never fail on a newer server.
public struct ParseErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    public static let otherCause = ParseErrorCode(rawValue: -1)
    public static let internalServerError = ParseErrorCode(rawValue: 1)
    public static let connectionFailed = ParseErrorCode(rawValue: 100)
    public static let objectNotFound = ParseErrorCode(rawValue: 101)
    public static let invalidQuery = ParseErrorCode(rawValue: 102)
    public static let invalidClassName = ParseErrorCode(rawValue: 103)
    public static let missingObjectId = ParseErrorCode(rawValue: 104)
    public static let invalidKeyName = ParseErrorCode(rawValue: 105)
    public static let invalidPointer = ParseErrorCode(rawValue: 106)
    public static let invalidJSON = ParseErrorCode(rawValue: 107)
    public static let commandUnavailable = ParseErrorCode(rawValue: 108)
    public static let incorrectType = ParseErrorCode(rawValue: 111)
    public static let operationForbidden = ParseErrorCode(rawValue: 119)
    public static let invalidNestedKey = ParseErrorCode(rawValue: 121)
    public static let invalidFileName = ParseErrorCode(rawValue: 122)
    public static let invalidACL = ParseErrorCode(rawValue: 123)
    public static let timeout = ParseErrorCode(rawValue: 124)
    public static let invalidEmailAddress = ParseErrorCode(rawValue: 125)
    public static let fileSaveError = ParseErrorCode(rawValue: 130)
    /// A device token shared by several installations, saved without an installationId (no SDK names 132).
    public static let installationIdRequired = ParseErrorCode(rawValue: 132)
    public static let missingRequiredField = ParseErrorCode(rawValue: 135)
    public static let invalidInstallationId = ParseErrorCode(rawValue: 136)
    public static let duplicateValue = ParseErrorCode(rawValue: 137)
    public static let pushMisconfigured = ParseErrorCode(rawValue: 115)
    public static let scriptFailed = ParseErrorCode(rawValue: 141)
    public static let validationError = ParseErrorCode(rawValue: 142)
    public static let webhookError = ParseErrorCode(rawValue: 143)
    public static let fileDeleteError = ParseErrorCode(rawValue: 153)
    public static let duplicateRequest = ParseErrorCode(rawValue: 159)
    public static let invalidValue = ParseErrorCode(rawValue: 162)
    public static let usernameMissing = ParseErrorCode(rawValue: 200)
    public static let passwordMissing = ParseErrorCode(rawValue: 201)
    public static let usernameTaken = ParseErrorCode(rawValue: 202)
    public static let emailTaken = ParseErrorCode(rawValue: 203)
    public static let emailMissing = ParseErrorCode(rawValue: 204)
    public static let emailNotFound = ParseErrorCode(rawValue: 205)
    public static let sessionMissing = ParseErrorCode(rawValue: 206)
    public static let accountAlreadyLinked = ParseErrorCode(rawValue: 208)
    public static let invalidSessionToken = ParseErrorCode(rawValue: 209)
    public static let unsupportedService = ParseErrorCode(rawValue: 252)
    public static let invalidSchemaOperation = ParseErrorCode(rawValue: 255)

    public var description: String { String(rawValue) }
}

/// An error with a Parse code and a message safe to show to the client.
public struct ParseError: Error, Equatable, Sendable, CustomStringConvertible {
    public let code: ParseErrorCode
    public let message: String

    public init(_ code: ParseErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The wire form: `{"code": n, "error": "message"}`.
    /// `{"code": n, "error": message}`; only `{"code": n}` for an empty message, as Parse Server answers the
    /// errors it throws without one (`new Parse.Error(code)`).
    public var json: JSON {
        var members: [String: JSON] = ["code": .number(Double(code.rawValue))]
        if !message.isEmpty { members["error"] = .string(message) }
        return .object(members)
    }

    public var description: String { "ParseError(\(code.rawValue)): \(message)" }
}
