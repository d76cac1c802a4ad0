import Foundation
import Logging

/// A swift-log handler that writes one line per message through a `LogSink` (standard error):
/// lines from concurrent requests never interleave, and requests do not wait for the disk.
///
/// Format: `2026-11-23T10:00:00Z info rid=1a [roost] GET /parse/health 200 0.05ms`.
/// Callers must never pass secrets (keys, passwords, session tokens) in messages or metadata.
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
        var line = LineLogHandler.timestamp()
        line.reserveCapacity(128)
        line += " \(event.level) "
        let merged = event.metadata.map { metadata.merging($0) { _, new in new } } ?? metadata
        for (key, value) in merged.sorted(by: { $0.key < $1.key }) { line += "\(key)=\(value) " }
        line += "[\(label)] \(event.message)\n"
        // Errors are written at once: they are rare and may precede a crash.
        sink.append(Array(line.utf8), urgent: event.level >= .error)
    }

    /// ISO 8601 UTC to the second, formatted without Foundation's date formatters.
    private static func timestamp() -> String {
        var now = time(nil)
        var parts = tm()
        gmtime_r(&now, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }
}
