import Foundation

/// Runs the requests that hash or check a password (sign-up, log-in, password change) on a few
/// threads of their own, while their connections are parked (`LaterReply`).
///
/// A PBKDF2 hash at 600,000 iterations takes ~0.2–1 s of CPU. Run on the HTTP thread, it held up
/// every other connection that thread serves. Measured with 24 kept-alive clients, a third of their
/// requests sign-ups, on 2 cores: creates p50/p99 990 ms / 3.55 s before, 1 ms / 9 ms after; gets
/// 564 ms / 2.47 s before, 0 / 5 ms after. Sign-ups now wait their turn (p50 1.2 → 2.9 s, p99
/// 2.9 → 3.6 s). Parse Server hashes off its event loop too. One thread per CPU: hashing is all CPU.
/// Fixed threads, not a dispatch queue, because each read connection belongs to one thread
/// (`ReaderPool`).
final class PasswordWorkers: Sendable {
    private let threads: WorkerThreads

    /// Whether `request` hashes or checks a password: a sign-up, a log-in, `verifyPassword`, or a
    /// user update (which may set a new password).
    static func accepts(_ request: APIRequest) -> Bool {
        let segments = request.segments
        switch request.method {
        case "GET": return segments == ["login"] || segments == ["verifyPassword"]
        case "POST": return segments == ["login"] || segments == ["verifyPassword"] || segments == ["users"] || segments == ["classes", "_User"]
        case "PUT": return segments.count == 2 && segments[0] == "users" || segments.count == 3 && segments[..<2] == ["classes", "_User"]
        default: return false
        }
    }

    init(count: Int) { threads = WorkerThreads(name: "roost-passwd", count: count) }

    func submit(_ work: @escaping () -> Void) { threads.submit(work) }

    /// Runs `steps` as separate jobs, each queued behind the work submitted meanwhile, then `completion`
    /// (in the last step's job): a request with many password steps (a batch of 50 log-ins) takes turns
    /// with other requests instead of keeping a worker to itself for the whole batch.
    func submitInTurns(_ steps: ArraySlice<() -> Void>, then completion: @escaping () -> Void) {
        submit { [self] in
            steps.first?()
            let rest = steps.dropFirst()
            if rest.isEmpty { completion() } else { submitInTurns(rest, then: completion) }
        }
    }

    /// Runs what is queued, then ends the threads.
    func stop() { threads.stop() }
}
