/// Turns the bytes the peer sends into whole messages and control frames (RFC 6455 §5), checking
/// everything an end must: a client's frames are masked and a server's are not (`Role`), control frames
/// are short and whole, fragments come in order, text is UTF-8, and no message grows past
/// `maxMessageBytes`. Pure: no I/O. The server and the SDK's client share it.
///
/// Feed it with `append(_:)`, then call `next()` until it returns nil (it needs more bytes). After a
/// `.fail`, the connection must be closed with that code: the reader answers nothing more.
public struct WebSocketReader: Sendable {
    /// Which end reads: a server reads a client's (masked) frames, a client a server's (unmasked).
    public enum Role: Sendable {
        case server, client
    }

    public enum Event: Equatable, Sendable {
        case text(String)
        case binary([UInt8])
        case ping([UInt8])
        case pong([UInt8])
        /// The client's close frame: its code (nil when it sent none) and reason.
        case close(UInt16?, String)
        /// The client broke the protocol: close with `code`.
        case fail(WebSocketCloseCode, String)
    }

    public let maxMessageBytes: Int
    public let role: Role
    /// Bytes received but not parsed yet, from `start`.
    private var buffer: [UInt8] = []
    private var start = 0
    /// The fragments of a message in progress (its first frame's opcode, and the payloads so far).
    private var messageOpcode: WebSocketOpcode?
    private var message: [UInt8] = []
    private var failed = false

    public init(maxMessageBytes: Int, role: Role = .server) {
        self.maxMessageBytes = maxMessageBytes
        self.role = role
    }

    /// Bytes waiting to be parsed (for tests and memory bounds).
    public var bufferedBytes: Int { buffer.count - start + message.count }

    public mutating func append(_ bytes: some Collection<UInt8>) {
        guard !failed else { return }
        if start > 0, start >= buffer.count / 2 {  // Drop what was parsed before growing.
            buffer.removeSubrange(0..<start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete event, or nil when more bytes are needed.
    public mutating func next() -> Event? {
        // A loop, not recursion: a client may send any number of (empty) fragments in one read.
        while !failed {
            switch nextFrame() {
            case .needMore: return nil
            case .fragment: continue
            case .event(let event): return event
            }
        }
        return nil
    }

    private enum Step {
        case needMore
        /// A non-final fragment was added to the message in progress.
        case fragment
        case event(Event)
    }

    private mutating func nextFrame() -> Step {
        let available = buffer.count - start
        guard available >= 2 else { return .needMore }
        let first = buffer[start], second = buffer[start + 1]
        let isFinal = first & 0x80 != 0
        guard first & 0x70 == 0 else { return .event(fail(.protocolError, "reserved bits set")) }
        guard let opcode = WebSocketOpcode(rawValue: first & 0x0F) else { return .event(fail(.protocolError, "unknown opcode")) }
        let isMasked = second & 0x80 != 0
        switch role {
        case .server: guard isMasked else { return .event(fail(.protocolError, "client frames must be masked")) }
        case .client: guard !isMasked else { return .event(fail(.protocolError, "server frames must not be masked")) }
        }
        if opcode.isControl {
            // Judged on the first two bytes (RFC 6455 §5.5), as Parse's `ws` does: a control frame that announces an
            // extended length is refused at once, not after waiting for length bytes that may never come.
            guard isFinal else { return .event(fail(.protocolError, "control frames must not be fragmented")) }
            guard second & 0x7F <= 125 else { return .event(fail(.protocolError, "control frame payload over 125 bytes")) }
        }
        let maskLength = isMasked ? 4 : 0
        var headerLength = 2
        var length = UInt64(second & 0x7F)
        if length == 126 {
            guard available >= 4 else { return .needMore }
            length = UInt64(buffer[start + 2]) << 8 | UInt64(buffer[start + 3])
            headerLength = 4
        } else if length == 127 {
            guard available >= 10 else { return .needMore }
            length = (0..<8).reduce(UInt64(0)) { $0 << 8 | UInt64(buffer[start + 2 + $1]) }
            guard length >> 63 == 0 else { return .event(fail(.protocolError, "frame length out of range")) }
            headerLength = 10
        }
        if !opcode.isControl {
            // Refused on the header alone, before its payload is buffered.
            guard length <= UInt64(maxMessageBytes - message.count) else {
                return .event(fail(.messageTooBig, "message over \(maxMessageBytes) bytes"))
            }
            if opcode == .continuation {
                guard messageOpcode != nil else { return .event(fail(.protocolError, "continuation without a message")) }
            } else if messageOpcode != nil {
                return .event(fail(.protocolError, "new message before the previous one ended"))
            }
        }
        let total = headerLength + maskLength + Int(length)
        guard available >= total else { return .needMore }
        let maskStart = start + headerLength
        let payloadStart = maskStart + maskLength
        var payload = Array(buffer[payloadStart..<(start + total)])
        if isMasked { for index in payload.indices { payload[index] ^= buffer[maskStart + index % 4] } }
        start += total
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= 65536)
            start = 0
        }

        switch opcode {
        case .ping: return .event(.ping(payload))
        case .pong: return .event(.pong(payload))
        case .close: return .event(closeEvent(payload))
        case .text, .binary, .continuation:
            if opcode != .continuation { messageOpcode = opcode }
            message.append(contentsOf: payload)
            guard isFinal else { return .fragment }
            let kind = messageOpcode!
            let whole = message
            messageOpcode = nil
            message = []
            if kind == .binary { return .event(.binary(whole)) }
            guard let text = String(validating: whole, as: UTF8.self) else { return .event(fail(.invalidPayload, "text is not UTF-8")) }
            return .event(.text(text))
        }
    }

    private mutating func closeEvent(_ payload: [UInt8]) -> Event {
        if payload.isEmpty { return .close(nil, "") }
        guard payload.count >= 2 else { return fail(.protocolError, "close payload of one byte") }
        let code = UInt16(payload[0]) << 8 | UInt16(payload[1])
        guard WebSocketCloseCode.isSendable(code) else { return fail(.protocolError, "invalid close code \(code)") }
        guard let reason = String(validating: payload[2...], as: UTF8.self) else {
            return fail(.invalidPayload, "close reason is not UTF-8")
        }
        return .close(code, reason)
    }

    private mutating func fail(_ code: WebSocketCloseCode, _ reason: String) -> Event {
        failed = true
        buffer = []
        message = []
        return .fail(code, reason)
    }
}
