import RoostCore

/// A change event's JSON text made once for every subscriber who sees the change alike, and spliced per subscriber.
///
/// A server message is written with its members in key order (`JSON.encoded`): `clientId` and `installationId` (the
/// client's), `object`, `op` and `original` (the event's), `requestId` (the subscription's), `seq` (the change's). So
/// a subscriber's event is its client's `prefix`, the event's `body` and a short tail: the same bytes as
/// `client.message(op, requestId:, extra: ["object", "original", "seq"]).encoded()` (LiveQueryEventBytesTests), without
/// writing the objects out again for each of a thousand subscribers.
struct LiveQueryEventBytes {
    /// `"object":…,"op":"…",` then `"original":…,` when there is one.
    let body: [UInt8]

    init(_ event: LiveQueryServer.Event) {
        var body: [UInt8] = []
        if let object = event.object { Self.member("object", object, to: &body) }
        Self.member("op", .string(event.op), to: &body)
        if let original = event.original { Self.member("original", original, to: &body) }
        self.body = body
    }

    /// `{"clientId":"…",` and `"installationId":"…",` when the client gave one: what each of its messages starts with.
    static func prefix(clientId: String, installationId: String?) -> [UInt8] {
        var prefix: [UInt8] = [UInt8(ascii: "{")]
        member("clientId", .string(clientId), to: &prefix)
        if let installationId { member("installationId", .string(installationId), to: &prefix) }
        return prefix
    }

    /// `"seq":N}`: what every event of one change ends with.
    static func tail(seq: Int64) -> [UInt8] {
        var tail: [UInt8] = []
        JSON.writeString("seq", to: &tail)
        tail.append(UInt8(ascii: ":"))
        JSON.writeNumber(Double(seq), to: &tail)
        tail.append(UInt8(ascii: "}"))
        return tail
    }

    /// `"requestId":N,` into `scratch` (emptied first; kept to be reused without allocating).
    static func requestId(_ requestId: Double, into scratch: inout [UInt8]) {
        scratch.removeAll(keepingCapacity: true)
        member("requestId", .number(requestId), to: &scratch)
    }

    /// The event's length for a client `prefix`, a `requestId` member and a change's `tail`.
    func count(prefix: [UInt8], requestId: [UInt8], tail: [UInt8]) -> Int {
        prefix.count + body.count + requestId.count + tail.count
    }

    /// Appends the event as `prefix`, `body`, `requestId` and `tail` make it.
    func write(prefix: [UInt8], requestId: [UInt8], tail: [UInt8], to output: inout [UInt8]) {
        output.append(contentsOf: prefix)
        output.append(contentsOf: body)
        output.append(contentsOf: requestId)
        output.append(contentsOf: tail)
    }

    /// `"key":value,`
    private static func member(_ key: String, _ value: JSON, to output: inout [UInt8]) {
        JSON.writeString(key, to: &output)
        output.append(UInt8(ascii: ":"))
        value.write(to: &output)
        output.append(UInt8(ascii: ","))
    }
}
