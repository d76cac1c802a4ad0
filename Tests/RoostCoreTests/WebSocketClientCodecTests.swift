import RoostCore
import Testing

/// The client side of the shared RFC 6455 codec (the server side is in RoostServerTests.WebSocketCodecTests):
/// masked frames out, unmasked frames in, and the handshake's SHA-1.
@Suite struct WebSocketClientCodecTests {
    @Test func sha1MatchesTheStandardVectorsAndRFC6455sExample() {
        func hex(_ bytes: [UInt8]) -> String { bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined() }
        #expect(hex(SHA1.digest([])) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        #expect(hex(SHA1.digest(Array("abc".utf8))) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(hex(SHA1.digest(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)))
                == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
        #expect(hex(SHA1.digest(Array(repeating: UInt8(ascii: "a"), count: 1_000_000))) == "34aa973cd4c4daa4f61eeb2bdbad27316534016f")
        // RFC 6455 §1.3: the key "dGhlIHNhbXBsZSBub25jZQ==" is answered "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=".
        let accept = Base64.encode(SHA1.digest(Array("dGhlIHNhbXBsZSBub25jZQ==258EAFA5-E914-47DA-95CA-C5AB0DC85B11".utf8)))
        #expect(accept == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    @Test func aClientsFramesAreMaskedAndTheServersReaderUnmasksThem() {
        let mask: [UInt8] = [1, 2, 3, 4]
        let frame = WebSocketFrame.text("Hello", mask: mask)
        #expect(frame[0] == 0x81 && frame[1] == 0x80 | 5)
        #expect(Array(frame[2..<6]) == mask)
        #expect(frame[6] == UInt8(ascii: "H") ^ 1)
        var server = WebSocketReader(maxMessageBytes: 1024, role: .server)
        server.append(frame + WebSocketFrame.encode(.text, Array(repeating: UInt8(ascii: "x"), count: 70_000), mask: WebSocketFrame.randomMask()))
        #expect(server.next() == .text("Hello"))
        #expect(server.next() == .fail(.messageTooBig, "message over 1024 bytes"))
    }

    @Test func aClientReadsUnmaskedFramesAndRefusesMaskedOnes() {
        var client = WebSocketReader(maxMessageBytes: 1 << 20, role: .client)
        let large = String(repeating: "z", count: 70_000)
        let bytes = WebSocketFrame.text("{\"op\":\"connected\"}") + WebSocketFrame.encode(.ping, [7]) + WebSocketFrame.text(large)
        for byte in bytes { client.append([byte]) }  // Byte by byte, as a slow network delivers.
        #expect(client.next() == .text("{\"op\":\"connected\"}"))
        #expect(client.next() == .ping([7]))
        #expect(client.next() == .text(large))
        #expect(client.next() == nil)

        var strict = WebSocketReader(maxMessageBytes: 1024, role: .client)
        strict.append(WebSocketFrame.text("hi", mask: [9, 9, 9, 9]))
        #expect(strict.next() == .fail(.protocolError, "server frames must not be masked"))
    }
}
