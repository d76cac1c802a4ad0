import CMicroHTTPD
import Foundation
import Glibc
import Synchronization

/// Errors starting the HTTP listener.
public enum HTTPServerError: Error, CustomStringConvertible {
    case cannotStart(port: UInt16)
    case cannotListen(host: String, port: UInt16, reason: String)

    public var description: String {
        switch self {
        case .cannotStart(let port):
            "cannot start the HTTP threads for port \(port)"
        case .cannotListen(let host, let port, let reason):
            "cannot listen on \(host):\(port): \(reason)"
        }
    }
}

/// The only file that sees libmicrohttpd: owns the daemons, turns MHD's callbacks into one
/// `HTTPRequest` per request and writes back the `HTTPResponse` the handler returns.
///
/// One acceptor thread hands each new connection to the least busy of `threads` single-threaded
/// MHD daemons (epoll), within the `ConnectionLimits` that `ConnectionGate` keeps; a daemon's thread
/// calls the handler synchronously, so it must be thread-safe. Clients late with a request are ended by
/// the `DeadlineWatcher`. See https://www.gnu.org/software/libmicrohttpd/manual/
///
/// A handler may instead park the request (`LaterReply`) and answer it from another thread: the
/// daemon's thread goes on serving its other connections meanwhile.
///
/// With `pinThreads`, daemon `i`'s thread runs only on the `i`-th CPU the process may use (round
/// robin). Left to the scheduler on the project's 2-core VM, the daemon threads piled up on one CPU
/// while the other sat partly idle (perf sched: runnable threads waiting up to 12 ms). `bench/run.py`,
/// same binary: create p99 7.0 ms unpinned, 3.3 ms pinned; query 6.6 → 3.5 ms; get-with-ACL 5.6 → 3.2 ms.
public final class HTTPServer: @unchecked Sendable {
    /// Answers a request now, or returns nil after calling `LaterReply.suspend()` (when it is given one).
    public typealias Handler = @Sendable (HTTPRequest, LaterReply?) -> HTTPResponse?

    let handler: Handler
    let maxBodyBytes: Int
    /// Which bodies are written to disk as they arrive (file uploads), nil for none.
    let spool: BodySpool?
    /// A body declared up to this much over `maxBodyBytes` is read and thrown away before the 413, so
    /// the connection stays usable. Answering at once and closing made the kernel reset a connection
    /// whose client was still sending: the client saw "connection reset", not the 413. Larger bodies,
    /// and bodies still held back by `Expect: 100-continue`, are answered at once.
    static let discardedBodyBytes = 1 << 20
    /// Node's default header limit (Parse Server answers 431 past it), and the query parameters a request
    /// may carry (Express's query parser reads 1,000).
    static let maximumTargetBytes = 16 * 1024
    static let maximumQueryParameters = 1_000

    /// Whether the server takes this request target (path and query, as received).
    static func acceptsTarget(_ target: UnsafeBufferPointer<UInt8>) -> Bool {
        // A target of up to 1,000 bytes cannot hold more than 1,000 parameters: no need to count them.
        guard target.count > maximumQueryParameters else { return true }
        guard target.count <= maximumTargetBytes else { return false }
        return target.lazy.filter { $0 == UInt8(ascii: "&") }.count < maximumQueryParameters
    }
    /// The CORS headers added to every response.
    let cors: CORS
    let limits: ConnectionLimits
    private let listenSocket: Int32
    private let daemons: UnsafeMutableBufferPointer<OpaquePointer?>
    /// What each daemon's connection-notify callback is given: the server and the daemon's index.
    private var daemonSlots: [DaemonSlot] = []
    fileprivate let gate: ConnectionGate
    /// The request bodies held at once, in memory or spooled (`limits.maxBufferedBodyBytes…`).
    let bodyBudget: BodyBudget
    fileprivate let watcher: DeadlineWatcher
    private let acceptorFinished = DispatchSemaphore(value: 0)
    private struct DaemonList: @unchecked Sendable {
        let daemons: UnsafePointer<OpaquePointer?>
        let count: Int
    }
    private let stopLock = NSLock()
    private var isStopped = false
    /// Requests being handled, parked or answered but not yet sent; `stop()` waits for them.
    fileprivate let activeRequests = Atomic<Int>(0)
    /// Set by `stop()`: requests not yet being handled are closed unanswered (and so not done).
    private let draining = Atomic<Bool>(false)

