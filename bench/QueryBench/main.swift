// Query latency at scale: seeds a class with small objects {title, n, tag, done} through Roost's
// storage layer (EmbeddedStore), then times 1,000 queries of each kind, single client, and prints
// median and p99 with the targets. Usage:
//   swift run -c release roost-query-bench [--objects 1000000] [--queries 1000] [--data-dir DIR]
import Foundation
import RoostCore
import RoostServer

var objectCount = 1_000_000
var queryCount = 1000
var dataDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("roost-query-bench-\(getpid())").path
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--objects": objectCount = Int(arguments.next() ?? "") ?? objectCount
    case "--queries": queryCount = Int(arguments.next() ?? "") ?? queryCount
    case "--data-dir": dataDirectory = arguments.next() ?? dataDirectory
    default: fatalError("unknown argument \(argument)")
    }
}

func milliseconds(since start: DispatchTime) -> Double {
    Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1_000_000
}

try? FileManager.default.removeItem(atPath: dataDirectory)
try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
let store = try EmbeddedStore(dataDirectory: dataDirectory)
var generator = SystemRandomNumberGenerator()

let seedStart = DispatchTime.now()
let batch = 10_000
for first in stride(from: 0, to: objectCount, by: batch) {
    let objects: [[String: JSON]] = (first..<min(first + batch, objectCount)).map { i in
        ["title": .string("item \(i)"), "n": .number(Double(Int.random(in: 0..<objectCount, using: &generator))),
         "tag": .string("tag\(i % 10)"), "done": .bool(i % 2 == 0)]
    }
    _ = try store.insert(className: "Item", objects: objects)
}
try store.declareIndex(className: "Item", name: "n_1", fields: ["n": 1])
try store.declareIndex(className: "Item", name: "tag_1", fields: ["tag": 1])
print(String(format: "seeded %d objects in %.1f s (indexes on n and tag declared)", objectCount, milliseconds(since: seedStart) / 1000))

struct Workload {
    let name: String
    let target: Double?
    let parameters: () -> [String: JSON]
}

let span = Double(objectCount) / 100
let workloads = [
    Workload(name: "equality on an indexed field, limit 20", target: 2) {
        ["where": ["tag": .string("tag\(Int.random(in: 0..<10))")], "limit": 20]
    },
    Workload(name: "range + order -n + limit 20", target: 3) {
        let low = Double(Int.random(in: 0..<objectCount))
        return ["where": ["n": ["$gt": .number(low), "$lt": .number(low + span)]], "order": "-n", "limit": 20]
    },
    Workload(name: "$in with 50 values", target: 5) {
        ["where": ["n": ["$in": .array((0..<50).map { _ in .number(Double(Int.random(in: 0..<objectCount))) })]]]
    },
    Workload(name: "count=1 on an equality matching 10%", target: 50) {
        ["where": ["tag": .string("tag\(Int.random(in: 0..<10))")], "count": 1, "limit": 0]
    },
    Workload(name: "skip=10000&limit=20 on an indexed order", target: nil) {
        ["order": "n", "skip": 10_000, "limit": 20]
    },
]

print("plan of the range query: " + (try store.queryPlan(className: "Item", parameters: workloads[1].parameters())).joined(separator: " | "))
print("")
print("query".padding(toLength: 42, withPad: " ", startingAt: 0) + "  median      p99   target")
for workload in workloads {
    var times: [Double] = []
    for _ in 0..<queryCount {
        let parameters = workload.parameters()
        let start = DispatchTime.now()
        _ = try store.find(className: "Item", parameters: parameters)
        times.append(milliseconds(since: start))
    }
    times.sort()
    let median = times[times.count / 2], p99 = times[min(times.count - 1, times.count * 99 / 100)]
    let verdict = workload.target.map { median <= $0 ? "≤ \($0) ms: met" : "≤ \($0) ms: MISSED" } ?? "reported"
    print(workload.name.padding(toLength: 42, withPad: " ", startingAt: 0) + String(format: " %6.2f ms %6.2f ms   ", median, p99) + verdict)
}
try store.close()
try? FileManager.default.removeItem(atPath: dataDirectory)
