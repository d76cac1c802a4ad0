// saveEventually throughput against a running server:
//   roost-eventually-bench <server URL> <app id> [--objects 10000]
// 1. queueing: N saveEventually calls into the durable queue (server unreachable meanwhile is not
//    needed: draining starts at once, but each call returns only after its command is on disk);
// 2. draining those N creates (batched, exactly once);
// 3. the same N creates as one save() each;
// and prints the rates and the drain speed-up against one request per command (target ≥ 5×).
import Foundation
import Roost

let arguments = CommandLine.arguments
guard arguments.count >= 3, let url = URL(string: arguments[1]) else {
    print("usage: roost-eventually-bench URL APP_ID [--objects N]")
    exit(2)
}
let count = arguments.firstIndex(of: "--objects").flatMap { Int(arguments[$0 + 1]) } ?? 10_000

func seconds(since start: DispatchTime) -> Double {
    Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
}

let semaphore = DispatchSemaphore(value: 0)
Task.detached {
    do {
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("roost-eventually-bench-\(getpid())")
        defer { try? FileManager.default.removeItem(at: storage) }
        // Queue while offline (a client of an address where nothing listens), so the rate is the queue's own.
        var offline: RoostClient? = try RoostClient(.init(serverURL: URL(string: "http://127.0.0.1:9/parse")!,
                                                          applicationId: arguments[2], storageDirectory: storage))
        let objects = (0..<count).map { index -> RoostObject in
            let object = offline!.object("EventualBench")
            object["title"] = "item \(index)"
            object["n"] = index
            return object
        }
        let queueStart = DispatchTime.now()
        for object in objects { try await object.saveEventually() }
        let queueTime = seconds(since: queueStart)
        offline = nil

        // Back online: a client of the real server on the same storage drains the queue.
        let drainStart = DispatchTime.now()
        let client = try RoostClient(.init(serverURL: url, applicationId: arguments[2], storageDirectory: storage))
        try await client.waitForPendingWrites()
        let drainTime = seconds(since: drainStart)
        let delivered = try await client.query("EventualBench").count()

        let directStart = DispatchTime.now()
        for index in 0..<count {
            let object = client.object("DirectBench")
            object["title"] = "item \(index)"
            object["n"] = index
            try await object.save()
        }
        let directTime = seconds(since: directStart)

        print(String(format: "queueing:  %6d saveEventually calls in %6.2f s = %7.0f calls/s (target >= 2000/s)", count, queueTime, Double(count) / queueTime))
        print(String(format: "draining:  %6d queued creates delivered in %6.2f s (%d on the server)", count, drainTime, delivered))
        print(String(format: "direct:    %6d save() calls, one request each, in %6.2f s", count, directTime))
        print(String(format: "speed-up:  %.1fx faster than one request per command (target >= 5x)", directTime / drainTime))
        print("failed commands: \(try client.failedCommands().count)")
    } catch {
        print("benchmark failed: \(error)")
    }
    semaphore.signal()
}
semaphore.wait()