    /// The bound port (the real one when 0 was asked for).
    public let port: UInt16

    /// Starts serving the connections of `listener` at once.
    /// - Throws: `HTTPServerError.cannotStart` when the daemons cannot be started.
    public init(listener: consuming ListeningSocket, threads: Int, pinThreads: Bool, maxBodyBytes: Int,
                limits: ConnectionLimits = ConnectionLimits(), spool: BodySpool? = nil,
                cors: CORS = CORS(), handler: @escaping Handler) throws {
        self.handler = handler
        self.maxBodyBytes = maxBodyBytes
        self.spool = spool
        self.cors = cors
        var limits = limits
        limits.maxConnections = min(limits.maxConnections, Self.raiseDescriptorLimit() - Self.reservedDescriptors)
        self.limits = limits
        let daemonCount = max(threads, 1)
        gate = ConnectionGate(limits: limits, daemons: daemonCount)
        bodyBudget = BodyBudget(limits: limits)
        watcher = DeadlineWatcher(daemons: daemonCount)
        port = listener.port
        listenSocket = listener.release()
        daemons = .allocate(capacity: daemonCount)
        daemons.initialize(repeating: nil)
        let me = Unmanaged.passUnretained(self).toOpaque()
        daemonSlots = (0..<daemonCount).map { DaemonSlot(server: self, index: $0) }
        // The gate never hands one daemon more than `maxConnections`, so MHD's own limit (whose refusal
        // deadlocks 0.9.75, see shim.h) is never met.
        let mhdLimit = UInt32(clamping: limits.maxConnections + 16)
        for index in daemons.indices {
            let cpu = pinThreads ? roost_allowed_cpu(UInt32(index)) : -1
            let slot = Unmanaged.passUnretained(daemonSlots[index]).toOpaque()
            daemons[index] = roost_mhd_start_worker(
                UInt32(clamping: limits.idleTimeoutSeconds), mhdLimit, cpu, accessHandler, me, uriLogger, nil,
                requestCompleted, me, connectionNotified, slot)
        }
        guard daemons.allSatisfy({ $0 != nil }) else {
            stopDaemons()
            close(listenSocket)
            isStopped = true  // No acceptor to wait for: `deinit` must not.
            throw HTTPServerError.cannotStart(port: port)
        }
        // The acceptor must not retain `self` (deinit stops it), so it gets the daemon list as is;
        // `stop()` waits for it to finish before the list goes away.
        let daemonList = DaemonList(daemons: UnsafePointer(daemons.baseAddress!), count: daemons.count)
        let acceptor = Thread { [listenSocket, acceptorFinished, gate] in
            nameCurrentThread("roost-accept")
            Self.acceptConnections(on: listenSocket, into: daemonList, through: gate)
            acceptorFinished.signal()
        }
        acceptor.start()
        watcher.start()
    }

    /// Descriptors kept back from connections for the database, uploaded files and webhook calls.
    static let reservedDescriptors = 256

