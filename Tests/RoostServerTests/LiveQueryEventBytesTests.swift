import RoostCore
import Testing
@testable import RoostServer

/// Live events are spliced from a client's prefix, an event body made once per audience and a per-subscription tail
/// (`LiveQueryEventBytes`), and framed many at a time (`WebSocketFrameBatch`): the bytes must be those the
/// per-subscriber encoding (`Event.message(...).encoded()`, still used for replays) and `WebSocketFrame.encode` give.
@Suite struct LiveQueryEventBytesTests {
    static let object: JSON = [
        "objectId": "a1B2c3", "className": "Item", "createdAt": "2026-11-26T11:00:00.000Z", "updatedAt": "2026-11-26T11:00:01.000Z",
        "room": "bench", "k": 42, "title": "quote \" backslash \\ newline \n tab \t é ✓", "done": false, "none": .null,
        "tags": ["a", 1, 2.5, true], "ACL": ["*": ["read": true]], "at": ["__type": "Date", "iso": "2026-11-26T11:00:00.000Z"],
    ]
    static let original: JSON = ["objectId": "a1B2c3", "className": "Item", "room": "old", "k": 41]

    static let events: [LiveQueryServer.Event] = [
        .init(op: "create", object: object, original: nil),
        .init(op: "update", object: object, original: original),
        .init(op: "enter", object: object, original: ["objectId": "a1B2c3", "className": "Item"]),
        .init(op: "leave", object: ["objectId": "a1B2c3", "className": "Item"], original: original),
        .init(op: "delete", object: original, original: nil),
        // As the memo hands objects on: already encoded.
        .init(op: "update", object: .encodedFragment(object.encoded()), original: .encodedFragment(original.encoded())),
        .init(op: "create", object: .object([:]), original: nil),
    ]

    static var clients: [LiveQueryClient] { [
        LiveQueryClient(clientId: "0c1d6a3e-8f1b-4f8e-9a53-2b7f6e0d9c41", hasMasterKey: false, installationId: nil, user: nil),
        LiveQueryClient(clientId: "0c1d6a3e-8f1b-4f8e-9a53-2b7f6e0d9c42", hasMasterKey: true, installationId: "inst-\"1\"", user: nil),
        LiveQueryClient(clientId: "", hasMasterKey: false, installationId: "", user: nil),
    ] }

    static let requestIds: [Double] = [1, 0, 7, 123_456_789, 2.5, -3, 9_007_199_254_740_992]
    static let seqs: [Int64] = [0, 1, 99_999, 9_007_199_254_740_991]

    @Test func splicedEventIsTheEncodedMessage() {
        var requestIdBytes: [UInt8] = []
        var checked = 0
        for event in Self.events {
            let bytes = LiveQueryEventBytes(event)
            for client in Self.clients {
                for requestId in Self.requestIds {
                    for seq in Self.seqs {
                        let tail = LiveQueryEventBytes.tail(seq: seq)
                        LiveQueryEventBytes.requestId(requestId, into: &requestIdBytes)
                        var spliced: [UInt8] = []
                        bytes.write(prefix: client.messagePrefix, requestId: requestIdBytes, tail: tail, to: &spliced)
                        let expected = event.message(for: client, requestId: requestId, seq: seq).encoded()
                        #expect(spliced == expected, "\(event.op) \(requestId) \(seq): \(String(decoding: spliced, as: UTF8.self))")
                        #expect(bytes.count(prefix: client.messagePrefix, requestId: requestIdBytes, tail: tail) == expected.count)
                        checked += 1
                    }
                }
            }
        }
        #expect(checked == 7 * 3 * 7 * 4)
    }

    @Test func splicedEventParsesAsParseSendsIt() throws {
        let client = Self.clients[1]
        var requestId: [UInt8] = []
        LiveQueryEventBytes.requestId(3, into: &requestId)
        var spliced: [UInt8] = []
        LiveQueryEventBytes(Self.events[1]).write(prefix: client.messagePrefix, requestId: requestId, tail: LiveQueryEventBytes.tail(seq: 17),
                                                  to: &spliced)
        let parsed = try JSONParser.parse(String(decoding: spliced, as: UTF8.self))
        #expect(parsed == ["op": "update", "clientId": .string(client.clientId), "installationId": "inst-\"1\"", "requestId": 3, "seq": 17,
                           "object": Self.object, "original": Self.original])
    }

    /// Payloads across the frame header's three length forms (§5.2), framed one after another in one buffer.
    @Test func batchFramesAreWhatEncodeGives() {
        let sizes = [0, 1, 125, 126, 127, 65_535, 65_536, 70_000, 200]
        var batch = WebSocketFrameBatch()
        var expected: [UInt8] = []
        var ends: [(UInt64, Int)] = []
        for (index, size) in sizes.enumerated() {
            let payload = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) }
            if index % 2 == 0 {
                batch.append(utf8: payload, to: UInt64(index + 1))
            } else {
                batch.append(to: UInt64(index + 1), payloadCount: size) { $0.append(contentsOf: payload) }
            }
            expected += WebSocketFrame.encode(.text, payload)
            ends.append((UInt64(index + 1), expected.count))
        }
        #expect(batch.bytes == expected)
        #expect(batch.frames.map(\.connection) == ends.map(\.0))
        #expect(batch.frames.map(\.end) == ends.map(\.1))
        #expect(!batch.isEmpty && WebSocketFrameBatch().isEmpty)
    }
}
