import Foundation
import Logging
import RoostCore
@testable import RoostServer
import Testing

/// `LogSink` (batched log writes) and `LineLogHandler` lines, read back through a pipe.
@Suite struct LogSinkTests {
    /// A sink writing into a pipe, and a way to read what reached the pipe so far.
    final class Pipe: Sendable {
        let read: Int32
        let sink: LogSink

        init() {
            var ends: [Int32] = [0, 0]
            precondition(pipe(&ends) == 0)
            _ = fcntl(ends[0], F_SETFL, O_NONBLOCK)
            read = ends[0]
            sink = LogSink(fileDescriptor: ends[1])
        }

        func available() -> String {
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = Glibc.read(read, &buffer, buffer.count)
                guard count > 0 else { break }
                bytes += buffer[..<count]
            }
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    @Test func flushWritesEveryLineInOrder() {
        let pipe = Pipe()
        for index in 0..<1000 { pipe.sink.append(Array("line \(index)\n".utf8), urgent: false) }
        pipe.sink.flush()
        let lines = pipe.available().split(separator: "\n")
        #expect(lines == (0..<1000).map { "line \($0)"[...] })
    }

    @Test func urgentLinesAreWrittenAtOnceWithWhatCameBefore() {
        let pipe = Pipe()
        pipe.sink.append(Array("first\n".utf8), urgent: false)
        pipe.sink.append(Array("error\n".utf8), urgent: true)
        #expect(pipe.available() == "first\nerror\n")
    }

    @Test func theBackgroundWriterCatchesUpWithoutAFlush() async throws {
        let pipe = Pipe()
        pipe.sink.append(Array("later\n".utf8), urgent: false)
        var seen = ""
        for _ in 0..<200 where !seen.contains("later\n") {
            try await Task.sleep(for: .milliseconds(10))
            seen += pipe.available()
        }
        #expect(seen == "later\n")
    }

    /// The line's parts in order: timestamp, level, metadata by key (the event's over the logger's), label, message.
    @Test func linesCarryTimeLevelSortedMetadataLabelAndMessage() throws {
        let pipe = Pipe()
        var logger = Logger(label: "roost") { LineLogHandler(label: $0, level: .info, sink: pipe.sink) }
        logger[metadataKey: "rid"] = "1a"
        logger.info("GET /parse/health 200 0.050ms")
        logger.warning("slow", metadata: ["rid": "2b", "class": "Item", "count": .stringConvertible(3)])
        logger.debug("not shown")
        pipe.sink.flush()
        let lines = pipe.available().split(separator: "\n", omittingEmptySubsequences: false)
        try #require(lines.count == 3)
        let stamp = try #require(ParseDate(iso: String(lines[0].prefix(24))))
        #expect(abs(stamp.millisecondsSince1970 - ParseDate.now().millisecondsSince1970) < 5000)
        #expect(lines[0].dropFirst(25) == "info rid=1a [roost] GET /parse/health 200 0.050ms")
        #expect(lines[1].dropFirst(25) == "warning class=Item count=3 rid=2b [roost] slow")
        #expect(lines[2].isEmpty)
    }

    /// What `/scriptlog` reads: the last lines, oldest first, each cut to `recentLineLimit` (a client's long request
    /// paths cannot make it hold megabytes); the written log keeps them whole.
    @Test func recentLinesAreTheLastOnesCutToTheLimit() throws {
        let long = String(repeating: "p", count: 16 * 1024)
        let devNull = open("/dev/null", O_WRONLY)
        try #require(devNull >= 0)
        defer { close(devNull) }
        let sink = LogSink(fileDescriptor: devNull)  // 16 MB of lines: more than a pipe holds unread.
        for index in 0..<(LogSink.recentCapacity + 5) { sink.append(Array("line \(index) \(long)\n".utf8), urgent: false) }
        let recent = sink.recentLines()
        #expect(recent.count == LogSink.recentCapacity)
        #expect(recent.allSatisfy { $0.count == LogSink.recentLineLimit && $0.last == UInt8(ascii: "\n") })
        #expect(String(decoding: recent[0].prefix(9), as: UTF8.self) == "line 5 pp")
        #expect(String(decoding: recent.last!.prefix(9), as: UTF8.self) == "line 1004")
        let pipe = Pipe()
        pipe.sink.append(Array("whole \(String(repeating: "q", count: 4000))\n".utf8), urgent: true)
        #expect(pipe.available().count == "whole ".count + 4000 + 1)
    }

    /// 8 × 40 lines of ~125 bytes: under the pipe's 64 KB, so no write blocks before the test reads.
    @Test func linesFromConcurrentThreadsNeverInterleave() async {
        let pipe = Pipe()
        await withTaskGroup(of: Void.self) { group in
            for writer in 0..<8 {
                group.addTask {
                    for index in 0..<40 {
                        pipe.sink.append(Array("writer \(writer) line \(index) \(String(repeating: "x", count: 100))\n".utf8), urgent: false)
                    }
                }
            }
        }
        pipe.sink.flush()
        let lines = pipe.available().split(separator: "\n")
        #expect(lines.count == 8 * 40)
        #expect(lines.allSatisfy { $0.hasPrefix("writer ") && $0.hasSuffix(String(repeating: "x", count: 100)) })
    }
}

@Suite struct SecureRandomTests {
    @Test func objectIdsAreTenAlphanumericsAndDistinct() throws {
        var seen = Set<String>()
        for _ in 0..<20_000 {
            let id = try SecureRandom.objectId()
            #expect(id.utf8.count == 10)
            #expect(id.utf8.allSatisfy { SecureRandom.alphanumerics.contains($0) })
            seen.insert(id)
        }
        #expect(seen.count == 20_000)
    }

    /// Ids made in a row share their first two characters for runs of 256 (creates insert into one narrow range of
    /// the objectId index); the next run takes the next pair, the last pair is followed by the first, and the other
    /// characters stay random.
    @Test func objectIdsComeInRunsThatShareAPrefix() throws {
        var pool = SecureRandom.ObjectIdPool(made: (62 * 62 - 1) * 256 + 200)
        let ids = try (0..<600).map { _ in try pool.objectId(length: 12) }
        #expect(ids.allSatisfy { $0.utf8.count == 12 && $0.utf8.allSatisfy { SecureRandom.alphanumerics.contains($0) } })
        #expect(ids[..<56].allSatisfy { $0.hasPrefix("99") })
        #expect(ids[56..<312].allSatisfy { $0.hasPrefix("AA") })
        #expect(ids[312..<568].allSatisfy { $0.hasPrefix("AB") })
        #expect(ids[568...].allSatisfy { $0.hasPrefix("AC") })
        #expect(Set(ids.map { $0.dropFirst(2) }).count == 600)
        #expect(Set(ids.flatMap { $0.utf8.dropFirst(2) }).count == 62)
    }
}
