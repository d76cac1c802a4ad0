import Foundation
import RoostCore

/// `GET /scriptlog` (master key): the server's recent log lines as Parse Server's `LogsRouter` answers them (Parse
/// Dashboard's logs page), each `{level, message, timestamp}` and the line's metadata (`rid`). Parse reads its log
/// files; Roost logs to standard error and keeps the last `LogSink.recentCapacity` lines in memory for this.
///
/// Parameters as Parse's `LoggerController`: `size` (or `n`; default 10), `order` (`desc`, the default, is newest
/// first; `asc`), `from` and `until` (ISO dates; a week ago and now by default), `level` (`error` for errors only; any
/// other value for every line).
enum LogsRoutes {
    static func register(in router: inout Router) {
        router.add("GET", "scriptlog") { request, context, _ in
            try context.requireMaster()
            return APIResponse(body: .array(entries(LogSink.standardError.recentLines(), parameters: request.query)))
        }
    }

    static func entries(_ lines: [[UInt8]], parameters: [String: String], now: ParseDate = .now()) -> [JSON] {
        func date(_ name: String) -> Int64? { parameters[name].flatMap { ParseDate(iso: $0)?.millisecondsSince1970 } }
        let from = date("from") ?? now.millisecondsSince1970 - 7 * 86_400_000
        let until = date("until") ?? now.millisecondsSince1970
        let size = [parameters["n"], parameters["size"]].lazy.compactMap { $0.flatMap { Double($0) } }.first { $0 != 0 && $0.isFinite } ?? 10
        let errorsOnly = parameters["level"] == "error"
        var chosen: [Entry] = []
        let ordered = parameters["order"] == "asc" ? lines : lines.reversed()
        for line in ordered where Double(chosen.count) < size {
            guard let entry = Entry(line), entry.time >= from, entry.time <= until,
                !errorsOnly || entry.level == "error" || entry.level == "critical" else { continue }
            chosen.append(entry)
        }
        return chosen.map(\.json)
    }

    /// One line of `LineLogHandler`'s: `2026-11-23T10:00:00.123Z info rid=1a [roost] GET /parse/health 200 0.05ms`.
    struct Entry {
        let time: Int64
        let level: String
        var fields: [String: JSON] = [:]

        init?(_ line: [UInt8]) {
            let text = String(decoding: line.last == UInt8(ascii: "\n") ? line.dropLast() : line[...], as: UTF8.self)
            let parts = text.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3, let date = ParseDate(iso: String(parts[0])) else { return nil }
            time = date.millisecondsSince1970
            level = String(parts[1])
            fields["level"] = .string(level)
            fields["timestamp"] = .string(date.iso)
            var rest = parts[2]
            // `key=value ` pairs up to the `[label] `, then the message.
            while !rest.hasPrefix("["), let space = rest.firstIndex(of: " "), let equals = rest[..<space].firstIndex(of: "=") {
                let key = String(rest[..<equals])
                if !["level", "message", "timestamp"].contains(key) { fields[key] = .string(String(rest[rest.index(after: equals)..<space])) }
                rest = rest[rest.index(after: space)...]
            }
            if rest.hasPrefix("["), let end = rest.range(of: "] ") { rest = rest[end.upperBound...] }
            fields["message"] = .string(String(rest))
            // A request's line (`GET /parse/health 200 0.05ms`) also names its `method` and `url`, as the metadata of
            // Parse's request log entries does (with `verbose`; the PHP SDK's tests read them).
            let words = rest.split(separator: " ")
            if words.count == 4, words[1].hasPrefix("/"), words[2].count == 3, Int(words[2]) != nil, words[3].hasSuffix("ms"),
               words[0].allSatisfy({ $0.isASCII && $0.isUppercase }) {
                fields["method"] = .string(String(words[0]))
                fields["url"] = .string(String(words[1]))
            }
        }

        var json: JSON { .object(fields) }
    }
}