    /// Raises the soft limit on open descriptors to the hard one (as Go's runtime does) and returns it.
    private static func raiseDescriptorLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return Int(clamping: limit.rlim_cur)
    }

    /// Accepts connections until the listening socket is shut down, giving each to the daemon `gate`
    /// picks, or refusing it with a 503 when a limit is reached.
    ///
    /// Why not MHD's own thread pool: its threads all wait on the listening socket, and a burst of
    /// new connections lands on whichever wakes first. Measured with wrk's 16 connections on 4
    /// threads: often 2 threads served all of them while 2 idled, which cost throughput and p99.
    private static func acceptConnections(on listenSocket: Int32, into daemons: DaemonList, through gate: ConnectionGate) {
        var storage = sockaddr_storage()
        while true {
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let client = withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { roost_accept_nonblocking(listenSocket, $0, &length) }
            }
            if client < 0 {
                switch errno {
                case EINTR, ECONNABORTED, EPROTO: continue
                case EMFILE, ENFILE, ENOBUFS, ENOMEM: usleep(10_000); continue  // Wait for connections to close.
                default: return  // Shut down (EINVAL) or closed.
                }
            }
            withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                    let counted = ConnectionGate.Address(address)
                    guard let daemon = gate.admit(counted) else {
                        refuse(client)
                        return
                    }
                    // MHD owns the socket from here, and closes it itself if it cannot take it.
                    if MHD_add_connection(daemons.daemons[daemon], client, address, length) != MHD_Result.YES {
                        gate.release(counted, daemon: daemon)
                    }
                }
            }
        }
    }

    /// Answers 503 on a connection over the limits before anything is read, and closes it.
    private static func refuse(_ socket: Int32) {
        refusal.withUnsafeBytes { _ = Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        close(socket)
    }

    private static let refusal = Array((
        "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nRetry-After: 1\r\n"
        + "Content-Type: application/json; charset=utf-8\r\nContent-Length: 32\r\n\r\n"
        + "{\"error\":\"too many connections\"}").utf8)

    /// Open connections (accepted and not yet closed).
    public var openConnections: Int { gate.openConnections }

    /// Stops accepting connections, lets requests in progress finish, then closes every connection.
    public func stop() {
        stopLock.lock()
        defer { stopLock.unlock() }
        guard !isStopped else { return }
        isStopped = true
        Glibc.shutdown(listenSocket, Int32(SHUT_RDWR))  // Ends the acceptor's accept().
        acceptorFinished.wait()
        close(listenSocket)
        // MHD_stop_daemon closes every connection at once (answers not yet written are lost, and it
        // must not meet a parked one): requests in progress finish and their answers go out first,
        // while requests that come meanwhile are closed unanswered, so they do nothing either.
        draining.store(true, ordering: .sequentiallyConsistent)
        while activeRequests.load(ordering: .sequentiallyConsistent) > 0 { usleep(1000) }
        stopDaemons()
        watcher.stop()
    }

    /// Counts a request about to be handled; false once `stop()` has begun (then close it unanswered).
    fileprivate func beginRequest(_ state: RequestState) -> Bool {
        // Counted before the check, so `stop()` either sees the count or this request sees it draining.
        activeRequests.add(1, ordering: .sequentiallyConsistent)
        guard !draining.load(ordering: .sequentiallyConsistent) else {
            activeRequests.subtract(1, ordering: .sequentiallyConsistent)
            return false
        }
        state.isActive = true
        state.server = self
        return true
    }

    private func stopDaemons() {
        for index in daemons.indices {
            if let daemon = daemons[index] { MHD_stop_daemon(daemon) }
            daemons[index] = nil
        }
    }

    deinit {
        stop()
        daemons.deallocate()
    }

    /// Where the body of `state`'s request is spooled, holding `bodyBytes`: nil while it stays in memory (`BodySpool`).
    fileprivate func spoolDirectory(for state: RequestState, bodyBytes: Int) -> String? {
        guard let spool else { return nil }
        if state.spooledBody != nil { return spool.directory }
        guard bodyBytes > spool.thresholdBytes, let request = state.request, spool.accepts(request.method, request.path) else { return nil }
        return spool.directory
    }

    /// Answers a request whose body is refused before it is read (too large, or no room in `bodyBudget`): MHD
    /// closes the connection after the answer, since the body is left unread.
    fileprivate func answerBeforeBody(on connection: OpaquePointer, state: RequestState) -> MHD_Result {
        guard state.connection?.owe(by: 0) ?? true, beginRequest(state) else { return MHD_Result.NO }
        return send(handler(state.request!, nil) ?? HTTPResponse(status: 500), on: connection, state: state)
    }

    fileprivate func send(_ response: HTTPResponse, on connection: OpaquePointer, state: RequestState) -> MHD_Result {
        if response.dropsConnection { return MHD_Result.NO }  // MHD closes the connection unanswered.
        if let upgrade = response.upgrade { state.upgrade = upgrade }
        let mhdResponse: OpaquePointer?
        if response.upgrade != nil {
            mhdResponse = MHD_create_response_for_upgrade(upgradeHandler, nil)
        } else if let stream = response.stream, stream.count > 0 {
            let reader = Unmanaged.passRetained(StreamReader(stream)).toOpaque()
            mhdResponse = MHD_create_response_from_callback(UInt64(stream.count), StreamReader.blockBytes, readStream, reader, streamFinished)
            if mhdResponse == nil { Unmanaged<StreamReader>.fromOpaque(reader).release() }
        } else {
            mhdResponse = response.body.withUnsafeBytes { raw in roost_mhd_copied_response(raw.count, raw.baseAddress) }
        }
        guard let mhdResponse else { return MHD_Result.NO }
        // The response's own first: MHD wants an upgrade's `Connection` header at the head of the list.
        for (name, value) in response.headers { _ = MHD_add_response_header(mhdResponse, name, value) }
        _ = MHD_add_response_header(mhdResponse, "Access-Control-Allow-Origin", cors.allowedOrigin(requestHeaders: state.request?.headers))
        for (name, value) in cors.fixedHeaders { _ = MHD_add_response_header(mhdResponse, name, value) }
        let result = MHD_queue_response(connection, UInt32(response.status), mhdResponse)
        MHD_destroy_response(mhdResponse)
        return result
    }
}

