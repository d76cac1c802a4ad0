import Dispatch

/// Runs async SDK work to completion from synchronous code (scripts, command-line tools).
///
/// The work runs on a detached task while the calling thread waits. Call the blocking variants
/// from ordinary threads only, never from inside an `async` function (use the `async` variants there).
func runBlocking<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) throws -> T {
    let semaphore = DispatchSemaphore(value: 0)
    nonisolated(unsafe) var result: Result<T, Error>?
    Task.detached {
        do { result = .success(try await work()) } catch { result = .failure(error) }
        semaphore.signal()
    }
    semaphore.wait()
    return try result!.get()
}

/// Runs async SDK work and hands its result to `completion` on a background thread.
///
/// A command-line program has no main run loop, and none is needed: the callback does not run on
/// the main thread. Keep the process alive until it has run (e.g. wait on a semaphore).
func runInBackground<T: Sendable>(_ work: @escaping @Sendable () async throws -> T,
                                  completion: @escaping @Sendable (Result<T, Error>) -> Void) {
    Task.detached {
        do { completion(.success(try await work())) } catch { completion(.failure(error)) }
    }
}
