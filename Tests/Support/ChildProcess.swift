import Foundation

/// A child process started with `posix_spawn`, for test harnesses.
///
/// Foundation's `Process.run()` on Linux enumerates the open file descriptors while other threads
/// open and close theirs; under parallel tests (hundreds of servers, clients and sockets) it crashed
/// with a bad memcpy inside `run()`. Spawning directly avoids that code path.
public final class ChildProcess: @unchecked Sendable {
    public let pid: pid_t
    private let lock = NSLock()
    private var exitStatus: Int32?

    /// Starts `executable` with `arguments`; its stdout goes to `stdout` (a descriptor, or /dev/null when
    /// nil) and its stderr to the file at `stderrPath` (or /dev/null). `environment` adds variables.
    public init(executable: String, arguments: [String], environment: [String: String] = [:],
                stdin: Int32? = nil, stdout: Int32? = nil, stderrPath: String? = nil) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let stdout {
            posix_spawn_file_actions_adddup2(&actions, stdout, 1)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        }
        posix_spawn_file_actions_addopen(&actions, 2, stderrPath ?? "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0o644)
        if let stdin {
            posix_spawn_file_actions_adddup2(&actions, stdin, 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }

        let variables = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }.map { "\($0.key)=\($0.value)" }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = variables.map { strdup($0) } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var child = pid_t()
        let status = posix_spawn(&child, executable, &actions, nil, argv, envp)
        guard status == 0 else { throw ChildProcessError.spawnFailed(executable, status) }
        pid = child
    }

    deinit { terminate() }

    public var isRunning: Bool {
        lock.withLock {
            if exitStatus != nil { return false }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                exitStatus = status
                return false
            }
            return true
        }
    }

    /// Sends SIGTERM and waits; returns the exit code (128 + signal when killed by one). A process still
    /// running after `grace` seconds gets SIGKILL (then 137), so a server that hangs fails its test
    /// instead of hanging the whole run.
    @discardableResult
    public func terminate(grace: Double = 60) -> Int32 {
        if isRunning { Glibc.kill(pid, SIGTERM) }
        let deadline = Date().addingTimeInterval(grace)
        while isRunning, Date() < deadline { usleep(20_000) }
        if isRunning { Glibc.kill(pid, SIGKILL) }
        return waitUntilExit()
    }

    public func kill(signal: Int32) {
        if isRunning { Glibc.kill(pid, signal) }
    }

    /// Waits for the process to end; returns the exit code (128 + signal when killed by one).
    @discardableResult
    public func waitUntilExit() -> Int32 {
        let raw: Int32 = lock.withLock {
            if let exitStatus { return exitStatus }
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0, errno == EINTR {}
            exitStatus = status
            return status
        }
        let signal = raw & 0x7f
        return signal == 0 ? (raw >> 8) & 0xff : 128 + signal
    }

    /// A pipe whose write end a child gets as stdout; read the parent's end with `readLine(containing:)`.
    public static func makePipe() throws -> (read: Int32, write: Int32) {
        var fds: [Int32] = [0, 0]
        // Close-on-exec from the start (`pipe2` is not visible from Swift; a socket pair can be
        // made so atomically): a child spawned concurrently by another test must not inherit the
        // write end, or a reader waiting for EOF would wait for that child too.
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, type, 0, &fds) == 0 else { throw ChildProcessError.pipeFailed(errno) }
        return (fds[0], fds[1])
    }

    /// Runs `executable` to the end with `input` on its stdin; returns its exit code and everything it printed.
    /// (Output goes through a temporary file: waiting for EOF on a pipe could hang if another spawn inherited it.)
    public static func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:],
                           input: String = "") throws -> (status: Int32, output: String) {
        let directory = FileManager.default.temporaryDirectory
        let outputPath = directory.appendingPathComponent("roost-child-\(UUID().uuidString).out").path
        let inputPath = directory.appendingPathComponent("roost-child-\(UUID().uuidString).in").path
        defer {
            unlink(outputPath)
            unlink(inputPath)
        }
        FileManager.default.createFile(atPath: inputPath, contents: Data(input.utf8))
        let inputDescriptor = open(inputPath, O_RDONLY | O_CLOEXEC)
        let outputDescriptor = open(outputPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        defer {
            close(inputDescriptor)
            close(outputDescriptor)
        }
        let process = try ChildProcess(executable: executable, arguments: arguments, environment: environment,
                                       stdin: inputDescriptor, stdout: outputDescriptor, stderrPath: outputPath + ".err")
        let status = process.waitUntilExit()
        let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        let errors = (try? String(contentsOfFile: outputPath + ".err", encoding: .utf8)) ?? ""
        unlink(outputPath + ".err")
        return (status, output + errors)
    }

    /// Reads from `descriptor` until the text read so far contains `marker`; nil at end of file.
    public static func read(_ descriptor: Int32, until marker: String) -> String? {
        var seen = ""
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !seen.contains(marker) {
            let count = Glibc.read(descriptor, &buffer, buffer.count)
            if count < 0, errno == EINTR { continue }
            if count <= 0 { return nil }
            seen += String(decoding: buffer[..<count], as: UTF8.self)
        }
        return seen
    }
}

public enum ChildProcessError: Error {
    case spawnFailed(String, Int32)
    case pipeFailed(Int32)
}
