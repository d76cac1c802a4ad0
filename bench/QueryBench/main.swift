// Query latency at scale: seeds a class with small objects {title, n, tag, done, text} through Roost's
// storage layer (EmbeddedStore), then times 1,000 queries of each kind, single client, and prints
// median and p99 with the issue's targets. Each query also runs without the master key, as a user
// holding a role ("ACL" rows): 1% of the objects are readable by another user only, 1% by the role,
// 1% carry a public-read ACL; the ratio is the plain median over the ACL one (target ≥ 0.85). `text` is four words
// of a 10,000-word vocabulary, text-indexed after seeding (`$text` workloads); creates with and without a text index
// are timed taking turns (target ≥ 0.8). Then the aggregation workloads: a `$group` by `tag` with `$sum` of `n` over
// every object, in SQL and (the path before) in memory, each run a few times, with its median and the process's
// peak RSS while it ran. Usage:
//   swift run -c release roost-query-bench [--objects 1000000] [--queries 1000] [--aggregate-runs 5] [--aggregate-only]
//                                          [--data-dir DIR] [--database-url postgres://... (an empty database)]
import Foundation
import RoostCore
import RoostServer

var objectCount = 1_000_000
var queryCount = 1000
var aggregateRuns = 5
var aggregateOnly = false
var dataDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("roost-query-bench-\(getpid())").path
var databaseURL: String?
let usage = """
    usage: roost-query-bench [--objects N] [--queries N] [--aggregate-runs N] [--aggregate-only]
                             [--data-dir DIR] [--database-url postgres://... (an empty database)]
    Seeds N objects (default 1000000) and times queries and aggregations against the issues' targets.
    """
/// Stops with a message naming what was wrong (exit 2, as argument parsers do).
func refuse(_ message: String) -> Never {
    FileHandle.standardError.write(Data("roost-query-bench: \(message)\n\(usage)\n".utf8))
    exit(2)
}
var arguments = CommandLine.arguments.dropFirst().makeIterator()
/// The value after `option`.
func value(after option: String, _ arguments: inout IndexingIterator<ArraySlice<String>>) -> String {
    guard let text = arguments.next() else { refuse("\(option) needs a value") }
    return text
}
func count(after option: String, _ arguments: inout IndexingIterator<ArraySlice<String>>) -> Int {
    let text = value(after: option, &arguments)
    guard let value = Int(text), value > 0 else { refuse("invalid value for \(option): \(text) (expected a positive integer)") }
    return value
}
while let argument = arguments.next() {
    switch argument {
    case "--objects": objectCount = count(after: argument, &arguments)
    case "--queries": queryCount = count(after: argument, &arguments)
    case "--aggregate-runs": aggregateRuns = count(after: argument, &arguments)
    case "--data-dir": dataDirectory = value(after: argument, &arguments)
    case "--database-url": databaseURL = value(after: argument, &arguments)
    case "--aggregate-only": aggregateOnly = true
    case "--help", "-h":
        print(usage)
        exit(0)
    case "--version":
        print("roost-query-bench, built with this checkout's roost (see `roost --version`)")
        exit(0)
    default: refuse("unknown argument \(argument)")
    }
}

func milliseconds(since start: DispatchTime) -> Double {
    Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1_000_000
}

try? FileManager.default.removeItem(atPath: dataDirectory)
try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
/// Each line written at once, also into a file (a crash would lose what `print` buffered).
func print(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
// No time limit: the in-memory aggregation of a million objects takes longer than the server's default 5 s.
let store = try databaseURL.map { try EmbeddedStore(databaseURL: $0, dataDirectory: dataDirectory, queryTimeout: 0) }
    ?? EmbeddedStore(dataDirectory: dataDirectory, queryTimeout: 0)
var generator = SystemRandomNumberGenerator()

/// Word `k` of a 10,000-word vocabulary: four syllables, one per decimal digit ("kalomine").
let syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "be", "da"]
func vocabularyWord(_ k: Int) -> String { (0..<4).map { syllables[(k / [1, 10, 100, 1000][$0]) % 10] }.joined() }
let randomText: () -> String = {
    (0..<4).map { _ in vocabularyWord(Int.random(in: 0..<10_000, using: &generator)) }.joined(separator: " ")
}

