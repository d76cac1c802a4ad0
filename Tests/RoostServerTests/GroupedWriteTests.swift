import Foundation
import RoostCore
import RoostTestSupport
import Testing

/// Creates, updates and deletes of ordinary objects are parked by their HTTP thread and written in
/// groups by one thread (`WriteBatcher`): each request keeps its own outcome, and a reply still
/// means "committed".
@Suite struct GroupedWriteTests {
    @Test func concurrentWritesKeepTheirOwnOutcomes() async throws {
        let server = try TestServer()
        let target = try await server.create("Score", ["n": 0])
        // Many at once, so several share a transaction: good and bad writes of every kind, mixed.
        let outcomes = try await withThrowingTaskGroup(of: (Int, TestResponse).self) { group in
            for index in 0..<120 {
                group.addTask {
                    let response: TestResponse
                    switch index % 4 {
                    case 0: response = try await server.request("POST", "/classes/Score", json: ["n": .number(Double(index))])
                    case 1: response = try await server.request("POST", "/classes/Score", json: ["n": "not a number"])
                    case 2: response = try await server.request("PUT", "/classes/Score/\(target)", json: ["n": ["__op": "Increment", "amount": 1]])
                    default: response = try await server.request("DELETE", "/classes/Score/missing\(index)")
                    }
                    return (index, response)
                }
            }
            var outcomes: [(Int, TestResponse)] = []
            for try await outcome in group { outcomes.append(outcome) }
            return outcomes
        }
        var created: [String: Int] = [:]
        for (index, response) in outcomes {
            switch index % 4 {
            case 0:
                #expect(response.status == 201)
                created[try #require(response.json["objectId"]?.stringValue)] = index
            case 1:
                #expect(response.status == 400)
                #expect(response.code == 111)
            case 2:
                #expect(response.status == 200)
            default:
                #expect(response.status == 404)
                #expect(response.code == 101)
            }
        }
        #expect(created.count == 30)
        for (id, index) in created {  // Each reply came after its commit: readable at once.
            let fetched = try await server.request("GET", "/classes/Score/\(id)")
            #expect(fetched.json["n"] == .number(Double(index)))
        }
        let counter = try await server.request("GET", "/classes/Score/\(target)")
        #expect(counter.json["n"] == 30)
        let all = try await server.request("GET", "/classes/Score", query: ["count": "1", "limit": "0"])
        #expect(all.json["count"] == 31)
    }

    /// Grouped writes (`WriteBatcher`) that run again, once in one savepoint and then with one per request because a
    /// request among them failed, tell `afterSave` and LiveQuery once per saved object: what the first run queued was
    /// undone with it. (Here, in the suites run one at a time: in the parallel pass the 120 requests at once took
    /// minutes, and the unread LiveQuery socket missed its pings.)
    @Test func afterSaveAndLiveQueryTellEachSaveOnceWhenAGroupRunsAgain() async throws {
        let server = try TestServer(arguments: fastHashing)
        let afterSave = try WebhookReceiver(reply: #"{"success":true}"#)
        let hook: JSON = ["className": "Tally", "triggerName": "afterSave", "url": .string(afterSave.url)]
        #expect(try await server.request("POST", "/hooks/triggers", json: hook, master: true).json == hook)
        _ = try await server.create("Tally", ["n": 0])  // The class and its Number field.
        let socket = try LiveSocket(server)
        #expect(try await socket.connect()?["op"] == "connected")
        #expect(try await socket.subscribe(1, ["className": "Tally", "where": [:]])?["op"] == "subscribed")
        let replies = try await withThrowingTaskGroup(of: TestResponse.self) { group in
            for index in 0..<120 {
                group.addTask {
                    try await server.request("POST", "/classes/Tally", json: ["n": index % 2 == 0 ? .number(Double(index)) : "not a number"])
                }
            }
            var replies: [TestResponse] = []
            for try await reply in group { replies.append(reply) }
            return replies
        }
        let created = Set(replies.compactMap { $0.status == 201 ? $0.json["objectId"]?.stringValue : nil })
        #expect(created.count == 60 && replies.filter { $0.status == 400 }.count == 60)
        for _ in 0..<300 where afterSave.requests.count < 61 { try await Task.sleep(for: .milliseconds(100)) }
        try await Task.sleep(for: .milliseconds(300))  // Any told twice would have come by now.
        let told = try afterSave.requests.map { try JSONParser.parse(Array($0.body))["object"]?["objectId"]?.stringValue ?? "" }
        #expect(told.count == 61 && Set(told).count == 61 && created.isSubset(of: Set(told)), "\(told.count) told, \(Set(told).count) distinct")
        let events = try await socket.drain(quiet: 1).filter { $0["op"] == "create" }.compactMap { $0["object"]?["objectId"]?.stringValue }
        #expect(events.count == 60 && Set(events) == created, "\(events.count) create events, \(Set(events).count) distinct")
    }

    /// Creates the database itself refuses (an objectId already taken: on PostgreSQL a grouped create's INSERT is
    /// answered only at the group's end, `SQLConnection.answeringLater`) fail alone: 137 for each of them, the
    /// taken objects unchanged, every other create stored once and told to `afterSave` once.
    @Test func createsTheDatabaseRefusesFailAloneInTheirGroup() async throws {
        let server = try TestServer(arguments: ["--allow-custom-object-id"])
        for index in 0..<30 {
            #expect(try await server.request("POST", "/classes/Slot", json: ["objectId": .string("taken\(index)"), "n": -1]).status == 201)
        }
        let afterSave = try WebhookReceiver(reply: #"{"success":true}"#)
        let hook: JSON = ["className": "Slot", "triggerName": "afterSave", "url": .string(afterSave.url)]
        #expect(try await server.request("POST", "/hooks/triggers", json: hook, master: true).json == hook)
        let replies = try await withThrowingTaskGroup(of: (Int, TestResponse).self) { group in
            for index in 0..<90 {
                var object: [String: JSON] = ["n": .number(Double(index))]
                if index % 3 == 0 { object["objectId"] = .string("taken\(index / 3)") }
                if index % 3 == 1 { object["objectId"] = .string("fresh\(index)") }
                group.addTask { (index, try await server.request("POST", "/classes/Slot", json: .object(object))) }
            }
            var replies: [(Int, TestResponse)] = []
            for try await reply in group { replies.append(reply) }
            return replies
        }
        var created: Set<String> = []
        for (index, reply) in replies {
            if index % 3 == 0 {
                #expect(reply.status == 400 && reply.code == 137, "\(index): \(reply.text)")
            } else {
                #expect(reply.status == 201, "\(index): \(reply.text)")
                created.insert(reply.json["objectId"]?.stringValue ?? "")
            }
        }
        #expect(created.count == 60 && created.isSuperset(of: (0..<30).map { "fresh\($0 * 3 + 1)" }))
        let taken = try await server.request("GET", "/classes/Slot", query: ["where": #"{"n":-1}"#, "count": "1", "limit": "0"])
        #expect(taken.json["count"] == 30, "the taken objects are unchanged: \(taken.text)")
        let all = try await server.request("GET", "/classes/Slot", query: ["count": "1", "limit": "0"])
        #expect(all.json["count"] == 90)
        for _ in 0..<300 where afterSave.requests.count < 60 { try await Task.sleep(for: .milliseconds(100)) }
        try await Task.sleep(for: .milliseconds(300))  // Any told twice would have come by now.
        let told = try afterSave.requests.map { try JSONParser.parse(Array($0.body))["object"]?["objectId"]?.stringValue ?? "" }
        #expect(told.count == 60 && Set(told) == created, "\(told.count) told, \(Set(told).count) distinct")
    }

    @Test func sigtermAnswersParkedWritesBeforeExiting() async throws {
        let server = try TestServer()
        let answered = AnswerCounter()
        let outcomes = await withTaskGroup(of: TestResponse?.self) { group in
            for index in 0..<200 {
                group.addTask {
                    let response = try? await server.request("POST", "/classes/Note", json: ["i": .number(Double(index))])
                    // Stop while many writes are still in flight (parked, or not yet read).
                    if response != nil, answered.increment() == 10 { kill(server.process.pid, SIGTERM) }
                    return response
                }
            }
            var outcomes: [TestResponse?] = []
            for await outcome in group { outcomes.append(outcome) }
            return outcomes
        }
        #expect(server.process.waitUntilExit() == 0)
        // Whatever was answered 201 is stored: the restarted server has every one of them.
        let restarted = try TestServer(dataDirectory: server.dataDirectory)
        let ids = outcomes.compactMap { $0?.status == 201 ? $0?.json["objectId"]?.stringValue : nil }
        for id in ids {
            #expect(try await restarted.request("GET", "/classes/Note/\(id)").status == 200)
        }
        // Requests in flight are finished, not failed: each either got its 201 or no answer at all
        // (sent after the server closed its connections), and nothing was stored without its 201.
        for outcome in outcomes.compactMap({ $0 }) { #expect(outcome.status == 201) }
        #expect(ids.count >= 10)
        let stored = try await restarted.request("GET", "/classes/Note", query: ["count": "1", "limit": "0"])
        #expect(stored.json["count"] == .number(Double(ids.count)))
    }

    @Test func httpThreadsArePinnedOneCPUEachUnlessTurnedOff() throws {
        let allowed = cpusAllowed(Int32(getpid()), thread: nil)
        let pinned = try TestServer()
        let pinnedThreads = httpThreads(of: pinned.process.pid)
        #expect(pinnedThreads.count == 4)
        if allowed.count >= 2 {
            for cpus in pinnedThreads.values { #expect(cpus.count == 1) }
            #expect(Set(pinnedThreads.values.flatMap { $0 }).count == min(4, allowed.count))
            // The thread that started the daemons got its own CPUs back: later threads are not pinned.
            let acceptor = waitForThreads(of: pinned.process.pid, named: "roost-accept", count: 1)
            #expect(acceptor.count == 1, "threads: \(threadNames(of: pinned.process.pid)); log: \(pinned.log().suffix(2000))")
            #expect(acceptor.values.allSatisfy { $0 == allowed })
        } else {
            for cpus in pinnedThreads.values { #expect(cpus == allowed) }
        }
        let unpinned = try TestServer(arguments: ["--no-pin-threads"])
        let unpinnedThreads = httpThreads(of: unpinned.process.pid)
        #expect(unpinnedThreads.count == 4)
        for cpus in unpinnedThreads.values { #expect(cpus == allowed) }
    }

    @Test func backgroundThreadsCarryTheirNames() throws {
        let server = try TestServer()
        for name in ["roost-accept", "roost-writer", "roost-checkpt", "roost-passwd-0"] {
            #expect(waitForThreads(of: server.process.pid, named: name, count: 1).count == 1,
                    "\(name) among \(threadNames(of: server.process.pid))")
        }
    }

    @Test func theCheckpointerYieldsToRequests() throws {
        let server = try TestServer()
        let checkpointer = waitForThreads(of: server.process.pid, named: "roost-checkpt", count: 1)
        #expect(checkpointer.count == 1)
        for task in checkpointer.keys { #expect(niceness(of: server.process.pid, thread: task) == 10) }
        for task in waitForThreads(of: server.process.pid, named: "MHD-single", count: 4).keys {
            #expect(niceness(of: server.process.pid, thread: task) == 0)
        }
    }

    /// A thread's nice value: field 19 of `/proc/<pid>/task/<tid>/stat`, counted after the `)` that
    /// ends the command name (which may hold spaces).
    private func niceness(of pid: pid_t, thread: String) -> Int? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/task/\(thread)/stat", encoding: .utf8),
              let end = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: end)...].split(separator: " ")
        return fields.count > 16 ? Int(fields[16]) : nil  // fields[0] is field 3 (state).
    }

    /// The CPUs of each of the process's 4 HTTP threads.
    private func httpThreads(of pid: pid_t) -> [String: Set<Int>] {
        waitForThreads(of: pid, named: "MHD-single", count: 4)
    }

    /// Threads name themselves once they run, which may be just after the server said it listens:
    /// waits for `count` threads called `name` (up to 30 s: a fully parallel test run loads the machine).
    private func waitForThreads(of pid: pid_t, named name: String, count: Int) -> [String: Set<Int>] {
        var found: [String: Set<Int>] = [:]
        let deadline = Date().addingTimeInterval(30)
        repeat {
            found = threads(of: pid, named: name)
            if found.count < count { usleep(10_000) }
        } while found.count < count && Date() < deadline
        return found
    }

    /// The CPUs of each of the process's threads whose name starts with `name`, by thread id.
    private func threads(of pid: pid_t, named name: String) -> [String: Set<Int>] {
        var threads: [String: Set<Int>] = [:]
        for (task, comm) in tasks(of: pid) where comm.hasPrefix(name) { threads[task] = cpusAllowed(pid, thread: task) }
        return threads
    }

    private func threadNames(of pid: pid_t) -> [String] { tasks(of: pid).map(\.name) }

    /// Each thread of the process: its id and its name (`comm`).
    private func tasks(of pid: pid_t) -> [(id: String, name: String)] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []).map { task in
            let comm = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8)) ?? ""
            return (task, comm.trimmingCharacters(in: .newlines))
        }
    }

    /// `Cpus_allowed_list` of a process (or one of its threads), e.g. "0-1,3" → [0, 1, 3].
    private func cpusAllowed(_ pid: pid_t, thread: String?) -> Set<Int> {
        let path = thread.map { "/proc/\(pid)/task/\($0)/status" } ?? "/proc/\(pid)/status"
        let status = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed_list:") }) else { return [] }
        var cpus = Set<Int>()
        for part in line.dropFirst("Cpus_allowed_list:".count).trimmingCharacters(in: .whitespaces).split(separator: ",") {
            let bounds = part.split(separator: "-").compactMap { Int($0) }
            if let low = bounds.first { cpus.formUnion(low...(bounds.last ?? low)) }
        }
        return cpus
    }
}

/// Counts answers across the tasks of a test.
private final class AnswerCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    /// The count after this answer.
    func increment() -> Int { lock.withLock { count += 1; return count } }
}
