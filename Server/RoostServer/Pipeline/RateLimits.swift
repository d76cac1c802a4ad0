import Foundation
import RoostCore
import Synchronization

/// Parse Server's `rateLimit` option: each rule lets `requestCount` requests per `requestTimeWindow` milliseconds
/// through to the paths it names, per client address (or per session, per user, or for everyone: `zone`); the next
/// ones are answered 429 `{code: 100, error: <errorResponseMessage>}` until the window ends.
///
/// As Parse's: the master key is not counted unless `includeMasterKey`; requests from 127.0.0.1 are not counted
/// unless `includeInternalRequests` (behind a proxy on the same machine every request comes from there);
/// `requestMethods` is a list of methods or a regular expression; counts are kept in memory, per node.
/// Unlike Parse's, a rule matches the request's path without its query string (Parse matches the whole URL, so
/// `/classes/Test` never limited `GET /classes/Test?limit=1`).
public struct RateLimits: Sendable {
    let rules: [RateLimitRule]

    public static let none = RateLimits(rules: [])

    public var isEmpty: Bool { rules.isEmpty }

    public struct Invalid: Error, CustomStringConvertible {
        public let description: String
    }

    /// The option's JSON (an object or an array of objects), checked as Parse's `Config.validateRateLimit` checks it,
    /// with its messages.
    public init(json: String) throws(Invalid) {
        guard let value = try? JSONParser.parse(json) else { throw Invalid(description: "not valid JSON") }
        let entries: [JSON]
        switch value {
        case .array(let list): entries = list
        case .object: entries = [value]
        default: throw Invalid(description: "rateLimit must be an array or object")
        }
        rules = try entries.map { entry throws(Invalid) in try RateLimitRule(entry) }
    }

    private init(rules: [RateLimitRule]) { self.rules = rules }

    /// The caller of one request, as the rules tell callers apart.
    struct Caller {
        let address: String
        let isMaster: Bool
        let sessionToken: String?
        /// The user of `sessionToken`, looked up only for a rule whose zone is `user`.
        let userId: () -> String?
    }

    /// Counts the request against every rule it falls under.
    /// - Throws: `APIError.rateLimited` with the rule's message when one of them is over its count.
    func check(method: String, path: String, caller: Caller, now: UInt64 = DispatchTime.now().uptimeNanoseconds) throws {
        for rule in rules where rule.applies(method: method, path: path, caller: caller) {
            try rule.count(key: rule.key(for: caller), now: now)
        }
    }
}

final class RateLimitRule: Sendable {
    enum Zone: String, CaseIterable { case global, session, user, ip }

    let path: RateLimitPath
    let windowNanoseconds: UInt64
    let requestCount: Int
    let message: String
    let methods: Methods?
    let includeMasterKey: Bool
    let includeInternalRequests: Bool
    let zone: Zone
    private let windows = Mutex<[String: Window]>([:])

    enum Methods: Sendable {
        case list(Set<String>)
        /// A regular expression tested anywhere in the method, as JavaScript's `RegExp.test`.
        case pattern(String)
    }

    private struct Window {
        var count: Int
        let endsAt: UInt64
    }

    /// The most callers one rule keeps counts for: past it, the counts whose window ended are dropped, and if none
    /// has, all of them (a flood of new addresses costs memory no further).
    static let maximumCallers = 100_000

    private static let options: Set<String> = ["requestPath", "requestTimeWindow", "requestCount", "errorResponseMessage",
                                               "requestMethods", "includeMasterKey", "includeInternalRequests", "redisUrl", "zone"]

    init(_ entry: JSON) throws(RateLimits.Invalid) {
        func invalid(_ message: String) -> RateLimits.Invalid { RateLimits.Invalid(description: message) }
        guard case .object(let members) = entry else { throw invalid("rateLimit must be an array of objects") }
        guard let requestPath = members["requestPath"], requestPath != .null else { throw invalid("rateLimit.requestPath must be defined") }
        guard let pathText = requestPath.stringValue else { throw invalid("rateLimit.requestPath must be a string") }
        guard let window = members["requestTimeWindow"], window != .null else { throw invalid("rateLimit.requestTimeWindow must be defined") }
        guard let milliseconds = window.numberValue else { throw invalid("rateLimit.requestTimeWindow must be a number") }
        if let flag = members["includeInternalRequests"], flag.isJavaScriptTruthy, flag.boolValue == nil {
            throw invalid("rateLimit.includeInternalRequests must be a boolean")
        }
        guard let count = members["requestCount"], count != .null else { throw invalid("rateLimit.requestCount must be defined") }
        guard let requestCount = count.numberValue else { throw invalid("rateLimit.requestCount must be a number") }
        if let message = members["errorResponseMessage"], message.isJavaScriptTruthy, message.stringValue == nil {
            throw invalid("rateLimit.errorResponseMessage must be a string")
        }
        let zoneText = members["zone"]?.stringValue ?? ""
        guard zoneText.isEmpty || Zone(rawValue: zoneText) != nil else {
            throw invalid("rateLimit.zone must be one of global, session, user, or ip")
        }
        if let unknown = members.keys.sorted().first(where: { !Self.options.contains($0) }) {
            throw invalid("Invalid rate limit option \"\(unknown)\"")
        }
        if members["redisUrl"]?.isJavaScriptTruthy == true {
            throw invalid("rateLimit.redisUrl is not supported: counts are kept in each node's memory")
        }
        guard milliseconds.isFinite, milliseconds >= 0, milliseconds < 1e12 else {
            throw invalid("rateLimit.requestTimeWindow must be a number of milliseconds, at least 0")
        }
        do {
            path = try RateLimitPath(pathText)
        } catch {
            throw invalid("rateLimit.requestPath \(pathText): \(error.description)")
        }
        windowNanoseconds = UInt64(milliseconds * 1_000_000)
        self.requestCount = requestCount.isFinite ? Int(max(0, min(requestCount, Double(Int32.max)))) : 0
        message = members["errorResponseMessage"]?.stringValue ?? "Too many requests."
        switch members["requestMethods"] {
        case .array(let list)?: methods = .list(Set(list.compactMap(\.stringValue)))
        case .string(let pattern)?:
            guard CompiledRegex(pattern: pattern, options: "") != nil else {
                throw invalid("rateLimit.requestMethods \(pattern) is not a regular expression")
            }
            methods = .pattern(pattern)
        default: methods = nil
        }
        includeMasterKey = members["includeMasterKey"]?.isJavaScriptTruthy ?? false
        includeInternalRequests = members["includeInternalRequests"]?.boolValue ?? false
        zone = Zone(rawValue: zoneText) ?? .ip
    }

