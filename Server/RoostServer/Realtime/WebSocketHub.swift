import CMicroHTTPD
import Foundation
import RoostCore
import Glibc
import Synchronization

/// Owns its share of the WebSockets (`WebSocketHubs` spreads them over one hub per core): one thread waits on
/// all of them with epoll, so an idle socket costs a few hundred bytes and no thread. It reads and checks frames (`WebSocketReader`), answers pings and
/// closes, pings each client every `pingInterval` and drops one that did not answer the previous ping
/// (as parse-server's `ParseWebSocketServer`), and writes what other threads `send`.
///
/// Whole text messages go to `receive` (on this thread: it must hand real work elsewhere, and report each
/// one `handled`), and `closed` is told once per connection, however it ended. Other threads talk to the hub through `commands`
/// and an eventfd that wakes it; only the hub's thread touches the sockets.
final class WebSocketHub: @unchecked Sendable {
    struct Settings: Sendable {
        /// A message (all its fragments) over this closes the connection with 1009.
        var maxMessageBytes = 64 * 1024
        var pingIntervalMilliseconds = 10_000
        /// A client that lets this much pile up unread is dropped (it cannot keep up).
        var maxQueuedBytes = 4 * 1024 * 1024
        /// Messages of one client handed to `receive` and not yet `handled`: past this, its socket is not read
        /// until some are (a flood waits in its own socket, not in memory, and others' messages go on).
        var maxPendingMessages = 32
        /// A connection that is closing (a close frame queued) and has not taken its last frames by then is
        /// dropped: a client that sent close and stopped reading must not keep its slot and outbox.
        var closeTimeoutMilliseconds = 5_000
    }

    typealias Receive = @Sendable (_ connection: UInt64, _ text: String) -> Void
    typealias Closed = @Sendable (_ connection: UInt64) -> Void

    let settings: Settings
    private let receive: Receive
    private let closed: Closed
    private let epoll: Int32
    private let wake: Int32
    private let commands = Mutex<(pending: [Command], stopped: Bool)>(([], false))
    private let nextId = Atomic<UInt64>(1)
    /// This hub's place among `WebSocketHubs`' (its ids are `n * count + index`, n ≥ 1: never 0, the wake-up's).
    let shard: (index: Int, count: Int)
    private let openCount = Atomic<Int>(0)
    private let finished = DispatchSemaphore(value: 0)
    /// The hub thread's own: every open connection by id.
    private var peers: [UInt64: Peer] = [:]
    /// The hub thread's own: closing connections by id, with the time they are dropped at if still there.
    private var closeDeadlines: [UInt64: UInt64] = [:]
    private var isRunning = true

    private enum Command {
        case adopt(UInt64, UpgradedConnection)
        case send(UInt64, [UInt8])
        case sendBatch(WebSocketFrameBatch)
        case close(UInt64, WebSocketCloseCode, String)
        case handled(UInt64)
        case stop
    }

    private final class Peer {
        let id: UInt64
        let connection: UpgradedConnection
        var reader: WebSocketReader
        var outbox: [UInt8] = []
        var sent = 0
        var watchesWrites = false
        /// Messages given to `receive` and not yet reported `handled`; while at the maximum, reading pauses.
        var pending = 0
        var isPaused = false
        var awaitingPong = false
        /// A close frame is queued: nothing more is read, and the socket goes once it is written.
        var closesWhenFlushed = false

        init(id: UInt64, connection: UpgradedConnection, maxMessageBytes: Int) {
            self.id = id
            self.connection = connection
            reader = WebSocketReader(maxMessageBytes: maxMessageBytes)
        }

        var socket: Int32 { connection.socket }
    }

    /// Starts the hub's thread. - Throws: when epoll or eventfd cannot be made (out of descriptors).
    init(settings: Settings = Settings(), shard: (index: Int, count: Int) = (0, 1), receive: @escaping Receive,
         closed: @escaping Closed) throws {
        self.settings = settings
        self.shard = shard
        self.receive = receive
        self.closed = closed
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        wake = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard epoll >= 0, wake >= 0 else {
            let reason = String(cString: strerror(errno))
            if epoll >= 0 { Glibc.close(epoll) }
            if wake >= 0 { Glibc.close(wake) }
            throw HTTPServerError.cannotListen(host: "websocket", port: 0, reason: reason)
        }
        _ = roost_epoll_control(epoll, EPOLL_CTL_ADD, wake, EPOLLIN.rawValue, 0)
        let thread = Thread { [self] in
            nameCurrentThread(shard.count > 1 ? "roost-websocket-\(shard.index)" : "roost-websocket")
            run()
            finished.signal()
        }
        thread.start()
    }

