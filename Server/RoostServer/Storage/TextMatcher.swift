import Foundation
import RoostCore

/// Evaluates a `$text` search on a string, in the manner of a MongoDB text index: both sides are
/// split into words and folded (case and diacritics, unless the search asks otherwise); in English
/// (the default language) stop words are dropped and plural endings removed, so "bagels" finds "Bagel".
///
/// A text matches when it has none of the `-excluded` words, every `"quoted phrase"`, and — when the
/// search has no phrase — at least one of the plain words.
struct TextMatcher {
    private let search: TextSearch
    /// The quoted phrases' words (`TextIndex` narrows on them too).
    let phrases: [[String]]
    /// The `-excluded` words.
    let excluded: Set<String>
    /// The plain words and the phrases' words: the ones a match is scored on.
    let wanted: Set<String>

    init(_ search: TextSearch) {
        self.search = search
        var plain = "", phrase = "", phrases: [[String]] = [], inPhrase = false
        for character in search.term {
            guard character == "\"" else {
                if inPhrase { phrase.append(character) } else { plain.append(character) }
                continue
            }
            if inPhrase {
                phrases.append(TextMatcher.tokens(phrase, search))
                phrase = ""
            }
            inPhrase.toggle()
        }
        plain += " " + phrase  // An unclosed quote: its words count as plain words.
        self.phrases = phrases.filter { !$0.isEmpty }
        var words = Set<String>(), excluded = Set<String>()
        for part in plain.split(whereSeparator: \.isWhitespace) {
            if part.hasPrefix("-") {
                excluded.formUnion(TextMatcher.tokens(String(part.dropFirst()), search))
            } else {
                words.formUnion(TextMatcher.tokens(String(part), search))
            }
        }
        self.excluded = excluded
        wanted = words.union(self.phrases.joined())
    }

    /// 0 when `text` does not match; otherwise a relevance that grows with the number of search
    /// words found and with how much of the text they make up.
    func score(_ text: String) -> Double {
        let tokens = TextMatcher.tokens(text, search)
        guard !tokens.isEmpty, excluded.isDisjoint(with: tokens) else { return 0 }
        for phrase in phrases where !TextMatcher.contains(tokens, phrase) { return 0 }
        var counts: [String: Int] = [:]
        for token in tokens where wanted.contains(token) { counts[token, default: 0] += 1 }
        if phrases.isEmpty, counts.isEmpty { return 0 }
        return counts.values.reduce(0) { $0 + 0.5 + 0.5 * Double($1) / Double(tokens.count) }
    }

    /// The score of a stored value: a string, or an array's strings together.
    func score(_ value: JSON?) -> Double {
        switch value {
        case .string(let text)?: return score(text)
        case .array(let elements)?: return score(elements.compactMap(\.stringValue).joined(separator: " "))
        default: return 0
        }
    }

    private static func contains(_ tokens: [String], _ phrase: [String]) -> Bool {
        guard phrase.count <= tokens.count else { return false }
        return (0...(tokens.count - phrase.count)).contains { start in tokens[start..<(start + phrase.count)].elementsEqual(phrase) }
    }

    /// The words of `text` as the index keeps them.
    static func tokens(_ text: String, _ search: TextSearch) -> [String] {
        var folded = search.diacriticSensitive ? text : text.folding(options: .diacriticInsensitive, locale: nil)
        if !search.caseSensitive { folded = folded.lowercased() }
        let english = isEnglish(search)
        return folded.split { !($0.isLetter || $0.isNumber) }.compactMap { word in
            let word = String(word)
            guard english else { return word }
            let lower = search.caseSensitive ? word.lowercased() : word  // Already folded otherwise.
            if stopWords.contains(lower) { return nil }
            return singular(word, lower: lower)
        }
    }

    /// English (the default) drops stop words and plural endings; other languages match words as they are.
    static func isEnglish(_ search: TextSearch) -> Bool {
        search.language.map { ["english", "en"].contains($0.lowercased()) } ?? true
    }

    /// Porter's first step: plural endings (`ponies` → `poni`, `caresses` → `caress`, `bagels` → `bagel`).
    private static func singular(_ word: String, lower: String) -> String {
        if word.count <= 3 { return word }
        if lower.hasSuffix("sses") || lower.hasSuffix("ies") { return String(word.dropLast(2)) }
        if lower.hasSuffix("ss") || lower.hasSuffix("us") || !lower.hasSuffix("s") { return word }
        return String(word.dropLast())
    }

    static let stopWords: Set<String> = [
        "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "from", "had", "has", "have", "he", "her", "his",
        "i", "if", "in", "into", "is", "it", "its", "me", "my", "no", "not", "of", "on", "or", "our", "she", "so", "than",
        "that", "the", "their", "them", "then", "there", "these", "they", "this", "to", "was", "we", "were", "what",
        "when", "which", "who", "will", "with", "you", "your",
    ]
}