    /// Parse's `skip`, in its order: internal requests, then (unless the master key counts) methods and the master key.
    func applies(method: String, path: String, caller: RateLimits.Caller) -> Bool {
        guard self.path.matches(path) else { return false }
        if !includeInternalRequests, caller.address == "127.0.0.1" || caller.address == "::ffff:127.0.0.1" { return false }
        if includeMasterKey { return true }
        switch methods {
        case .list(let names)?: if !names.contains(method) { return false }
        case .pattern(let pattern)?:
            let found = method.utf8.withContiguousStorageIfAvailable { CompiledRegex(pattern: pattern, options: "")?.matches($0) }
            if found != .match { return false }
        case nil: break
        }
        return !caller.isMaster
    }

    /// Parse's `keyGenerator`: a session or user zone falls back to the address for a request without a session.
    func key(for caller: RateLimits.Caller) -> String {
        switch zone {
        case .global: return "global"
        case .session: if let token = caller.sessionToken { return "session:" + token }
        case .user: if caller.sessionToken != nil, let id = caller.userId() { return "user:" + id }
        case .ip: break
        }
        return "ip:" + caller.address
    }

    /// The callers whose counts are kept (bounded by `maximumCallers`).
    var trackedCallers: Int { windows.withLock { $0.count } }

    func count(key: String, now: UInt64) throws {
        let allowed = windows.withLock { windows -> Bool in
            if var window = windows[key], window.endsAt > now {
                window.count += 1
                windows[key] = window
                return window.count <= requestCount
            }
            if windows.count >= Self.maximumCallers {
                windows = windows.filter { $0.value.endsAt > now }
                if windows.count >= Self.maximumCallers { windows.removeAll(keepingCapacity: true) }
            }
            windows[key] = Window(count: 1, endsAt: now + windowNanoseconds)
            return 1 <= requestCount
        }
        if !allowed { throw APIError.rateLimited(message: message) }
    }
}

/// A rule's `requestPath` as Parse's `path-to-regexp` reads the usual ones: literal segments, `*` (anything, slashes
/// included), `:name` (one segment); matched whole, ignoring case and one trailing slash.
struct RateLimitPath: Sendable {
    private enum Part: Sendable, Equatable { case literal([UInt8]), anything, segment }
    private let parts: [Part]

    struct Unsupported: Error, CustomStringConvertible {
        let description: String
    }

    init(_ text: String) throws(Unsupported) {
        if let special = text.first(where: { "()?+[]{}\\".contains($0) }) {
            throw Unsupported(description: "only literal paths, * and :name are supported (found \(special))")
        }
        var parts: [Part] = []
        var literal: [UInt8] = []
        var bytes = text.lowercased().utf8[...]
        while let byte = bytes.popFirst() {
            if byte == UInt8(ascii: "*") || byte == UInt8(ascii: ":") {
                if !literal.isEmpty { parts.append(.literal(literal)) }
                literal = []
                if byte == UInt8(ascii: ":") {
                    while let next = bytes.first, next != UInt8(ascii: "/") { bytes.removeFirst() }
                    parts.append(.segment)
                } else if parts.last != .anything {
                    parts.append(.anything)
                }
            } else {
                literal.append(byte)
            }
        }
        if !literal.isEmpty { parts.append(.literal(literal)) }
        self.parts = parts
    }

    /// Whether `path` (relative to the mount, without a query string) is one this rule names. Works back from the
    /// last part, one pass over the path per part: linear in the path whatever the pattern (no backtracking).
    func matches(_ path: String) -> Bool {
        var subject = Array(path.lowercased().utf8)
        if subject.count > 1, subject.last == UInt8(ascii: "/") { subject.removeLast() }
        var parts = self.parts
        if case .literal(var last)? = parts.last, last.count > 1, last.last == UInt8(ascii: "/") {
            last.removeLast()
            parts[parts.count - 1] = .literal(last)
        }
        let end = subject.count
        // after[i]: whether the parts after the current one match subject[i...].
        var after = [Bool](repeating: false, count: end + 1)
        after[end] = true
        var here = after
        for part in parts.reversed() {
            here[end] = part == .anything && after[end]
            for start in stride(from: end - 1, through: 0, by: -1) {
                switch part {
                case .literal(let bytes):
                    here[start] = start + bytes.count <= end && after[start + bytes.count]
                        && subject[start..<start + bytes.count].elementsEqual(bytes)
                case .segment:
                    here[start] = subject[start] != UInt8(ascii: "/") && (after[start + 1] || here[start + 1])
                case .anything:
                    here[start] = after[start] || here[start + 1]
                }
            }
            swap(&after, &here)
        }
        return after[0]
    }
}
