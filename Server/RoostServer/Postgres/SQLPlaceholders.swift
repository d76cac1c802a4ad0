import Synchronization

/// SQLite's parameter marks turned into PostgreSQL's, so the stores' SQL text runs on both databases.
///
/// `?` becomes `$n`, numbered as SQLite numbers it (one more than the largest number so far), and `?NNN` becomes
/// `$NNN` (https://sqlite.org/lang_expr.html#varparam): `a = ?1 OR b = ?1 OR c = ?` is `a = $1 OR b = $1 OR c = $2`.
/// Marks inside string literals (`'it''s ?'`, `E'\'?'`), quoted identifiers (`"a?"`), dollar-quoted bodies
/// (`$f$ ... ? ... $f$`) and comments (`-- ?`, nested `/* ? */`) are text, left as they are.
///
/// PostgreSQL's jsonb operators `?`, `?|` and `?&` cannot be told from a mark: shared SQL spells them
/// `jsonb_exists(...)`, `jsonb_exists_any(...)`, `jsonb_exists_all(...)`.
enum SQLPlaceholders {
    /// The PostgreSQL text of `sql`. Translations are cached by SQL text (at most `cacheLimit`; the cache starts
    /// over when full, as `SQLiteConnection`'s statement cache does), since the stores run the same texts again and again.
    static func postgres(_ sql: String) -> String {
        guard sql.utf8.contains(UInt8(ascii: "?")) else { return sql }
        if let cached = cache.withLock({ $0[sql] }) { return cached }
        let translated = translate(sql)
        cache.withLock { cache in
            if cache.count >= cacheLimit { cache.removeAll(keepingCapacity: true) }
            cache[sql] = translated
        }
        return translated
    }

    /// How many translations the cache keeps.
    static let cacheLimit = 1024
    private static let cache = Mutex<[String: String]>([:])
    static var cachedCount: Int { cache.withLock { $0.count } }

    /// The translation itself, uncached (a single pass over the UTF-8 bytes).
    static func translate(_ sql: String) -> String {
        let bytes = Array(sql.utf8)
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count + 16)
        var highest = 0
        var index = 0

        /// Copies bytes up to and including the first `terminator` from `index`, a doubled terminator being text.
        func copyQuoted(_ terminator: UInt8, backslashEscapes: Bool) {
            output.append(bytes[index])
            index += 1
            while index < bytes.count {
                let byte = bytes[index]
                output.append(byte)
                index += 1
                if backslashEscapes, byte == UInt8(ascii: "\\"), index < bytes.count {
                    output.append(bytes[index])
                    index += 1
                } else if byte == terminator {
                    guard index < bytes.count, bytes[index] == terminator else { return }
                    output.append(bytes[index])
                    index += 1
                }
            }
        }

        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "'"):
                // E'...' strings take backslash escapes; the E was copied already.
                let escaped = index > 0 && (bytes[index - 1] | 0x20) == UInt8(ascii: "e")
                    && (index < 2 || !isIdentifierByte(bytes[index - 2]))
                copyQuoted(byte, backslashEscapes: escaped)
            case UInt8(ascii: "\""):
                copyQuoted(byte, backslashEscapes: false)
            case UInt8(ascii: "-") where next(bytes, index) == UInt8(ascii: "-"):
                while index < bytes.count, bytes[index] != UInt8(ascii: "\n") {
                    output.append(bytes[index])
                    index += 1
                }
            case UInt8(ascii: "/") where next(bytes, index) == UInt8(ascii: "*"):
                var depth = 0
                repeat {
                    if bytes[index] == UInt8(ascii: "/"), next(bytes, index) == UInt8(ascii: "*") {
                        depth += 1
                        output += [bytes[index], bytes[index + 1]]
                        index += 2
                    } else if bytes[index] == UInt8(ascii: "*"), next(bytes, index) == UInt8(ascii: "/") {
                        depth -= 1
                        output += [bytes[index], bytes[index + 1]]
                        index += 2
                    } else {
                        output.append(bytes[index])
                        index += 1
                    }
                } while depth > 0 && index < bytes.count
            case UInt8(ascii: "$") where dollarTag(bytes, at: index) != nil:
                let tag = dollarTag(bytes, at: index)!
                output += tag
                index += tag.count
                while index < bytes.count {
                    if bytes[index] == UInt8(ascii: "$"), bytes[index...].starts(with: tag) {
                        output += tag
                        index += tag.count
                        break
                    }
                    output.append(bytes[index])
                    index += 1
                }
            case UInt8(ascii: "?"):
                index += 1
                var digits = 0
                var number = 0
                while index < bytes.count, let digit = decimal(bytes[index]), number < 1_000_000 {
                    number = number * 10 + digit
                    digits += 1
                    index += 1
                }
                if digits == 0 { number = highest + 1 }
                highest = max(highest, number)
                output.append(UInt8(ascii: "$"))
                output += Array(String(number).utf8)
            default:
                // An identifier or keyword is copied whole, so the `E` test above sees where words start.
                output.append(byte)
                index += 1
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    private static func next(_ bytes: [UInt8], _ index: Int) -> UInt8? {
        index + 1 < bytes.count ? bytes[index + 1] : nil
    }

    private static func decimal(_ byte: UInt8) -> Int? {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") ? Int(byte - UInt8(ascii: "0")) : nil
    }

    private static func isIdentifierByte(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "_") || byte >= 0x80 || decimal(byte) != nil || ((byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z"))
    }

    /// The opening `$tag$` of a dollar-quoted string at `index` (`$$`, `$body$`), nil for a `$1` parameter or a `$`
    /// inside an identifier (`a$b`). Tags follow identifier rules: no leading digit, no `$`.
    private static func dollarTag(_ bytes: [UInt8], at index: Int) -> [UInt8]? {
        if index > 0, isIdentifierByte(bytes[index - 1]) { return nil }
        var end = index + 1
        while end < bytes.count, bytes[end] != UInt8(ascii: "$") {
            guard isIdentifierByte(bytes[end]), !(end == index + 1 && decimal(bytes[end]) != nil) else { return nil }
            end += 1
        }
        guard end < bytes.count else { return nil }
        return Array(bytes[index...end])
    }
}