// 1% readable by another user only, 1% by the role Staff, 1% with a public-read ACL; the rest have none.
let seedObject: (Int) -> [String: JSON] = { i in
    var object: [String: JSON] = [
        "title": .string("item \(i)"), "n": .number(Double(Int.random(in: 0..<objectCount, using: &generator))),
        "tag": .string("tag\(i % 10)"), "done": .bool(i % 2 == 0), "text": .string(randomText())]
    switch i % 100 {
    case 1: object["ACL"] = ["someoneElse": ["read": true, "write": true]]
    case 2: object["ACL"] = ["role:Staff": ["read": true]]
    case 3: object["ACL"] = ["*": ["read": true], "someoneElse": ["write": true]]
    default: break
    }
    return object
}
let seedStart = DispatchTime.now()
let batch = 10_000
for first in stride(from: 0, to: objectCount, by: batch) {
    _ = try store.insert(className: "Item", objects: (first..<min(first + batch, objectCount)).map(seedObject))
}
try store.declareIndex(className: "Item", name: "n_1", fields: ["n": 1])
try store.declareIndex(className: "Item", name: "tag_1", fields: ["tag": 1])
print(String(format: "seeded %d objects in %.1f s (indexes on n and tag declared)", objectCount, milliseconds(since: seedStart) / 1000))
// The write cost of the indexes as the read-permission test needs them: creates into the indexed class,
// 100 per transaction, with the same mix of ACLs.
let createStart = DispatchTime.now(), createCount = 20_000
for first in stride(from: objectCount, to: objectCount + createCount, by: 100) {
    _ = try store.insert(className: "Item", objects: (first..<first + 100).map(seedObject))
}
print(String(format: "then %d creates, 100 per transaction, with both indexes: %.0f objects/s", createCount,
             Double(createCount) / (milliseconds(since: createStart) / 1000)))
// What the first `$text` search of a field (or declaring its text index) costs on this class.
let textIndexStart = DispatchTime.now()
try store.declareTextIndex(className: "Item", field: "text")
print(String(format: "text index on `text` built over %d objects in %.1f s", objectCount + createCount, milliseconds(since: textIndexStart) / 1000))
let textCreateStart = DispatchTime.now()
for first in stride(from: objectCount + createCount, to: objectCount + 2 * createCount, by: 100) {
    _ = try store.insert(className: "Item", objects: (first..<first + 100).map(seedObject))
}
print(String(format: "then %d creates, 100 per transaction, with the text index too: %.0f objects/s", createCount,
             Double(createCount) / (milliseconds(since: textCreateStart) / 1000)))
// The text index's write cost, A/B in one time window: two fresh classes of the same objects, one with `text`
// indexed, taking turns (20 rounds of 1,000 creates each, 100 per transaction).
_ = try store.insert(className: "CreatePlain", objects: [seedObject(0)])
_ = try store.insert(className: "CreateText", objects: [seedObject(0)])
try store.declareTextIndex(className: "CreateText", field: "text")
var createSeconds = ["CreatePlain": 0.0, "CreateText": 0.0]
for round in 0..<20 {
    for className in round % 2 == 0 ? ["CreatePlain", "CreateText"] : ["CreateText", "CreatePlain"] {
        let start = DispatchTime.now()
        for first in stride(from: 0, to: 1000, by: 100) { _ = try store.insert(className: className, objects: (first..<first + 100).map(seedObject)) }
        createSeconds[className, default: 0] += milliseconds(since: start) / 1000
    }
}
let plainRate = 20_000 / createSeconds["CreatePlain"]!, textRate = 20_000 / createSeconds["CreateText"]!
print(String(format: "creates taking turns: without a text index %.0f objects/s, with %.0f objects/s: %.2f of without %@", plainRate,
             textRate, textRate / plainRate, textRate / plainRate >= 0.8 ? "(≥ 0.8: met)" : "(≥ 0.8: MISSED)"))
if databaseURL != nil {
    // What autovacuum does some time after a bulk load (and `roost import` at its end): without statistics PostgreSQL
    // planned an indexed `$in` of 50 values as a scan of the whole class (428 ms, against 0.64 ms).
    let analyzeStart = DispatchTime.now()
    try store.analyze()
    print(String(format: "VACUUM ANALYZE after the load: %.1f s", milliseconds(since: analyzeStart) / 1000))
}

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
    Workload(name: "count=1 on the whole class", target: 10) {
        ["count": 1, "limit": 0]
    },
    Workload(name: "skip=100000&limit=20 on an indexed order", target: 10) {
        ["order": "n", "skip": 100_000, "limit": 20]
    },
    // One word of the vocabulary: in ~400 objects (4 words each over 10,000 words); Parse's default limit (100).
    Workload(name: "$text, one word (~400 of 1M objects)", target: 20) {
        ["where": ["text": ["$text": ["$search": ["$term": .string(vocabularyWord(Int.random(in: 0..<10_000)))]]]]]
    },
    Workload(name: "$text, one word, order=$score, limit 20", target: nil) {
        ["where": ["text": ["$text": ["$search": ["$term": .string(vocabularyWord(Int.random(in: 0..<10_000)))]]]],
         "order": "$score", "limit": 20]
    },
    Workload(name: "$text, \"two word\" phrase", target: nil) {
        let first = vocabularyWord(Int.random(in: 0..<10_000)), second = vocabularyWord(Int.random(in: 0..<10_000))
        return ["where": ["text": ["$text": ["$search": ["$term": .string("\"\(first) \(second)\"")]]]]]
    },
]
let aclUser = "benchUser", aclRoles = ["Staff"]

print("plan of the $text query: " + (try store.queryPlan(className: "Item", parameters: workloads[7].parameters())).joined(separator: " | "))
print("plan of the range query: " + (try store.queryPlan(className: "Item", parameters: workloads[1].parameters())).joined(separator: " | "))
let aclSubjects = ["*", aclUser] + aclRoles.map { "role:" + $0 }
print("plan of the deep skip, ACL: " + (try store.queryPlan(className: "Item", parameters: workloads[6].parameters(),
                                                            readableBy: aclSubjects)).joined(separator: " | "))
