import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A one-route HTTP server on a free port that stands in for a webhook: it records each request
/// (headers and body) and answers every one with `reply` (status 200 unless said), or with what `respond` makes of it.
public final class WebhookReceiver: @unchecked Sendable {
    public struct Received: Sendable {
        public let headers: [String: String]
        public let body: Data
    }

    public struct Reply: Sendable {
        public var status: Int
        public var body: Data

        public init(status: Int = 200, body: Data) {
            self.status = status
            self.body = body
        }
    }

    public let port: UInt16
    private let listener: Int32
    private let lock = NSLock()
    private var received: [Received] = []
    private var fixedReply: Reply
    /// Makes each reply from its request, instead of `fixedReply`; it may call the server back (it runs on a thread of
    /// the connection's own, off Swift's cooperative pool).
    private let respond: (@Sendable (Received) async -> Reply)?
    private let gate = NSCondition()
    private var isHolding = false

    public var url: String { "http://127.0.0.1:\(port)/hook" }

    public convenience init(reply: String) throws {
        try self.init(fixedReply: Reply(body: Data(reply.utf8)), respond: nil)
    }

    public convenience init(respond: @escaping @Sendable (Received) async -> Reply) throws {
        try self.init(fixedReply: Reply(body: Data()), respond: respond)
    }

    private init(fixedReply: Reply, respond: (@Sendable (Received) async -> Reply)?) throws {
        self.fixedReply = fixedReply
        self.respond = respond
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ready = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 16) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        guard ready else {
            close(listener)
            throw POSIXError(.EADDRINUSE)
        }
        self.listener = listener
        port = UInt16(bigEndian: address.sin_port)
        let thread = Thread { [self] in serve() }
        thread.start()
    }

    deinit { shutdown(listener, Int32(SHUT_RDWR)); close(listener) }

    public var requests: [Received] { lock.withLock { received } }

    public func reply(with text: String, status: Int = 200) { lock.withLock { fixedReply = Reply(status: status, body: Data(text.utf8)) } }

    /// Keeps every reply back (a server that has not answered yet) until `releaseReplies()`.
    public func holdReplies() { gate.withLock { isHolding = true } }

    public func releaseReplies() {
        gate.withLock {
            isHolding = false
            gate.broadcast()
        }
    }

    /// Each connection on a thread of its own, so replies held back do not hold up later requests.
    private func serve() {
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            Thread.detachNewThread { [self] in
                handle(connection)
                close(connection)
            }
        }
    }

    private func handle(_ connection: Int32) {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        var headerEnd: Range<Data.Index>?
        var headers: [String: String] = [:]
        while true {
            let count = read(connection, &buffer, buffer.count)
            guard count > 0 else { return }
            data.append(contentsOf: buffer[..<count])
            if headerEnd == nil, let end = data.range(of: Data("\r\n\r\n".utf8)) {
                headerEnd = end
                for line in String(decoding: data[..<end.lowerBound], as: UTF8.self).split(separator: "\r\n").dropFirst() {
                    let parts = line.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                    if parts.count == 2 { headers[parts[0].lowercased()] = parts[1] }
                }
            }
            if let end = headerEnd, data.count - end.upperBound >= Int(headers["content-length"] ?? "0") ?? 0 { break }
        }
        let request = Received(headers: headers, body: Data(data[headerEnd!.upperBound...]))
        var reply = lock.withLock {
            received.append(request)
            return fixedReply
        }
        if let respond {
            let made = Made(), done = DispatchSemaphore(value: 0)
            Task(executorPreference: ReplyExecutor.shared) {
                made.reply = await respond(request)
                done.signal()
            }
            done.wait()
            reply = made.reply
        }
        gate.withLock { while isHolding { gate.wait() } }
        let head = "HTTP/1.1 \(reply.status) \(reply.status == 200 ? "OK" : "Status")\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(reply.body.count)\r\nConnection: close\r\n\r\n"
        let response = Data(head.utf8) + reply.body
        _ = response.withUnsafeBytes { write(connection, $0.baseAddress, $0.count) }
    }
}

/// A reply made on another task, handed back to the connection's thread (which waits for it).
private final class Made: @unchecked Sendable {
    var reply = WebhookReceiver.Reply(status: 500, body: Data("no reply made".utf8))
}

/// Runs reply-making tasks on threads of their own. On Swift's cooperative pool (two threads on a 2-core machine) they
/// waited behind tests starting servers synchronously, and under the whole suite a webhook timed out unanswered.
private final class ReplyExecutor: TaskExecutor {
    static let shared = ReplyExecutor()

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        Thread.detachNewThread { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
