import Foundation

/// A real SMTP server (Python's aiosmtpd, `scripts/smtp-sink.py`) on a free port: every mail it accepts
/// is kept as a file, which `mails()` reads back. `make test` installs aiosmtpd into `.build/smtp-venv`.
public final class SMTPSink: @unchecked Sendable {
    public let directory: URL
    public let port: Int
    private var process: ChildProcess?
    private let ownsDirectory: Bool

    /// A received mail: envelope recipient, headers and the decoded text part.
    public struct Mail: Sendable {
        public let recipient: String
        public let subject: String
        public let text: String
        public let html: String
        public let raw: String

        /// The first `http…` line of the text: the link.
        public var link: String? { text.split(separator: "\n").first { $0.hasPrefix("http") }.map(String.init) }
    }

    /// Starts the sink; `port` 0 picks a free one. Keeping `directory` across a restart keeps the mails.
    /// - Parameter options: `["--starttls", cert, key]`, `["--tls", cert, key]`, `["--login", "user:password"]` (see the script).
    public init(port: Int = 0, directory: URL? = nil, options: [String] = []) throws {
        self.directory = directory ?? FileManager.default.temporaryDirectory.appendingPathComponent("roost-smtp-\(UUID().uuidString)")
        ownsDirectory = directory == nil
        let output = try ChildProcess.makePipe()
        defer { close(output.read) }
        process = try ChildProcess(executable: try SMTPSink.python(), arguments: [SMTPSink.script, self.directory.path, String(port)] + options,
                                   stdout: output.write, stderrPath: self.directory.path + ".log")
        close(output.write)
        // Up to the end of the line: the port may come in a later read than the word before it.
        guard let seen = ChildProcess.read(output.read, until: "\n"), seen.hasPrefix("listening"),
            let found = seen.split(separator: " ").last.flatMap({ Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) })
        else { throw SMTPSinkError(description: "the SMTP sink did not start: " + ((try? String(contentsOfFile: self.directory.path + ".log", encoding: .utf8)) ?? "")) }
        self.port = found
    }

    public var url: String { "smtp://127.0.0.1:\(port)" }

    /// Stops the SMTP server (its port refuses connections until another sink takes it).
    public func stop() {
        _ = process?.terminate()
        process = nil
    }

    deinit {
        stop()
        if ownsDirectory {
            try? FileManager.default.removeItem(at: directory)
            try? FileManager.default.removeItem(atPath: directory.path + ".log")
        }
    }

    /// Every mail received so far, in order.
    public func mails() -> [Mail] {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { $0.hasSuffix(".eml") }.sorted()
        return names.compactMap { name in
            (try? String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)).map(SMTPSink.parse)
        }
    }

    /// Waits until `count` mails have come (polling; at most `timeout` seconds) and returns them all.
    public func waitForMails(_ count: Int, timeout: Double = 20) async throws -> [Mail] {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let received = mails()
            if received.count >= count { return received }
            try await Task.sleep(nanoseconds: 50_000_000)
        }
        return mails()
    }

    private static func parse(_ raw: String) -> Mail {
        let unfolded = raw.replacingOccurrences(of: "\r\n", with: "\n")
        func header(_ name: String) -> String {
            unfolded.split(separator: "\n").first { $0.lowercased().hasPrefix(name.lowercased() + ":") }
                .map { String($0.dropFirst(name.count + 1)).trimmingCharacters(in: .whitespaces) } ?? ""
        }
        return Mail(recipient: header("X-Envelope-To"), subject: header("Subject"), text: part("text/plain", unfolded),
                    html: part("text/html", unfolded), raw: raw)
    }

    /// The base64 body of the part of this type, decoded.
    private static func part(_ type: String, _ message: String) -> String {
        guard let start = message.range(of: "Content-Type: \(type)") else { return "" }
        let afterHeaders = message[start.upperBound...].range(of: "\n\n").map { message[$0.upperBound...] } ?? ""
        let lines = afterHeaders.split(separator: "\n", omittingEmptySubsequences: false).prefix { !$0.hasPrefix("--") && !$0.isEmpty }
        return Data(base64Encoded: lines.joined()).map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    public static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    public static let script = packageRoot.appendingPathComponent("scripts/smtp-sink.py").path

    /// The venv `make test` fills with aiosmtpd, else `python3` on the PATH (which must have aiosmtpd).
    public static func python() throws -> String {
        let venv = packageRoot.appendingPathComponent(".build/smtp-venv/bin/python").path
        if FileManager.default.isExecutableFile(atPath: venv) { return venv }
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":") {
            let candidate = "\(directory)/python3"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw SMTPSinkError(description: "no python3 with aiosmtpd (make test installs it into .build/smtp-venv)")
    }
}

public struct SMTPSinkError: Error, CustomStringConvertible {
    public let description: String
}
