// A client process for the saveEventually crash test (Tests/RoostTests/CrashTests.swift).
//   eventually-crash-client enqueue <server URL> <app id> <storage dir> <objects>
//       queues a fixed mix of creates, increments, updates and deletes (5 commands per object:
//       2,000 for 400 objects) and exits; the server may be down.
//   eventually-crash-client drain <server URL> <app id> <storage dir>
//       resumes the queue and exits 0 once it is empty. The test kills it at random moments.
import Foundation
import Roost

let arguments = CommandLine.arguments
guard arguments.count >= 5, let url = URL(string: arguments[2]) else {
    FileHandle.standardError.write(Data("usage: eventually-crash-client enqueue|drain URL APP_ID DIR [OBJECTS]\n".utf8))
    exit(2)
}
let client = try RoostClient(.init(serverURL: url, applicationId: arguments[3],
                                   storageDirectory: URL(fileURLWithPath: arguments[4]), requestTimeout: 2))

switch arguments[1] {
case "enqueue":
    let count = Int(arguments.count > 5 ? arguments[5] : "400") ?? 400
    let objects = (0..<count).map { index -> RoostObject in
        let object = client.object("Crash")
        object["k"] = index
        object["n"] = 0
        return object
    }
    for object in objects { try object.saveEventually() }
    for _ in 0..<3 {
        for object in objects {
            object.increment("n")
            try object.saveEventually()
        }
    }
    for (index, object) in objects.enumerated() where index % 4 != 0 {
        object["label"] = "L\(index)"
        try object.saveEventually()
    }
    for (index, object) in objects.enumerated() where index % 4 == 0 {
        try object.deleteEventually()
    }
    print("queued \(client.pendingCount)")
case "drain":
    let semaphore = DispatchSemaphore(value: 0)
    nonisolated(unsafe) var failure: Error?
    Task.detached {
        do { try await client.waitForPendingWrites() } catch { failure = error }
        semaphore.signal()
    }
    semaphore.wait()
    if let failure { print("not drained: \(failure)") } else { print("drained, failed: \((try? client.failedCommands().count) ?? -1)") }
default:
    exit(2)
}
