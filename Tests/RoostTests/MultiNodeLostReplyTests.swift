import Foundation
import Roost
import RoostCore
import Testing

/// `saveEventually` from the real SDK through a network that loses replies after the server committed, in front of
/// nginx and several PostgreSQL nodes: retries land on other nodes (round robin), and each queued create and update
/// is applied exactly once, also when the app restarts with its queue partly delivered. (Part of MultiNodeTests, timed.)
extension MultiNodeTests {
    @Test func saveEventuallyWithRepliesLostAcrossNodesStoresEachObjectOnce() async throws {
        let cluster = try NodeCluster(nodes: 3)
        let network = LossyNetwork()
        let proxy = try FaultProxy(upstreamPort: cluster.balancer.port, observe: network.observe, decide: network.decide)
        let client = try Self.device(proxy, storage: nil)
        var items: [RoostObject] = []
        for index in 0..<Self.objectCount {  // Queued while replies are being lost.
            items.append(try await Self.queue(index, on: client))
            try await Task.sleep(nanoseconds: 50_000_000)
        }
        try await network.waitForLostReplies(8)
        try await Self.healAndDrain(client, network, "one device")

        let stored = try await Self.storedOnce(cluster)
        for (index, item) in items.enumerated() {
            #expect(item.objectId != nil && stored[index]?.objectId == item.objectId, "object \(index)")
        }
    }

    /// The app quits with its queue partly delivered (some commands committed, their replies lost); a new SDK instance
    /// over the same local state delivers the rest, on other nodes, and repeats of what was committed change nothing.
    @Test func aRestartedDeviceDeliversItsQueueAcrossNodesExactlyOnce() async throws {
        let cluster = try NodeCluster(nodes: 3)
        let network = LossyNetwork()
        let proxy = try FaultProxy(upstreamPort: cluster.balancer.port, observe: network.observe, decide: network.decide)
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("roost-device-\(UUID().uuidString)")
        do {
            let client = try Self.device(proxy, storage: storage)
            for index in 0..<Self.objectCount { _ = try await Self.queue(index, on: client) }
            try await network.waitForLostReplies(6)
            network.mode = .loseAll  // From here nothing is acknowledged: what the first instance left stays queued.
        }  // The app quits.
        let relaunched = try Self.device(proxy, storage: storage)
        let left = relaunched.pendingCount
        #expect(left > 0, "the first instance delivered everything before it quit")
        try await network.waitForLostReplies(network.lostCount + 2)  // The new instance retries into the loss, too.
        try await Self.healAndDrain(relaunched, network, "restarted device, \(left) commands left at the restart")
        _ = try await Self.storedOnce(cluster)
    }

    static let objectCount = 20

