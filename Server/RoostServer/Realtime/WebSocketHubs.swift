import Foundation
import RoostCore
import Synchronization

/// Every WebSocket, spread over a few `WebSocketHub`s, each with its own thread: a change's events to a thousand
/// subscribers are mostly the kernel's work of sending (loopback TCP runs the receiver's side too), about 5 µs a
/// frame, and one thread doing all of them is the slowest step of a fan-out. A connection stays on the hub it was
/// adopted by (its id says which), so what is sent to one connection keeps its order.
final class WebSocketHubs: Sendable {
    let hubs: [WebSocketHub]
    private let nextHub = Atomic<Int>(0)

    /// - Parameter count: hubs (threads); one per core, at most `maxCount`.
    init(count: Int = min(ProcessInfo.processInfo.activeProcessorCount, WebSocketHubs.maxCount), settings: WebSocketHub.Settings,
         receive: @escaping WebSocketHub.Receive, closed: @escaping WebSocketHub.Closed) throws {
        let count = max(1, count)
        var hubs: [WebSocketHub] = []
        for index in 0..<count {
            do {
                hubs.append(try WebSocketHub(settings: settings, shard: (index, count), receive: receive, closed: closed))
            } catch {
                for hub in hubs { hub.stop() }
                throw error
            }
        }
        self.hubs = hubs
    }

    static let maxCount = 4

    var settings: WebSocketHub.Settings { hubs[0].settings }

    /// Open WebSocket connections.
    var connectionCount: Int { hubs.reduce(0) { $0 + $1.connectionCount } }

    /// Which hub connection `id` is on (an index into `hubs`).
    func hubIndex(of id: UInt64) -> Int { Int(id % UInt64(hubs.count)) }

    /// Takes an upgraded socket onto the next hub in turn; returns its id (nil when the hubs have stopped).
    @discardableResult
    func adopt(_ connection: UpgradedConnection) -> UInt64? {
        hubs[nextHub.add(1, ordering: .relaxed).oldValue % hubs.count].adopt(connection)
    }

    func send(utf8 text: [UInt8], to connection: UInt64) { hubs[hubIndex(of: connection)].send(utf8: text, to: connection) }

    /// Sends a batch whose frames are all for connections on hub `index` (`hubIndex(of:)`).
    func send(_ batch: WebSocketFrameBatch, onHub index: Int) { hubs[index].send(batch) }

    func handled(_ connection: UInt64) { hubs[hubIndex(of: connection)].handled(connection) }

    func close(_ connection: UInt64, code: WebSocketCloseCode, reason: String = "") {
        hubs[hubIndex(of: connection)].close(connection, code: code, reason: reason)
    }

    /// Closes every connection (1001) and ends the threads.
    func stop() {
        for hub in hubs { hub.stop() }
    }
}
