import RoostCore
import Testing
@testable import RoostServer

/// The pure parts of LiveQuery's WebSocket: the handshake's accept value, the frame reader's checks
/// (RFC 6455 §5) and the LiveQuery message schema (parse-server's RequestSchema.js, as tv4 reports it).
@Suite struct WebSocketCodecTests {
    /// A client frame: masked with a fixed key.
    static func clientFrame(_ opcode: UInt8, _ payload: [UInt8], final: Bool = true, masked: Bool = true) -> [UInt8] {
        let key: [UInt8] = [0x37, 0xfa, 0x21, 0x3d]
        var frame: [UInt8] = [(final ? 0x80 : 0) | opcode]
        let maskBit: UInt8 = masked ? 0x80 : 0
        if payload.count < 126 {
            frame.append(maskBit | UInt8(payload.count))
        } else if payload.count < 65536 {
            frame += [maskBit | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xff)]
        } else {
            frame.append(maskBit | 127)
            for shift in stride(from: 56, through: 0, by: -8) { frame.append(UInt8((payload.count >> shift) & 0xff)) }
        }
        guard masked else { return frame + payload }
        return frame + key + payload.enumerated().map { $0.element ^ key[$0.offset % 4] }
    }

    static func events(_ bytes: [UInt8], maxMessageBytes: Int = 64 * 1024, byteByByte: Bool = false) -> [WebSocketReader.Event] {
        var reader = WebSocketReader(maxMessageBytes: maxMessageBytes)
        var events: [WebSocketReader.Event] = []
        let chunks = byteByByte ? bytes.map { [$0] } : [bytes]
        for chunk in chunks {
            reader.append(chunk)
            while let event = reader.next() { events.append(event) }
        }
        return events
    }

    @Test func acceptValueIsRFC6455sExample() throws {
        #expect(WebSocketHandshake.acceptValue(forKey: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        let headers = ["upgrade": "websocket", "connection": "Upgrade", "sec-websocket-version": "13",
                       "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ=="]
        #expect(try WebSocketHandshake.accept(method: "GET", headers: headers) == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        #expect(throws: WebSocketHandshake.Refusal.unsupportedVersion) {
            try WebSocketHandshake.accept(method: "GET", headers: headers.merging(["sec-websocket-version": "8"]) { $1 })
        }
        #expect(throws: WebSocketHandshake.Refusal.self) { try WebSocketHandshake.accept(method: "POST", headers: headers) }
        #expect(throws: WebSocketHandshake.Refusal.self) {
            try WebSocketHandshake.accept(method: "GET", headers: headers.merging(["sec-websocket-key": "c2hvcnQ="]) { $1 })
        }
    }

    @Test func readsMaskedTextAndFragmentsWithControlFramesBetween() {
        let bytes = Self.clientFrame(0x1, Array("Hel".utf8), final: false)
            + Self.clientFrame(0x9, Array("p".utf8))
            + Self.clientFrame(0x0, Array("lo, ".utf8), final: false)
            + Self.clientFrame(0x0, Array("wörld".utf8))
            + Self.clientFrame(0x1, Array(repeating: UInt8(ascii: "a"), count: 300))
            + Self.clientFrame(0x8, [0x03, 0xe8] + Array("bye".utf8))
        let expected: [WebSocketReader.Event] = [.ping(Array("p".utf8)), .text("Hello, wörld"), .text(String(repeating: "a", count: 300)),
                                                 .close(1000, "bye")]
        #expect(Self.events(bytes) == expected)
        #expect(Self.events(bytes, byteByByte: true) == expected)
    }

    @Test func protocolErrorsAreReportedWithTheirCloseCode() {
        #expect(Self.events(Self.clientFrame(0x1, Array("{}".utf8), masked: false)) == [.fail(.protocolError, "client frames must be masked")])
        #expect(Self.events(Self.clientFrame(0x9, Array(repeating: 0, count: 126))).first == .fail(.protocolError, "control frame payload over 125 bytes"))
        // Two bytes are enough to refuse a ping announcing 126 bytes: the extended length may never come (Parse's spec sends just these).
        #expect(Self.events([0x89, 0xfe]) == [.fail(.protocolError, "control frame payload over 125 bytes")])
        #expect(Self.events(Self.clientFrame(0x9, [], final: false)) == [.fail(.protocolError, "control frames must not be fragmented")])
        #expect(Self.events(Self.clientFrame(0x0, [1])) == [.fail(.protocolError, "continuation without a message")])
        #expect(Self.events(Self.clientFrame(0x1, [0x61], final: false) + Self.clientFrame(0x1, [0x62]))
                == [.fail(.protocolError, "new message before the previous one ended")])
        #expect(Self.events(Self.clientFrame(0x3, [])) == [.fail(.protocolError, "unknown opcode")])
        #expect(Self.events([0xC1, 0x80, 0, 0, 0, 0]) == [.fail(.protocolError, "reserved bits set")])
        #expect(Self.events(Self.clientFrame(0x1, [0xff, 0xfe])) == [.fail(.invalidPayload, "text is not UTF-8")])
        #expect(Self.events(Self.clientFrame(0x8, [0x03])) == [.fail(.protocolError, "close payload of one byte")])
        #expect(Self.events(Self.clientFrame(0x8, [0x03, 0xed])) == [.fail(.protocolError, "invalid close code 1005")])
        #expect(Self.events(Self.clientFrame(0x8, [])) == [.close(nil, "")])
    }

    @Test func anOversizedMessageFailsOnItsHeaderBeforeItsPayloadArrives() {
        // Only the header of a 1 MB frame: refused at once, nothing buffered.
        let header = Array(Self.clientFrame(0x1, Array(repeating: 0x61, count: 1 << 20)).prefix(14))
        #expect(Self.events(header, maxMessageBytes: 1024) == [.fail(.messageTooBig, "message over 1024 bytes")])
        // Fragments count together.
        let fragments = Self.clientFrame(0x1, Array(repeating: 0x61, count: 600), final: false)
            + Self.clientFrame(0x0, Array(repeating: 0x61, count: 600))
        #expect(Self.events(fragments, maxMessageBytes: 1024) == [.fail(.messageTooBig, "message over 1024 bytes")])
        #expect(Self.events(Self.clientFrame(0x1, Array(repeating: 0x61, count: 1024)), maxMessageBytes: 1024).count == 1)
    }

    @Test func manyEmptyFragmentsDoNotRecurse() {
        var bytes = Self.clientFrame(0x1, [], final: false)
        for _ in 0..<100_000 { bytes += Self.clientFrame(0x0, [], final: false) }
        bytes += Self.clientFrame(0x0, Array("ok".utf8))
        #expect(Self.events(bytes) == [.text("ok")])
    }

    @Test func serverFramesAreUnmaskedWithTheRightLength() {
        #expect(WebSocketFrame.text("hi") == [0x81, 2, 0x68, 0x69])
        let medium = WebSocketFrame.encode(.text, Array(repeating: UInt8(0), count: 300))
        #expect(Array(medium.prefix(4)) == [0x81, 126, 0x01, 0x2c])
        let large = WebSocketFrame.encode(.binary, Array(repeating: UInt8(0), count: 70_000))
        #expect(Array(large.prefix(10)) == [0x82, 127, 0, 0, 0, 0, 0, 0x01, 0x11, 0x70])
        #expect(WebSocketFrame.close(.messageTooBig) == [0x88, 2, 0x03, 0xf1])
    }

    @Test func eventsAreDecidedAsParseServerDecidesThem() {
        let old = StoredObject(objectId: "a", createdAt: ParseDate(millisecondsSince1970: 0), updatedAt: ParseDate(millisecondsSince1970: 0),
                               acl: nil, fields: ["n": 1, "tag": "x"])
        var new = old
        new.fields["n"] = 2
        func event(_ before: StoredObject?, _ after: StoredObject?, _ seenBefore: Bool, _ seenAfter: Bool, watch: [String]? = nil) -> String? {
            LiveQueryServer.event(before: before, after: after, matchedBefore: seenBefore, matchedAfter: seenAfter, watch: watch)
        }
        #expect(event(nil, new, false, true) == "create")
        #expect(event(old, new, false, true) == "enter")
        #expect(event(old, new, true, true) == "update")
        #expect(event(old, new, true, false) == "leave")
        #expect(event(old, nil, true, false) == "delete")
        #expect(event(old, new, false, false) == nil)
        #expect(event(old, new, true, true, watch: ["tag"]) == nil, "watch: the update changes no watched field")
        #expect(event(old, new, true, true, watch: ["tag", "n"]) == "update")
        #expect(event(nil, new, false, true, watch: ["missing"]) == nil, "a create sets no watched field")
        #expect(event(old, new, true, false, watch: ["tag"]) == "leave", "watch filters creates and updates only")
    }

    @Test func replayBudgetsRefillPerAddress() {
        var budgets = ReplayBudgets<String>(capacity: 100, perSecond: 50)
        var answers: [Bool] = []
        answers.append(budgets.allows("a", at: 1_000))
        budgets.charge(150, to: "a", at: 1_000)  // One replay may overdraw; the next waits for the refill.
        answers.append(budgets.allows("a", at: 1_000))
        answers.append(budgets.allows("b", at: 1_000))  // Another address has its own budget.
        answers.append(budgets.allows("a", at: 2_000))  // -50 + 50 after one second: still none.
        answers.append(budgets.allows("a", at: 2_100))
        budgets.charge(10, to: "a", at: 60_000)  // Refilled to the capacity, not past it: 90 left.
        answers.append(budgets.allows("a", at: 60_000))
        #expect(answers == [true, false, true, false, true, true])
    }

    @Test func liveQueryMessagesAreCheckedAsParseServerChecksThem() throws {
        #expect(try LiveQueryRequest.parse(["op": "connect", "applicationId": "a", "sessionToken": "r:1"])
                == .connect(.init(applicationId: "a", sessionToken: "r:1")))
        let subscribe = try LiveQueryRequest.parse(["op": "subscribe", "requestId": 1,
                                                    "query": ["className": "A", "where": ["n": 1], "fields": ["n"]]])
        #expect(subscribe == .subscribe(.init(requestId: 1, className: "A", whereClause: ["n": 1], keys: ["n"])))
        // Roost's `since` (resume), and parse-server's newer `query` op.
        let resume = try LiveQueryRequest.parse(["op": "update", "requestId": 2, "since": 41, "query": ["className": "A", "where": [:]]])
        #expect(resume == .update(.init(requestId: 2, className: "A", whereClause: [:], since: 41)))
        #expect(try LiveQueryRequest.parse(["op": "query", "requestId": 3]) == .query(requestId: 3))
        let failures: [(JSON, String)] = [
            ([], "Invalid type: array (expected object)"),
            (["requestId": 1], "Missing required property: op"),
            (["op": 1], "Invalid type: number (expected string)"),
            (["op": "query"], "Missing required property: requestId"),
            (["op": "query", "requestId": 1, "since": 2], "Additional properties not allowed"),
            (["op": "fetch"], "No enum match for: \"fetch\""),
            (["op": "subscribe", "requestId": 1, "since": -1, "query": ["className": "A", "where": [:]]], "Value -1 is less than minimum 0"),
            (["op": "subscribe", "requestId": 1, "since": 1.5, "query": ["className": "A", "where": [:]]],
             "Invalid type: number (expected integer)"),
            (["op": "subscribe", "requestId": 1, "since": "4", "query": ["className": "A", "where": [:]]],
             "Invalid type: string (expected number)"),
            (["op": "connect"], "Missing required property: applicationId"),
            (["op": "connect", "applicationId": "a", "user": "x"], "Additional properties not allowed"),
            (["op": "connect", "applicationId": 5], "Invalid type: number (expected string)"),
            (["op": "subscribe", "requestId": 1, "query": ["className": "A"]], "Missing required property: where"),
            (["op": "subscribe", "requestId": "1", "query": ["className": "A", "where": [:]]], "Invalid type: string (expected number)"),
            (["op": "subscribe", "requestId": 1, "query": ["className": "A", "where": [:], "limit": 1]], "Additional properties not allowed"),
            (["op": "subscribe", "requestId": 1, "query": ["className": "A", "where": [:], "watch": ["a", "a"]]],
             "Array items are not unique (indices 0 and 1)"),
            // tv4's order: repeats before the items' type, from the first item's pair.
            (["op": "subscribe", "requestId": 1, "query": ["className": "A", "where": [:], "watch": [1, 1]]],
             "Array items are not unique (indices 0 and 1)"),
            (["op": "subscribe", "requestId": 1, "query": ["className": "A", "where": [:], "keys": ["a", "b", "b", "a"]]],
             "Array items are not unique (indices 0 and 3)"),
            (["op": "subscribe", "requestId": 1, "query": ["className": "A", "where": [:], "keys": ["a", 2]]],
             "Invalid type: number (expected string)"),
            (["op": "unsubscribe"], "Missing required property: requestId"),
        ]
        for (message, error) in failures {
            #expect(throws: LiveQueryRequest.SchemaError(message: error)) { try LiveQueryRequest.parse(message) }
        }
    }
}
