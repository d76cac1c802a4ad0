import Foundation
import Logging

/// A swift-log handler that writes one line per message through a `LogSink` (standard error):
/// lines from concurrent requests never interleave, and requests do not wait for the disk.
///
/// Format: `2026-11-23T10:00:00.123Z info rid=1a [roost] GET /parse/health 200 0.05ms`.
/// Callers must never pass secrets (keys, passwords, session tokens) in messages or metadata.
///
/// Every request logs a line at `info`, so the line is written byte by byte into one array. Built from
/// Strings (a timestamp of seven interpolations, the metadata sorted into an array, then copied to bytes),
/// a request's line cost 17k instructions; this way 9k, the rest being swift-log's own
/// (`ROOST_LOG_LEVEL=info bench/instructions.py`: get 220.9k → 212.8k, create 444.7k → 431.1k).
public struct LineLogHandler: LogHandler {
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    private let label: String
    private let sink: LogSink

    public init(label: String, level: Logger.Level, sink: LogSink = .standardError) {
        self.label = label
        self.logLevel = level
        self.sink = sink
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        // Errors are written at once: they are rare and may precede a crash.
        sink.append(line(for: event), urgent: event.level >= .error)
    }

    /// The whole line, its newline included.
    func line(for event: LogEvent) -> [UInt8] {
        var line: [UInt8] = []
        line.reserveCapacity(160)
        Self.appendTimestamp(to: &line)
        line.append(UInt8(ascii: " "))
        line.append(contentsOf: event.level.rawValue.utf8)
        line.append(UInt8(ascii: " "))
        if let extra = event.metadata, !extra.isEmpty {
            Self.append(metadata.merging(extra) { _, new in new }, to: &line)
        } else if !metadata.isEmpty {
            Self.append(metadata, to: &line)
        }
        line.append(UInt8(ascii: "["))
        line.append(contentsOf: label.utf8)
        line.append(contentsOf: "] ".utf8)
        line.append(contentsOf: event.message.description.utf8)
        line.append(UInt8(ascii: "\n"))
        return line
    }

    /// `key=value ` for each entry, keys in order.
    private static func append(_ metadata: Logger.Metadata, to line: inout [UInt8]) {
        func append(_ key: String, _ value: Logger.Metadata.Value) {
            line.append(contentsOf: key.utf8)
            line.append(UInt8(ascii: "="))
            if case .string(let text) = value { line.append(contentsOf: text.utf8) } else { line.append(contentsOf: value.description.utf8) }
            line.append(UInt8(ascii: " "))
        }
        if metadata.count == 1, let only = metadata.first { return append(only.key, only.value) }
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) { append(key, value) }
    }

    /// ISO 8601 UTC to the millisecond (`GET /scriptlog` answers it; Parse Dashboard tells lines apart by it).
    private static func appendTimestamp(to line: inout [UInt8]) {
        var clock = timespec()
        clock_gettime(CLOCK_REALTIME, &clock)
        var now = clock.tv_sec
        var parts = tm()
        gmtime_r(&now, &parts)
        func digits(_ value: Int32, _ count: Int) {
            var divisor: Int32 = 1
            for _ in 1..<count { divisor *= 10 }
            var value = value
            while divisor > 0 {
                line.append(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: value / divisor % 10))
                value %= divisor
                divisor /= 10
            }
        }
        digits(parts.tm_year + 1900, 4)
        line.append(UInt8(ascii: "-"))
        digits(parts.tm_mon + 1, 2)
        line.append(UInt8(ascii: "-"))
        digits(parts.tm_mday, 2)
        line.append(UInt8(ascii: "T"))
        digits(parts.tm_hour, 2)
        line.append(UInt8(ascii: ":"))
        digits(parts.tm_min, 2)
        line.append(UInt8(ascii: ":"))
        digits(parts.tm_sec, 2)
        line.append(UInt8(ascii: "."))
        digits(Int32(clock.tv_nsec / 1_000_000), 3)
        line.append(UInt8(ascii: "Z"))
    }
}