    /// Heals the network, then expects `client`'s queue delivered within 30 s with nothing failed, and the lost and
    /// the delivered writes each spread over at least two nodes.
    static func healAndDrain(_ client: RoostClient, _ network: LossyNetwork, _ what: String) async throws {
        network.mode = .healed
        let drained = try await client.waitForPendingWrites(timeout: 30)
        #expect(drained && client.pendingCount == 0, "\(client.pendingCount) commands still queued")
        #expect(try client.failedCommands().isEmpty)
        network.report(what)
        #expect(network.nodes(lost: true).count >= 2 && network.nodes(lost: false).count >= 2,
                "lost on \(network.nodes(lost: true)), delivered on \(network.nodes(lost: false))")
    }

    /// An SDK client ("device") whose requests go through `proxy`, then nginx.
    static func device(_ proxy: FaultProxy, storage: URL?) throws -> RoostClient {
        let directory = storage ?? FileManager.default.temporaryDirectory.appendingPathComponent("roost-device-\(UUID().uuidString)")
        return try RoostClient(.init(serverURL: proxy.url, applicationId: ServerProcess.applicationId,
                                     storageDirectory: directory, requestTimeout: 5))
    }

    /// Queues the create of object `index` and, for even ones, an increment after it: repeated, it would show as 2.
    static func queue(_ index: Int, on client: RoostClient) async throws -> RoostObject {
        let item = client.object("Carried")
        item["tag"] = "carried-\(index)"
        item["index"] = index
        item["bumps"] = 0
        try await item.saveEventually()
        if index % 2 == 0 {
            item.increment("bumps")
            try await item.saveEventually()
        }
        return item
    }

    /// Reads every `Carried` with the master key straight on a node: each tag once, none missing, with what the SDK
    /// saved. Returns them by index.
    static func storedOnce(_ cluster: NodeCluster) async throws -> [Int: (objectId: String?, bumps: Int?)] {
        let reply = await RawReply.send("GET", cluster.nodes[0].url, "classes/Carried", query: ["limit": "1000"], master: true)
        let rows = try #require(reply.json["results"]?.arrayValue, "\(reply.status) \(reply.json)")
        let byTag = Dictionary(grouping: rows) { $0["tag"]?.stringValue ?? "?" }
        #expect(rows.count == objectCount, "\(rows.count) objects stored for \(objectCount) queued")
        var stored: [Int: (objectId: String?, bumps: Int?)] = [:]
        for index in 0..<objectCount {
            let copies = byTag["carried-\(index)"] ?? []
            #expect(copies.count == 1, "carried-\(index) stored \(copies.count) times")
            guard let row = copies.first else { continue }
            let bumps = row["bumps"]?.numberValue.map { Int($0) }
            #expect(row["index"]?.numberValue == Double(index) && bumps == (index % 2 == 0 ? 1 : 0), "\(row)")
            stored[index] = (row["objectId"]?.stringValue, bumps)
        }
        return stored
    }
}

/// What the proxy in front of nginx does with the SDK's writes: while `lossy`, three replies in four are lost after
/// the commit (so retries come soon and reach the next node); `loseAll` loses every one; `healed` loses none. It
/// also records which node committed each write (nginx's `X-Roost-Node`).
final class LossyNetwork: @unchecked Sendable {
    enum Mode { case lossy, loseAll, healed }

    private let lock = NSLock()
    private var currentMode = Mode.lossy
    private var writes = 0
    private var answered: [(node: String, lost: Bool)] = []

    var mode: Mode {
        get { lock.withLock { currentMode } }
        set { lock.withLock { currentMode = newValue } }
    }

    var lostCount: Int { lock.withLock { answered.filter(\.lost).count } }

    func nodes(lost: Bool) -> Set<String> { lock.withLock { Set(answered.filter { $0.lost == lost }.map(\.node)) } }

    @Sendable func decide(_ request: FaultProxy.Request) -> FaultProxy.Action {
        guard request.method != "GET" else { return .forward }
        return lock.withLock {
            writes += 1
            switch currentMode {
            case .lossy: return writes % 4 == 0 ? .forward : .loseReply
            case .loseAll: return .loseReply
            case .healed: return .forward
            }
        }
    }

    @Sendable func observe(_ request: FaultProxy.Request, _ headers: [String: String], _ lost: Bool) {
        guard request.method != "GET" else { return }
        lock.withLock { answered.append((headers["x-roost-node"] ?? "?", lost)) }
    }

    /// Waits (at most 20 s) until `count` replies were lost.
    func waitForLostReplies(_ count: Int) async throws {
        let start = Date()
        while lostCount < count, Date().timeIntervalSince(start) < 20 { try await Task.sleep(nanoseconds: 50_000_000) }
        #expect(lostCount >= count, "only \(lostCount) replies lost in 20 s")
    }

    func report(_ what: String) {
        let rows = lock.withLock { answered }
        let lost = rows.filter(\.lost)
        print("MultiNodeTests (\(what)): \(rows.count) writes reached a node, \(lost.count) replies lost;",
              "lost by node \(Dictionary(grouping: lost, by: \.node).mapValues(\.count)),",
              "delivered by node \(Dictionary(grouping: rows.filter { !$0.lost }, by: \.node).mapValues(\.count))")
    }
}
