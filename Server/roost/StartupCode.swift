import Foundation
import RoostServer

/// Hands back the pages of machine code that only starting up touched: this binary's and its libraries'.
///
/// A page fault on a file mapping maps its neighbours as well (the kernel's fault-around, 64 KB), so starting
/// up (argument parsing, migrations, the runtime's and the libraries' first calls) leaves about 11 MB of this
/// binary's 19 MB of code resident, and a few MB of the libraries', most of it never run again. `MADV_DONTNEED`
/// unmaps it: what requests run faults back in from the page cache (about 6 MB of this binary's code after every
/// benchmark workload; the README's memory figures). Only mappings with no private copy of a page are touched
/// (`Anonymous` 0: nothing wrote to them, not even a debugger): they hold exactly the file's bytes, so nothing is lost.
/// (`Private_Dirty` is no guide: it also counts the pages of a binary the linker has just written.)
enum StartupCode {
    static func release() {
        warmUpOpenSSL()
        // Read to its end: `String(contentsOfFile:)` returns a /proc file's first few kilobytes only.
        guard let file = FileHandle(forReadingAtPath: "/proc/self/smaps") else { return }
        let smaps = String(decoding: file.readDataToEndOfFile(), as: UTF8.self)
        try? file.close()
        var candidate: (start: UInt, end: UInt)?
        var written = false
        func releaseCandidate() {
            if let (start, end) = candidate, !written, let address = UnsafeMutableRawPointer(bitPattern: start) {
                _ = madvise(address, Int(end - start), MADV_DONTNEED)
            }
            candidate = nil
            written = false
        }
        for line in smaps.split(separator: "\n") {
            // A mapping's header, "start-end perms offset device inode   path", then its "Field: value kB" lines.
            let fields = line.split(separator: " ", maxSplits: 5)
            if fields.count >= 5, fields[0].contains("-"), !fields[0].hasSuffix(":") {
                releaseCandidate()
                let bounds = fields[0].split(separator: "-").compactMap { UInt($0, radix: 16) }
                if fields.count == 6, fields[1] == "r-xp", fields[5].trimmingCharacters(in: .whitespaces).hasPrefix("/"),
                   bounds.count == 2, bounds[1] > bounds[0] {
                    candidate = (bounds[0], bounds[1])
                }
            } else if candidate != nil, fields.first == "Anonymous:" {
                written = written || (fields.count > 1 && fields[1] != "0")
            }
        }
        releaseCandidate()
    }

    /// OpenSSL's first use loads its provider and algorithm tables: done here, before the release, its
    /// code is not kept resident for the one time it runs (session tokens, object ids, password hashes).
    private static func warmUpOpenSSL() {
        _ = try? PasswordHasher(iterations: 1).hash("warm-up")
        _ = SessionToken.digest("warm-up")
    }
}