/// Lets a handler answer a request later, from any thread, without holding the daemon thread that
/// serves its connection: `suspend()` parks the connection, `send(_:)` hands the answer back to that
/// thread, which makes and writes it. After `suspend()`, the handler returns nil and `send` must be
/// called exactly once. See MHD_suspend_connection in the libmicrohttpd manual.
public struct LaterReply: @unchecked Sendable {
    fileprivate let server: HTTPServer
    fileprivate let connection: OpaquePointer
    fileprivate let state: RequestState

    /// Parks the connection.
    public func suspend() {
        state.awaitsSend()
        MHD_suspend_connection(connection)
    }

    /// Answers the parked request: MHD calls the access handler again on the connection's thread,
    /// which calls `answer` and writes what it returns.
    public func send(_ answer: @escaping () -> HTTPResponse) {
        state.laterAnswer = answer
        MHD_resume_connection(connection)
        // MHD_resume_connection still touches the daemon after the request may have completed on
        // its thread: the server may stop it only once this call has returned, too.
        state.ended(server)
    }
}

/// What a daemon's connection-notify callback is given.
private final class DaemonSlot {
    unowned let server: HTTPServer
    let index: Int

    init(server: HTTPServer, index: Int) {
        self.server = server
        self.index = index
    }
}

/// MHD calls this on the daemon's thread when it starts serving a connection and when it has closed it
/// (before closing the socket): the connection is timed from the first call and counted until the second.
private let connectionNotified: MHD_NotifyConnectionCallback = { cls, connection, socketContext, event in
    guard let cls, let connection, let socketContext else { return }
    let slot = Unmanaged<DaemonSlot>.fromOpaque(cls).takeUnretainedValue()
    let server = slot.server
    switch event {
    case MHD_ConnectionNotificationCode(rawValue: 0):  // MHD_CONNECTION_NOTIFY_STARTED
        let address = roost_mhd_client_sockaddr(connection).flatMap { ConnectionGate.Address($0) }
        let open = OpenConnection(socket: roost_mhd_connection_fd(connection), address: address, daemon: slot.index)
        open.awaitRequest(headersTimeoutSeconds: server.limits.headersTimeoutSeconds)
        server.watcher.connections[slot.index].open.withLock { $0[ObjectIdentifier(open)] = open }
        socketContext.pointee = Unmanaged.passRetained(open).toOpaque()
    case MHD_ConnectionNotificationCode(rawValue: 1):  // MHD_CONNECTION_NOTIFY_CLOSED
        guard let pointer = socketContext.pointee else { return }
        socketContext.pointee = nil
        let open = Unmanaged<OpenConnection>.fromOpaque(pointer).takeRetainedValue()
        _ = server.watcher.connections[slot.index].open.withLock { $0.removeValue(forKey: ObjectIdentifier(open)) }
        // An upgraded connection's slot is given back when its owner closes the socket (`UpgradedConnection`).
        if !open.isHandedOff.load(ordering: .acquiring) { server.gate.release(open.address, daemon: open.daemon) }
    default:
        break
    }
}

