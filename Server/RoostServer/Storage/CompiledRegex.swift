import CPCRE2

/// A `$regex` pattern compiled by PCRE2, the library MongoDB matches `$regex` with (so Parse's patterns
/// mean the same here), JIT-compiled where the CPU allows. One match may take at most `matchLimit`
/// steps: a pattern that backtracks badly on some value gives up on it (`tooExpensive`) instead of
/// holding its thread for minutes. Not `Sendable`: its match data is scratch space for one thread.
final class CompiledRegex {
    enum Outcome { case match, noMatch, tooExpensive }

    /// PCRE2's default is 10,000,000 steps, seconds on a hostile pattern; 1,000,000 is a few
    /// milliseconds with the JIT, far more than a sane pattern needs on a stored string.
    static let matchLimit: UInt32 = 1_000_000
    /// Nested backtracking frames, bounding the heap one match may take.
    static let depthLimit: UInt32 = 10_000
    /// MongoDB refuses longer patterns.
    static let maximumPatternBytes = 32_764

    private let code: OpaquePointer
    private let matchData: OpaquePointer
    private let matchContext: OpaquePointer

    /// nil when PCRE2 does not accept the pattern. `options` holds Parse's `$options` letters (i m s x).
    init?(pattern: String, options: String) {
        guard let compiled = Self.compile(pattern, options) else { return nil }
        guard let data = pcre2_match_data_create_from_pattern_8(compiled, nil) else {
            pcre2_code_free_8(compiled)
            return nil
        }
        guard let context = pcre2_match_context_create_8(nil) else {
            pcre2_match_data_free_8(data)
            pcre2_code_free_8(compiled)
            return nil
        }
        _ = pcre2_jit_compile_8(compiled, UInt32(PCRE2_JIT_COMPLETE))  // Without the JIT it still works, slower.
        pcre2_set_match_limit_8(context, Self.matchLimit)
        pcre2_set_depth_limit_8(context, Self.depthLimit)
        code = compiled
        matchData = data
        matchContext = context
    }

    /// Whether PCRE2 accepts the pattern, for the query compiler: compiled without the JIT and without match
    /// data (each reader compiles and caches its own copy to run it).
    static func accepts(pattern: String, options: String) -> Bool {
        guard let compiled = compile(pattern, options) else { return false }
        pcre2_code_free_8(compiled)
        return true
    }

    /// Why PCRE2 refuses the pattern (its message and the offset it stopped at), nil when it accepts it: for errors
    /// that name what to fix in a configured pattern.
    static func refusal(of pattern: String, options: String = "") -> String? {
        var errorCode: Int32 = 0
        var errorOffset = 0
        if let compiled = compile(pattern, options, errorCode: &errorCode, errorOffset: &errorOffset) {
            pcre2_code_free_8(compiled)
            return nil
        }
        var message = [UInt8](repeating: 0, count: 256)
        let length = pcre2_get_error_message_8(errorCode, &message, message.count)
        let text = length > 0 ? String(decoding: message.prefix(Int(length)), as: UTF8.self) : "error \(errorCode)"
        return "\(text) at offset \(errorOffset)"
    }

    private static func compile(_ pattern: String, _ options: String) -> OpaquePointer? {
        var errorCode: Int32 = 0
        var errorOffset = 0
        return compile(pattern, options, errorCode: &errorCode, errorOffset: &errorOffset)
    }

    private static func compile(_ pattern: String, _ options: String, errorCode: inout Int32, errorOffset: inout Int) -> OpaquePointer? {
        var flags = UInt32(PCRE2_UTF) | UInt32(PCRE2_MATCH_INVALID_UTF)
        if options.contains("i") { flags |= UInt32(PCRE2_CASELESS) }
        if options.contains("m") { flags |= UInt32(PCRE2_MULTILINE) }
        if options.contains("s") { flags |= UInt32(PCRE2_DOTALL) }
        if options.contains("x") { flags |= UInt32(PCRE2_EXTENDED) }
        var pattern = pattern
        return pattern.withUTF8 { bytes in
            pcre2_compile_8(bytes.baseAddress ?? UnsafePointer(bitPattern: 1), bytes.count, flags, &errorCode, &errorOffset, nil)
        }
    }

    deinit {
        pcre2_match_context_free_8(matchContext)
        pcre2_match_data_free_8(matchData)
        pcre2_code_free_8(code)
    }

    /// Whether the pattern matches anywhere in `subject` (UTF-8 bytes).
    func matches(_ subject: UnsafeBufferPointer<UInt8>) -> Outcome {
        let status = pcre2_match_8(code, subject.baseAddress ?? UnsafePointer(bitPattern: 1), subject.count, 0, 0, matchData, matchContext)
        if status >= 0 { return .match }
        switch status {
        case PCRE2_ERROR_MATCHLIMIT, PCRE2_ERROR_DEPTHLIMIT, PCRE2_ERROR_HEAPLIMIT, PCRE2_ERROR_JIT_STACKLIMIT:
            return .tooExpensive
        default:
            return .noMatch
        }
    }
}
