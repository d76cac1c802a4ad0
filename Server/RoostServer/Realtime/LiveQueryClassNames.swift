import Synchronization

/// Which classes LiveQuery logs and publishes (`--live-query-classes`), decided as parse-server's
/// `liveQuery.classNames` are (`LiveQueryController.hasLiveQuery`): each entry is a regular expression that a class
/// name must match as `new RegExp('^' + entry + '$')` matches it, so `Test.*` covers `TestObject` and a plain name
/// only itself. The entry is spliced between the anchors as Parse splices it, not grouped: `A|B` is `^A|B$`, which
/// also matches `Apple`; kept so that a Parse configuration means the same here. Matched by PCRE2 (`CompiledRegex`),
/// which reads what a class name pattern needs (classes, repeats, alternation, groups) as JavaScript does.
public final class LiveQueryClassNames: Sendable {
    /// An entry PCRE2 refuses, with its reason.
    public struct InvalidPattern: Error, CustomStringConvertible {
        public let pattern: String
        public let reason: String
        public var description: String { "'\(pattern)' is not a regular expression (\(reason))" }
    }

    /// The entries as configured.
    public let patterns: [String]
    /// The compiled entries (scratch space for one match at a time, hence the lock) and the answers so far.
    private let state: Mutex<State>

    private struct State {
        var regexes: [CompiledRegex]
        var answers: [String: Bool] = [:]
    }

    /// The most answers kept; past it they start over (subscribers can name any class).
    private static let maxAnswers = 4_096

    public init(_ patterns: [String]) throws(InvalidPattern) {
        var regexes: [CompiledRegex] = []
        for pattern in patterns {
            let anchored = "^" + pattern + "$"
            guard let regex = CompiledRegex(pattern: anchored, options: "") else {
                // The entry's own reason first, so the offset points into what the user wrote.
                let reason = CompiledRegex.refusal(of: pattern) ?? CompiledRegex.refusal(of: anchored) ?? "refused by PCRE2"
                throw InvalidPattern(pattern: pattern, reason: reason)
            }
            regexes.append(regex)
        }
        self.patterns = patterns
        state = Mutex(State(regexes: regexes))
    }

    /// Whether `className`'s changes are live. The writer asks at every object write: each class is matched once.
    public func contains(_ className: String) -> Bool {
        state.withLock { state in
            if let known = state.answers[className] { return known }
            var name = className
            let live = name.withUTF8 { bytes in state.regexes.contains { $0.matches(bytes) == .match } }
            if state.answers.count >= Self.maxAnswers { state.answers = [:] }
            state.answers[className] = live
            return live
        }
    }
}