    /// Open WebSocket connections.
    var connectionCount: Int { openCount.load(ordering: .relaxed) }

    /// Takes an upgraded socket; returns its id (nil when the hub has stopped: the socket is told 1001 and closed).
    @discardableResult
    func adopt(_ connection: UpgradedConnection) -> UInt64? {
        let id = nextId.add(1, ordering: .relaxed).oldValue * UInt64(shard.count) + UInt64(shard.index)
        guard post(.adopt(id, connection)) else {
            // The client has its 101 already and counts as connected: it hears "going away" as the others did.
            // One small frame into a fresh socket's empty buffer; a failed send changes nothing.
            let frame = WebSocketFrame.close(.goingAway, reason: "server stopping")
            _ = frame.withUnsafeBytes { Glibc.send(connection.socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
            connection.close()
            return nil
        }
        return id
    }

    /// Sends a text message (dropped when the connection has gone).
    func send(_ text: String, to connection: UInt64) {
        post(.send(connection, WebSocketFrame.text(text)))
    }

    /// Sends a text message given as UTF-8 (JSON the server encoded: no String made and checked on the way).
    func send(utf8 text: [UInt8], to connection: UInt64) {
        post(.send(connection, WebSocketFrame.encode(.text, text)))
    }

    /// Sends each frame of `batch` to its connection (those gone are skipped), in order, as one command.
    func send(_ batch: WebSocketFrameBatch) {
        guard !batch.isEmpty else { return }
        post(.sendBatch(batch))
    }

    /// Reports a message given to `receive` handled: its connection may be read further.
    func handled(_ connection: UInt64) {
        post(.handled(connection))
    }

    /// Closes a connection with `code` (its `closed` is told).
    func close(_ connection: UInt64, code: WebSocketCloseCode, reason: String = "") {
        post(.close(connection, code, reason))
    }

    /// Closes every connection (1001 going away) and ends the thread; later upgrades are closed at once.
    func stop() {
        guard post(.stop) else { return }
        finished.wait()
        Glibc.close(epoll)
        Glibc.close(wake)
    }

    @discardableResult
    private func post(_ command: Command) -> Bool {
        // The wake-up is written under the lock: once `stop` is posted no other write follows, so `stop()` may close
        // the eventfd without a late writer hitting a descriptor number the process has since reused.
        commands.withLock { state -> Bool in
            guard !state.stopped else { return false }
            if case .stop = command { state.stopped = true }
            state.pending.append(command)
            // One wake-up per batch: while commands wait, the hub has been woken already and will take them all
            // (a change sent to 1,000 subscribers made 1,000 eventfd writes).
            if state.pending.count == 1 {
                var one: UInt64 = 1
                _ = Glibc.write(wake, &one, 8)
            }
            return true
        }
    }

    // MARK: The hub's thread

    private func run() {
        var data = [UInt64](repeating: 0, count: 64)
        var events = [UInt32](repeating: 0, count: 64)
        var nextPing = OpenConnection.now() + UInt64(settings.pingIntervalMilliseconds)
        while isRunning {
            let now = OpenConnection.now()
            let wakeAt = min(nextPing, closeDeadlines.values.min() ?? .max)
            let timeout = wakeAt > now ? Int32(clamping: wakeAt - now) : 0
            let count = roost_epoll_wait(epoll, &data, &events, 64, timeout)
            if count < 0, errno != EINTR { break }
            for index in 0..<Int(max(count, 0)) {
                if data[index] == 0 {
                    runCommands()
                } else if let peer = peers[data[index]] {
                    let event = events[index]
                    if peer.isPaused, event & (EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0 {
                        release(peer)  // Gone while paused: epoll reports it whatever we asked for.
                        continue
                    }
                    if event & (EPOLLIN.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue | EPOLLRDHUP.rawValue) != 0 {
                        read(peer)
                    }
                    if event & EPOLLOUT.rawValue != 0, peers[peer.id] != nil { flush(peer) }
                }
            }
            if !closeDeadlines.isEmpty { dropLateClosers() }
            if OpenConnection.now() >= nextPing {
                pingAll()
                nextPing = OpenConnection.now() + UInt64(settings.pingIntervalMilliseconds)
            }
        }
    }

    private func runCommands() {
        var counter: UInt64 = 0
        _ = Glibc.read(wake, &counter, 8)
        let pending = commands.withLock { state in
            defer { state.pending = [] }
            return state.pending
        }
        for command in pending {
            switch command {
            case .adopt(let id, let connection):
                let peer = Peer(id: id, connection: connection, maxMessageBytes: settings.maxMessageBytes)
                guard roost_epoll_control(epoll, EPOLL_CTL_ADD, peer.socket,
                                          EPOLLIN.rawValue | EPOLLRDHUP.rawValue, id) == 0 else {
                    connection.close()
                    closed(id)
                    continue
                }
                peers[id] = peer
                openCount.add(1, ordering: .relaxed)
                if !connection.leftover.isEmpty {
                    peer.reader.append(connection.leftover)
                    handleFrames(of: peer)
                }
            case .send(let id, let frame):
                if let peer = peers[id], !peer.closesWhenFlushed { queue(frame, to: peer) }
            case .sendBatch(let batch):
                batch.bytes.withUnsafeBytes { bytes in
                    var start = 0
                    for (id, end) in batch.frames {
                        defer { start = end }
                        if let peer = peers[id], !peer.closesWhenFlushed { queue(UnsafeRawBufferPointer(rebasing: bytes[start..<end]), to: peer) }
                    }
                }
            case .close(let id, let code, let reason):
                if let peer = peers[id], !peer.closesWhenFlushed { closeGracefully(peer, code, reason) }
            case .handled(let id):
                guard let peer = peers[id] else { continue }
                peer.pending -= 1
                if peer.isPaused, peer.pending < settings.maxPendingMessages {
                    handleFrames(of: peer)  // What was read already, first.
                    if peers[id] != nil, peer.pending < settings.maxPendingMessages {
                        peer.isPaused = false
                        watch(peer)
                    }
                }
            case .stop:
                for peer in Array(peers.values) {
                    if !peer.closesWhenFlushed { peer.outbox.append(contentsOf: WebSocketFrame.close(.goingAway, reason: "server stopping")) }
                    writeOnce(peer)
                    release(peer)
                }
                isRunning = false
            }
        }
    }

    private func read(_ peer: Peer) {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        // A few reads at most, then the others get their turn (epoll is level-triggered: it comes back).
        for _ in 0..<4 where !peer.isPaused {
            let got = chunk.withUnsafeMutableBytes { recv(peer.socket, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if got > 0 {
                if peer.closesWhenFlushed { continue }  // After a close frame, the rest is ignored.
                peer.reader.append(chunk[0..<got])
                handleFrames(of: peer)
                guard peers[peer.id] != nil else { return }
                if peer.pending >= settings.maxPendingMessages {
                    peer.isPaused = true
                    return watch(peer)
                }
                if got < chunk.count { return }
            } else if got < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR {
                return
            } else {
                release(peer)  // The client went away (with or without a close frame), or the socket failed.
                return
            }
        }
    }

    private func handleFrames(of peer: Peer) {
        while !peer.closesWhenFlushed, peer.pending < settings.maxPendingMessages, let event = peer.reader.next() {
            switch event {
            case .text(let text):
                peer.pending += 1
                receive(peer.id, text)
            case .binary: closeGracefully(peer, .unsupportedData, "binary messages are not supported")
            case .ping(let payload): queue(WebSocketFrame.encode(.pong, payload), to: peer)
            case .pong: peer.awaitingPong = false
            case .close(let code, _):
                // Echo the client's code (§5.5.1), then close once it is written.
                startClosing(peer)
                let reply = code.map { [UInt8($0 >> 8), UInt8($0 & 0xFF)] } ?? []
                queue(WebSocketFrame.encode(.close, reply), to: peer, force: true)
            case .fail(let code, let reason): closeGracefully(peer, code, reason)
            }
            guard peers[peer.id] != nil else { return }
        }
    }

    private func closeGracefully(_ peer: Peer, _ code: WebSocketCloseCode, _ reason: String) {
        startClosing(peer)
        queue(WebSocketFrame.close(code, reason: reason), to: peer, force: true)
    }

    private func queue(_ frame: [UInt8], to peer: Peer, force: Bool = false) {
        frame.withUnsafeBytes { queue($0, to: peer, force: force) }
    }

    private func queue(_ frame: UnsafeRawBufferPointer, to peer: Peer, force: Bool = false) {
        guard force || peer.outbox.count - peer.sent + frame.count <= settings.maxQueuedBytes else {
            return release(peer)  // It reads too slowly to be sent what it subscribed to.
        }
        var taken = 0
        if peer.sent == peer.outbox.count {
            // Nothing waits: straight from the caller's bytes to the socket, and only what it does not take is copied.
            let wrote = Glibc.send(peer.socket, frame.baseAddress, frame.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            if wrote >= 0 {
                taken = wrote
            } else if errno != EAGAIN, errno != EWOULDBLOCK, errno != EINTR {
                return release(peer)
            }
        }
        if taken < frame.count { peer.outbox.append(contentsOf: frame[taken...]) }
        flush(peer)
    }

    /// Writes what is queued; watches for room when the socket is full; closes once a final close frame is out.
    private func flush(_ peer: Peer) {
        guard writeOnce(peer) else { return release(peer) }
        if peer.sent == peer.outbox.count {
            peer.outbox.removeAll(keepingCapacity: peer.outbox.capacity <= 4096)
            peer.sent = 0
            if peer.closesWhenFlushed { return release(peer) }
            if peer.watchesWrites {
                peer.watchesWrites = false
                watch(peer)
            }
        } else if !peer.watchesWrites {
            peer.watchesWrites = true
            watch(peer)
        }
    }

    /// Sends as much of the outbox as the socket takes now; false when the socket failed.
    @discardableResult
    private func writeOnce(_ peer: Peer) -> Bool {
        while peer.sent < peer.outbox.count {
            let wrote = peer.outbox.withUnsafeBytes {
                Glibc.send(peer.socket, $0.baseAddress! + peer.sent, $0.count - peer.sent, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
            if wrote > 0 {
                peer.sent += wrote
            } else if wrote < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR {
                return true
            } else {
                return false
            }
        }
        return true
    }

    /// Sets what epoll reports for the socket: reads unless paused, room to write while the outbox waits.
    private func watch(_ peer: Peer) {
        let reads = peer.isPaused ? 0 : EPOLLIN.rawValue | EPOLLRDHUP.rawValue
        let events = reads | (peer.watchesWrites ? EPOLLOUT.rawValue : 0)
        _ = roost_epoll_control(epoll, EPOLL_CTL_MOD, peer.socket, events, peer.id)
    }

    /// Pings every client; drops those that did not answer the previous ping (no close frame: they are gone).
    private func pingAll() {
        // A paused client's pong may wait unread behind its other messages: it is not held to this round.
        for peer in Array(peers.values) where !peer.closesWhenFlushed && !peer.isPaused {
            if peer.awaitingPong {
                release(peer)
            } else {
                peer.awaitingPong = true
                queue(WebSocketFrame.encode(.ping, []), to: peer)
            }
        }
    }

    private func startClosing(_ peer: Peer) {
        peer.closesWhenFlushed = true
        closeDeadlines[peer.id] = OpenConnection.now() + UInt64(settings.closeTimeoutMilliseconds)
    }

    /// Drops the closing connections that have not taken their last frames in time (no more waiting for them).
    private func dropLateClosers() {
        let now = OpenConnection.now()
        for (id, deadline) in closeDeadlines where deadline <= now {
            if let peer = peers[id] { release(peer) } else { closeDeadlines[id] = nil }
        }
    }

    /// Forgets the socket, tells `closed`, and closes it (which gives its connection slot back).
    private func release(_ peer: Peer) {
        closeDeadlines[peer.id] = nil
        guard peers.removeValue(forKey: peer.id) != nil else { return }
        _ = roost_epoll_control(epoll, EPOLL_CTL_DEL, peer.socket, 0, 0)
        openCount.subtract(1, ordering: .relaxed)
        closed(peer.id)
        peer.connection.close()
    }
}
