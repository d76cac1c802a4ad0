import Foundation
import Synchronization

/// Gives memory back to the system after a large request.
///
/// glibc keeps freed heap memory in its arenas for reuse: after one `_method: GET` body with a
/// `$in` of 10 million values the process stayed at ~1.5 GB. `malloc_trim(0)` returns the free
/// pages of every arena. It runs on a background queue shortly after such a request has been
/// answered (its values are freed by then), one at a time; ordinary requests never pay for it.
final class MemoryTrim: Sendable {
    /// A request body or reply at least this large is followed by a trim.
    static let threshold = 1 << 20
    private let isScheduled = Atomic<Bool>(false)
    /// glibc's `malloc_trim`, looked up at run time: Swift's Glibc module does not import `<malloc.h>`.
    private static let mallocTrim: (@convention(c) (Int) -> Int32)? = {
        guard let symbol = dlsym(nil, "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
    }()

    /// Schedules a trim unless one is already scheduled.
    func afterLargeRequest() {
        guard isScheduled.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return }
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + .milliseconds(100)) { [self] in
            isScheduled.store(false, ordering: .releasing)
            _ = MemoryTrim.mallocTrim?(0)
        }
    }
}
