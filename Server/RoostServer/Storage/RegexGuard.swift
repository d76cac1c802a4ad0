import RoostCore

/// Checks `$regex` patterns before they run. The matcher backtracks, so a pattern with a quantified
/// group that itself contains a quantifier (`(a+)+`, `(a|a)*`) could take exponential time on a
/// hostile value, and two unbounded repetitions (`a*a*b`) polynomial time; such patterns,
/// back-references and overlong patterns are refused with 102. One `*`, `+` or `{n,}` is allowed.
enum RegexGuard {
    static let maximumLength = 1000

    static func check(_ pattern: String) throws {
        guard pattern.utf8.count <= maximumLength else {
            throw ParseError(.invalidQuery, "bad regex: longer than \(maximumLength) bytes")
        }
        // Per open group: does it contain a quantifier or an alternation?
        var groups: [Bool] = []
        var lastGroupWasRisky = false
        var unboundedRepeats = 0
        var characters = Array(pattern)
        var index = 0
        var inClass = false
        while index < characters.count {
            let character = characters[index]
            defer { index += 1 }
            if character == "\\" {
                if index + 1 < characters.count {
                    let next = characters[index + 1]
                    if next.isNumber, next != "0", !inClass { throw unsafe("back-references are not supported") }
                    if next == "Q" {  // \Q...\E quotes literally.
                        if let end = (index + 2..<characters.count).first(where: { characters[$0] == "\\" && $0 + 1 < characters.count && characters[$0 + 1] == "E" }) {
                            index = end + 1
                        } else {
                            index = characters.count
                        }
                        continue
                    }
                    if next == "k" { throw unsafe("back-references are not supported") }
                }
                index += 1
                lastGroupWasRisky = false
                continue
            }
            if inClass {
                if character == "]" { inClass = false }
                continue
            }
            switch character {
            case "[": inClass = true; lastGroupWasRisky = false
            case "(": groups.append(false)
            case ")":
                lastGroupWasRisky = groups.popLast() ?? false
                if let outer = groups.indices.last, lastGroupWasRisky { groups[outer] = true }
                continue
            case "*", "+", "?", "{":
                let isRepeat = character != "?" || (index > 0 && characters[index - 1] != "(")
                if isRepeat && lastGroupWasRisky && character != "?" { throw unsafe("nested quantifiers can take exponential time") }
                let isLazyMarker = character == "?" && index > 0 && "*+?}".contains(characters[index - 1])
                if character == "*" || character == "+" || (character == "{" && isOpenEnded(characters, from: index)) {
                    unboundedRepeats += 1
                    if unboundedRepeats > 1 { throw unsafe("more than one unbounded repetition can take polynomial time") }
                } else if isLazyMarker {
                    break
                }
                if let innermost = groups.indices.last { groups[innermost] = true }
            case "|":
                if let innermost = groups.indices.last { groups[innermost] = true }
            default: break
            }
            lastGroupWasRisky = false
        }
        characters.removeAll()
    }

    /// Whether the `{` at `index` opens an `{n,}` repetition (no upper bound).
    private static func isOpenEnded(_ characters: [Character], from index: Int) -> Bool {
        guard let close = characters[index...].firstIndex(of: "}") else { return false }
        return characters[index..<close].last == ","
    }

    private static func unsafe(_ reason: String) -> ParseError {
        ParseError(.invalidQuery, "bad regex: \(reason)")
    }
}