/// Everything MHD's several calls for one request accumulate; lives behind `*con_cls`.
private final class RequestState {
    let target: String
    /// The request's connection (nil only if MHD did not report it).
    var connection: OpenConnection?
    var request: HTTPRequest?
    var body: [UInt8] = []
    /// The body, once it is written to disk instead of `body` (`HTTPServer.spool`).
    var spooledBody: SpooledBody?
    /// Writing `spooledBody` failed: the rest of the body is dropped, and the handler is told.
    var bodyWriteError: (any Error)?
    var bodyTooLarge = false
    /// `HTTPServer.bodyBudget` had no room for the body: it is not kept, and the answer is a 503.
    var bodyOverBudget = false
    /// What `body` may hold, counted in `HTTPServer.bodyBudget`; given back when MHD completes the request.
    var bodyReservation = BodyBudget.Reservation()
    /// The body's `Content-Length` (nil: none, or chunked).
    var declaredBodyBytes: Int?
    var dropsBody: Bool { bodyTooLarge || bodyOverBudget || bodyWriteError != nil }

    /// Whether the client closed its end while a large body it declared is still owed. libmicrohttpd 0.9.75 (epoll,
    /// edge-triggered) can miss a close that arrives with the client's last bytes: the connection then waits for
    /// the rest until the request deadline, holding the body's room in `BodyBudget` (seen: one connection in
    /// CLOSE-WAIT every few hundred clients leaving mid-body, their 900 KB kept for 120 s). Checked for bodies
    /// over `BodyBudget.smallBodyBytes` (those counted per address) whenever the client is heard from: one
    /// `recv(MSG_PEEK)`, none for the small bodies almost every request has.
    var closedMidBody: Bool {
        guard bodyReservation.bytes > BodyBudget.smallBodyBytes, let declaredBodyBytes, bodyCount < declaredBodyBytes,
              let connection else { return false }
        return connection.peerHasClosed
    }
    var bodyCount: Int { spooledBody?.count ?? body.count }

    /// Forgets the body (too large, no room, not written), giving back its reservation.
    func dropBody(_ budget: BodyBudget) {
        body = []
        spooledBody = nil
        budget.release(&bodyReservation)
    }

    /// Appends a chunk (none: just starts the spool file) to the spooled body, moving what `body` held to disk first;
    /// on failure the body is dropped and the error kept for the handler.
    func spool(_ chunk: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0), into directory: String, budget: BodyBudget) {
        do {
            if spooledBody == nil {
                let spooled = try SpooledBody(directory: directory)
                try body.withUnsafeBytes { try spooled.append($0) }
                spooledBody = spooled
                body = []
            }
            try spooledBody?.append(chunk)
        } catch {
            bodyWriteError = error
            dropBody(budget)
        }
    }
    /// The client holds its body back until told to send it (`Expect: 100-continue`).
    var waitsForContinue: Bool { request?.headers["expect"]?.lowercased() == "100-continue" }
    /// Answered 431 by `uriLogger` already: MHD may still parse what it read, but nothing is handled.
    var isRefused = false
    /// Counted in `HTTPServer.activeRequests` until MHD has completed it and, when it was parked,
    /// `LaterReply.send(_:)` has returned: whichever of those `ends` comes last.
    var isActive = false
    private let ends = Atomic<Int>(1)
    /// What `LaterReply.send(_:)` left for the connection's thread to call and write.
    var laterAnswer: (() -> HTTPResponse)?
    /// The server that counted the request (set with `isActive`).
    weak var server: HTTPServer?
    /// Who takes the socket once a 101 answer has been sent (`HTTPResponse.upgrade`).
    var upgrade: (@Sendable (UpgradedConnection) -> Void)?

    func awaitsSend() { ends.add(1, ordering: .acquiringAndReleasing) }

    func ended(_ server: HTTPServer) {
        if ends.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 {
            server.activeRequests.subtract(1, ordering: .sequentiallyConsistent)
        }
    }

    init(target: String) { self.target = target }
}

