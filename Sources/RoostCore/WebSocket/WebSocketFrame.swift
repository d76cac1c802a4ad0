/// WebSocket frame opcodes (RFC 6455 §5.2).
public enum WebSocketOpcode: UInt8, Sendable {
    case continuation = 0x0
    case text = 0x1
    case binary = 0x2
    case close = 0x8
    case ping = 0x9
    case pong = 0xA

    public var isControl: Bool { rawValue & 0x8 != 0 }
}

/// Status codes a close frame carries (RFC 6455 §7.4.1).
public enum WebSocketCloseCode: UInt16, Sendable {
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
    public static func isSendable(_ code: UInt16) -> Bool {
        switch code {
        case 1000...1003, 1007...1011, 3000...4999: true
        default: false
        }
    }
}

/// Frames as one end writes them, always whole (neither end fragments what it sends). A server's are never
/// masked; a client's are always masked with a fresh key (§5.1, §5.3): pass `mask`.
public enum WebSocketFrame: Sendable {
    /// One final frame of `opcode` carrying `payload`, masked with `mask` (4 bytes) when given.
    public static func encode(_ opcode: WebSocketOpcode, _ payload: some Collection<UInt8>, mask: [UInt8]? = nil) -> [UInt8] {
        var frame: [UInt8] = []
        frame.reserveCapacity(payload.count + 14)
        appendHeader(opcode, payloadCount: payload.count, masked: mask != nil, to: &frame)
        guard let mask else {
            frame.append(contentsOf: payload)
            return frame
        }
        precondition(mask.count == 4, "a masking key is 4 bytes")
        frame.append(contentsOf: mask)
        for (index, byte) in payload.enumerated() { frame.append(byte ^ mask[index & 3]) }
        return frame
    }

    /// Appends the header of one final frame of `opcode` whose payload is `payloadCount` bytes (the length in the
    /// fewest bytes that hold it, §5.2), without its masking key: the payload follows (unmasked, or its key then it).
    public static func appendHeader(_ opcode: WebSocketOpcode, payloadCount: Int, masked: Bool = false, to frame: inout [UInt8]) {
        frame.append(0x80 | opcode.rawValue)
        let maskBit: UInt8 = masked ? 0x80 : 0
        switch payloadCount {
        case ..<126:
            frame.append(maskBit | UInt8(payloadCount))
        case ..<65536:
            frame.append(maskBit | 126)
            frame.append(UInt8(payloadCount >> 8))
            frame.append(UInt8(payloadCount & 0xFF))
        default:
            frame.append(maskBit | 127)
            for shift in stride(from: 56, through: 0, by: -8) { frame.append(UInt8((UInt64(payloadCount) >> UInt64(shift)) & 0xFF)) }
        }
    }

    public static func text(_ text: String, mask: [UInt8]? = nil) -> [UInt8] { encode(.text, text.utf8, mask: mask) }

    /// A close frame with `code` and a reason (cut to fit a control frame's 125 bytes).
    public static func close(_ code: WebSocketCloseCode, reason: String = "", mask: [UInt8]? = nil) -> [UInt8] {
        var payload = [UInt8(code.rawValue >> 8), UInt8(code.rawValue & 0xFF)]
        payload.append(contentsOf: Array(reason.utf8.prefix(123)))
        return encode(.close, payload, mask: mask)
    }

    /// A fresh masking key for a client frame.
    public static func randomMask() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        let bits = generator.next() as UInt32
        return [UInt8(bits >> 24), UInt8((bits >> 16) & 0xFF), UInt8((bits >> 8) & 0xFF), UInt8(bits & 0xFF)]
    }
}
