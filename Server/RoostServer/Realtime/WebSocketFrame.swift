/// WebSocket frame opcodes (RFC 6455 §5.2).
enum WebSocketOpcode: UInt8 {
    case continuation = 0x0
    case text = 0x1
    case binary = 0x2
    case close = 0x8
    case ping = 0x9
    case pong = 0xA

    var isControl: Bool { rawValue & 0x8 != 0 }
}

/// Status codes a close frame carries (RFC 6455 §7.4.1).
enum WebSocketCloseCode: UInt16 {
    case normal = 1000
    case goingAway = 1001
    case protocolError = 1002
    case unsupportedData = 1003
    case invalidPayload = 1007
    case policyViolation = 1008
    case messageTooBig = 1009
    case internalError = 1011

    /// Whether a peer may send `code` in a close frame (§7.4.1–7.4.2: 1004–1006, 1015 and the
    /// unassigned ranges must not appear on the wire).
    static func isSendable(_ code: UInt16) -> Bool {
        switch code {
        case 1000...1003, 1007...1011, 3000...4999: true
        default: false
        }
    }
}

/// Server frames: never masked (§5.1), always whole (the server does not fragment what it sends).
enum WebSocketFrame {
    /// One final frame of `opcode` carrying `payload`.
    static func encode(_ opcode: WebSocketOpcode, _ payload: some Collection<UInt8>) -> [UInt8] {
        var frame: [UInt8] = []
        frame.reserveCapacity(payload.count + 10)
        frame.append(0x80 | opcode.rawValue)
        switch payload.count {
        case ..<126:
            frame.append(UInt8(payload.count))
        case ..<65536:
            frame.append(126)
            frame.append(UInt8(payload.count >> 8))
            frame.append(UInt8(payload.count & 0xFF))
        default:
            frame.append(127)
            for shift in stride(from: 56, through: 0, by: -8) { frame.append(UInt8((UInt64(payload.count) >> UInt64(shift)) & 0xFF)) }
        }
        frame.append(contentsOf: payload)
        return frame
    }

    static func text(_ text: String) -> [UInt8] { encode(.text, text.utf8) }

    /// A close frame with `code` and a reason (cut to fit a control frame's 125 bytes).
    static func close(_ code: WebSocketCloseCode, reason: String = "") -> [UInt8] {
        var payload = [UInt8(code.rawValue >> 8), UInt8(code.rawValue & 0xFF)]
        payload.append(contentsOf: Array(reason.utf8.prefix(123)))
        return encode(.close, payload)
    }
}