/// MHD calls this first with the raw URI; the returned pointer becomes the request's `*con_cls`.
/// A target too large for libmicrohttpd to answer is refused here with a 431 (see `HTTPServer.acceptsTarget`).
private let uriLogger: roost_uri_log_callback = { _, uri, connection in
    guard let uri else { return Unmanaged.passRetained(RequestState(target: "/")).toOpaque() }
    let target = UnsafeBufferPointer(start: UnsafeRawPointer(uri).assumingMemoryBound(to: UInt8.self), count: strlen(uri))
    let state = RequestState(target: String(decoding: target, as: UTF8.self))
    if let connection, let open = roost_mhd_socket_context(connection) {
        state.connection = Unmanaged<OpenConnection>.fromOpaque(open).takeUnretainedValue()
        state.connection?.requestLineSeen.store(true, ordering: .releasing)
    }
    if !HTTPServer.acceptsTarget(target), let connection {
        roost_mhd_refuse_uri(connection)
        state.isRefused = true
    }
    roost_mhd_skip_query_parameters(uri)  // Read from `state.target`, never from MHD.
    return Unmanaged.passRetained(state).toOpaque()
}

/// Releases the per-request state once MHD is done with the request (answered, or its connection closed).
private let requestCompleted: MHD_RequestCompletedCallback = { cls, _, context, _ in
    guard let context, let pointer = context.pointee, let cls else { return }
    let state = Unmanaged<RequestState>.fromOpaque(pointer)
    let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()
    state.takeUnretainedValue().connection?.awaitRequest(headersTimeoutSeconds: server.limits.headersTimeoutSeconds)
    // Answered or not (the connection may have closed mid-body): the body's memory is free or about to be.
    if state.takeUnretainedValue().bodyReservation.bytes > 0 { server.bodyBudget.release(&state.takeUnretainedValue().bodyReservation) }
    if state.takeUnretainedValue().isActive {
        state.takeUnretainedValue().ended(server)
    }
    state.release()
    context.pointee = nil
}

private let collectHeader: MHD_KeyValueIterator = { context, _, key, value in
    guard let context, let key else { return MHD_Result.YES }
    let state = Unmanaged<RequestState>.fromOpaque(context).takeUnretainedValue()
    // Header names are ASCII (RFC 9110): lowercase them without the Unicode machinery.
    let length = strlen(key)
    let name = String(unsafeUninitializedCapacity: length) { buffer in
        for offset in 0..<length {
            let byte = UInt8(bitPattern: key[offset])
            buffer[offset] = byte >= 65 && byte <= 90 ? byte + 32 : byte
        }
        return length
    }
    state.request?.headers[name] = value.map { String(cString: $0) } ?? ""
    return MHD_Result.YES
}