print("")
print("query".padding(toLength: 46, withPad: " ", startingAt: 0) + "  median      p99   target")
func report(_ name: String, _ times: [Double], _ verdict: (Double) -> String) -> Double {
    let times = times.sorted()
    let median = times[times.count / 2], p99 = times[min(times.count - 1, times.count * 99 / 100)]
    print(name.padding(toLength: 46, withPad: " ", startingAt: 0) + String(format: " %6.2f ms %6.2f ms   ", median, p99) + verdict(median))
    return median
}
for workload in aggregateOnly ? [] : workloads {
    // Interleaved, with the same parameters, taking turns at going first (the second finds the pages cached):
    // the master-key query and the same one as the user.
    var plain: [Double] = [], withACL: [Double] = []
    for round in 0..<queryCount {
        let parameters = workload.parameters()
        for asUser in round % 2 == 0 ? [false, true] : [true, false] {
            let start = DispatchTime.now()
            if asUser {
                _ = try store.find(className: "Item", parameters: parameters, asUser: aclUser, roles: aclRoles)
                withACL.append(milliseconds(since: start))
            } else {
                _ = try store.find(className: "Item", parameters: parameters)
                plain.append(milliseconds(since: start))
            }
        }
    }
    let target = workload.target
    let plainMedian = report(workload.name, plain) { median in
        target.map { median <= $0 ? "≤ \($0) ms: met" : "≤ \($0) ms: MISSED" } ?? "reported"
    }
    _ = report("  ACL", withACL) { median in
        let ratio = plainMedian / median
        let absolute = target.map { median <= $0 ? ", ≤ \($0) ms: met" : ", ≤ \($0) ms: MISSED" } ?? ""
        return String(format: "%.2f of plain%@", ratio, ratio >= 0.85 ? " (≥ 0.85: met)" : " (≥ 0.85: MISSED)") + absolute
    }
}

/// Resets the process's peak RSS (Linux: `clear_refs` 5), so that `peakRSS` reports the peak from now on.
func resetPeakRSS() { try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8) }
/// `VmHWM` (peak) or `VmRSS` (now) from /proc/self/status, in MB.
func memory(_ field: String) -> Double {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix(field + ":") } ?? ""
    return (Double(line.split(separator: " ").dropFirst().first ?? "") ?? 0) / 1024
}

/// The process's user + system CPU time: on a machine others load, what a query cost apart from waiting for a core.
func cpuMilliseconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000 + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1000
}

struct AggregateWorkload {
    let name: String
    let target: Double?
    let inMemory: Bool
    let parameters: [String: JSON]
}
let groupBySum: [String: JSON] = ["pipeline": [["$group": ["_id": "$tag", "total": ["$sum": "$n"]]]]]
// In SQL first: what the in-memory path allocates stays in the process's RSS after it.
let aggregateWorkloads = [
    AggregateWorkload(name: "$group by tag, $sum of n (SQL)", target: 1000, inMemory: false, parameters: groupBySum),
    AggregateWorkload(name: "distinct tag (SQL)", target: nil, inMemory: false, parameters: ["distinct": "tag"]),
    AggregateWorkload(name: "$match n < 10% + $count (SQL)", target: nil, inMemory: false,
                      parameters: ["pipeline": [["$match": ["n": ["$lt": .number(Double(objectCount / 10))]]], ["$count": "n"]]]),
    AggregateWorkload(name: "$group by tag, $sum of n (in memory)", target: nil, inMemory: true, parameters: groupBySum),
]
print("")
print("aggregation over \(objectCount) objects".padding(toLength: 46, withPad: " ", startingAt: 0)
      + "  median  CPU (median)  RSS before → peak   target")
var groupAnswers: [JSON] = []
for workload in aggregateWorkloads {
    let before = memory("VmRSS")
    resetPeakRSS()
    var times: [Double] = [], cpuTimes: [Double] = []
    for _ in 0..<aggregateRuns {
        let start = DispatchTime.now(), cpuStart = cpuMilliseconds()
        let answer = try store.aggregate(className: "Item", parameters: workload.parameters, inMemory: workload.inMemory)
        times.append(milliseconds(since: start))
        cpuTimes.append(cpuMilliseconds() - cpuStart)
        if workload.parameters == groupBySum { groupAnswers.append(answer) }
    }
    let median = times.sorted()[times.count / 2], cpuMedian = cpuTimes.sorted()[cpuTimes.count / 2]
    let verdict = workload.target.map { median <= $0 ? "≤ \($0) ms: met" : "≤ \($0) ms: MISSED" } ?? "reported"
    print(workload.name.padding(toLength: 46, withPad: " ", startingAt: 0)
          + String(format: " %7.0f ms %7.0f ms  %5.0f → %5.0f MB   ", median, cpuMedian, before, memory("VmHWM")) + verdict)
}
print("SQL and in-memory $group answers " + (Set(groupAnswers).count == 1 ? "agree" : "DIFFER"))
try store.close()
try? FileManager.default.removeItem(atPath: dataDirectory)