/// MHD calls this once for the headers, once per body chunk, and once more with no data: then we answer.
private let accessHandler: MHD_AccessHandlerCallback = { cls, connection, _, method, _, uploadData, uploadDataSize, context in
    guard let cls, let connection, let context, let pointer = context.pointee, let uploadDataSize else { return MHD_Result.NO }
    let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()
    let state = Unmanaged<RequestState>.fromOpaque(pointer).takeUnretainedValue()
    guard !state.isRefused else { return MHD_Result.NO }  // Already answered: close.

    if state.request == nil {
        // The headers are in: the rest of the request is owed by the request deadline.
        guard state.connection?.awaitBody(requestTimeoutSeconds: server.limits.requestTimeoutSeconds) ?? true else {
            return MHD_Result.NO
        }
        let (path, query) = HTTPRequest.splitTarget(state.target)
        state.request = HTTPRequest(method: method.map { String(cString: $0) } ?? "GET", path: path, query: query)
        state.request?.target = state.target
        state.request?.headers.reserveCapacity(16)
        _ = MHD_get_connection_values(connection, MHD_ValueKind.HEADER_KIND, collectHeader, pointer)
        var address = [CChar](repeating: 0, count: 64)
        roost_mhd_client_address(connection, &address, socklen_t(address.count))
        state.request?.clientAddress = String(decoding: address.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        state.request?.countedClient = state.connection?.address
        guard let length = state.request?.headers["content-length"].flatMap(Int.init), length > 0 else { return MHD_Result.YES }
        if length > server.maxBodyBytes {
            guard state.waitsForContinue || length > server.maxBodyBytes + HTTPServer.discardedBodyBytes else {
                state.bodyTooLarge = true  // The chunks are dropped as they come; the 413 follows the last.
                return MHD_Result.YES
            }
            state.request?.bodyTooLarge = true
            return server.answerBeforeBody(on: connection, state: state)
        }
        // Reserved before a byte of the body is read (see `BodyBudget`); the buffer is made that size at once,
        // unless the body goes to disk.
        if server.bodyBudget.reserve(&state.bodyReservation, upTo: length, from: state.connection?.address) {
            state.declaredBodyBytes = length
            if let directory = server.spoolDirectory(for: state, bodyBytes: length) {
                state.spool(into: directory, budget: server.bodyBudget)
            } else {
                state.body.reserveCapacity(length)
            }
            return state.closedMidBody ? MHD_Result.NO : MHD_Result.YES  // NO: closed, and the room given back.
        }
        // As for a body too large: a small one is read and dropped, so the client reads its 503, not a reset.
        guard state.waitsForContinue || length > HTTPServer.discardedBodyBytes else {
            state.bodyOverBudget = true
            return MHD_Result.YES
        }
        state.request?.bodyOverBudget = true
        return server.answerBeforeBody(on: connection, state: state)
    }

    let chunkSize = uploadDataSize.pointee
    if chunkSize > 0 {
        if !state.dropsBody, let uploadData {
            let needed = state.bodyCount + chunkSize
            if needed > server.maxBodyBytes {
                state.bodyTooLarge = true
                state.dropBody(server.bodyBudget)
            } else if let directory = server.spoolDirectory(for: state, bodyBytes: needed) {
                if server.bodyBudget.grow(&state.bodyReservation, toHold: needed, maximum: server.maxBodyBytes,
                                          from: state.connection?.address) {
                    state.spool(UnsafeRawBufferPointer(start: uploadData, count: chunkSize), into: directory, budget: server.bodyBudget)
                } else {
                    state.bodyOverBudget = true
                    state.dropBody(server.bodyBudget)
                }
            } else if !server.bodyBudget.makeRoom(in: &state.body, for: needed, maximum: server.maxBodyBytes,
                                                  reservation: &state.bodyReservation, from: state.connection?.address) {
                state.bodyOverBudget = true  // A body without a declared length (chunked) outgrew the room left.
                state.dropBody(server.bodyBudget)
            } else {
                uploadData.withMemoryRebound(to: UInt8.self, capacity: chunkSize) {
                    state.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: chunkSize))
                }
            }
        }
        uploadDataSize.pointee = 0
        return state.closedMidBody ? MHD_Result.NO : MHD_Result.YES
    }

    if let answer = state.laterAnswer {  // Resumed by `LaterReply.send(_:)`.
        state.laterAnswer = nil
        return server.send(answer(), on: connection, state: state)
    }
    // The whole request is in: nothing more is owed (false: the deadline watcher has just ended it).
    guard state.connection?.owe(by: 0) ?? true else { return MHD_Result.NO }
    guard server.beginRequest(state) else { return MHD_Result.NO }  // Stopping: closed unanswered.
    var request = state.request!
    request.body = state.body
    request.spooledBody = state.spooledBody
    request.bodyWriteError = state.bodyWriteError
    request.bodyTooLarge = state.bodyTooLarge
    request.bodyOverBudget = state.bodyOverBudget
    state.body = []
    state.spooledBody = nil
    guard let response = server.handler(request, LaterReply(server: server, connection: connection, state: state)) else {
        return MHD_Result.YES  // Parked: `LaterReply.send(_:)` resumes the connection.
    }
    return server.send(response, on: connection, state: state)
}

/// MHD calls this on the connection's thread once a 101 answer's headers are sent: the socket is the
/// upgrade's owner's from here. The request counts as done (`stop()` must not wait for the socket's life).
///
/// The owner gets a duplicate of the socket, and MHD's connection is closed at once: libmicrohttpd 0.9.75
/// keeps an upgraded connection's memory pool (`ROOST_CONNECTION_MEMORY`) until it is closed, and by then
/// the response headers' write buffer has touched most of it (shrinking a pool block zeroes what it
/// frees): most of the pool stayed resident for each idle WebSocket (~100 KB of the 256 KB pools then).
/// Closing MHD's descriptor leaves the socket open: under `MHD_USE_TURBO` MHD does not `shutdown()` it, and it
/// took the socket out of its epoll set when the upgrade suspended the connection. The connection's `ConnectionGate` slot stays counted until the
/// owner closes its descriptor.
private let upgradeHandler: MHD_UpgradeHandler = { _, _, requestContext, extra, extraSize, socket, handle in
    guard let requestContext, let handle else { return }
    let state = Unmanaged<RequestState>.fromOpaque(requestContext).takeUnretainedValue()
    let leftover = extra.map { pointer in
        Array(UnsafeRawBufferPointer(start: UnsafeRawPointer(pointer), count: extraSize))
    } ?? []
    let server = state.server
    if state.isActive, let server {
        state.isActive = false
        state.ended(server)
    }
    if state.bodyReservation.bytes > 0 { server?.bodyBudget.release(&state.bodyReservation) }  // Over, whenever MHD says so.
    let upgrade = state.upgrade
    state.upgrade = nil
    let own = fcntl(socket, F_DUPFD_CLOEXEC, 0)
    guard let upgrade, let server, let open = state.connection, own >= 0 else {
        if own >= 0 { close(own) }
        _ = roost_mhd_upgrade_close(handle)  // Out of descriptors (or nobody to take it): closed.
        return
    }
    open.isHandedOff.store(true, ordering: .releasing)
    _ = roost_mhd_upgrade_close(handle)
    // MHD turned Nagle's algorithm back on for the upgrade; small frames (events, answers) must go out at once,
    // or a second one waits for the client's delayed ACK (40 ms).
    var one: Int32 = 1
    setsockopt(own, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    let gate = server.gate
    let address = open.address, daemon = open.daemon
    upgrade(UpgradedConnection(socket: own, leftover: leftover, release: { gate.release(address, daemon: daemon) }))
}

/// An `HTTPBodyStream` behind MHD's content-reader callback (MHD_create_response_from_callback): MHD asks for the
/// next piece when the socket can take it, into a buffer of `blockBytes`, and frees the reader with the response.
private final class StreamReader {
    /// MHD's buffer per streamed response (its `block_size`), the most one `read` is asked for.
    static let blockBytes = 64 * 1024
    let stream: HTTPBodyStream

    init(_ stream: HTTPBodyStream) { self.stream = stream }
}

private let readStream: MHD_ContentReaderCallback = { cls, position, buffer, maximum in
    guard let cls, let buffer else { return -2 }  // MHD_CONTENT_READER_END_WITH_ERROR
    let stream = Unmanaged<StreamReader>.fromOpaque(cls).takeUnretainedValue().stream
    let offset = Int(position)
    guard offset < stream.count else { return -1 }  // MHD_CONTENT_READER_END_OF_STREAM
    guard let bytes = try? stream.read(offset, min(maximum, stream.count - offset)), !bytes.isEmpty, bytes.count <= maximum else {
        return -2  // The connection is closed: the client sees fewer bytes than the Content-Length it was promised.
    }
    bytes.withUnsafeBytes { UnsafeMutableRawPointer(buffer).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
    return bytes.count
}

private let streamFinished: MHD_ContentReaderFreeCallback = { cls in
    guard let cls else { return }
    Unmanaged<StreamReader>.fromOpaque(cls).release()
}
