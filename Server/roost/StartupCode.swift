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
        for code in executableFileMappings() where code.unwritten {
            guard let address = UnsafeMutableRawPointer(bitPattern: code.start) else { continue }
            _ = madvise(address, Int(code.end - code.start), MADV_DONTNEED)
        }
    }

    /// The process's executable mappings of files, and whether none of their pages has a private copy.
    private static func executableFileMappings() -> [(start: UInt, end: UInt, unwritten: Bool)] {
        // Read to its end: `String(contentsOfFile:)` returns a /proc file's first few kilobytes only.
        guard let file = FileHandle(forReadingAtPath: "/proc/self/smaps") else { return [] }
        defer { try? file.close() }
        var mappings: [(start: UInt, end: UInt, unwritten: Bool)] = []
        var inCode = false  // Whether the field lines read belong to the last mapping listed.
        for line in String(decoding: file.readDataToEndOfFile(), as: UTF8.self).split(separator: "\n") {
            // A mapping's header, "start-end perms offset device inode   path", then its "Field: value kB" lines.
            let fields = line.split(separator: " ", maxSplits: 5)
            if fields.count >= 5, fields[0].contains("-"), !fields[0].hasSuffix(":") {
                let bounds = fields[0].split(separator: "-").compactMap { UInt($0, radix: 16) }
                inCode = fields.count == 6 && fields[1] == "r-xp" && fields[5].trimmingCharacters(in: .whitespaces).hasPrefix("/")
                    && bounds.count == 2 && bounds[1] > bounds[0]
                if inCode { mappings.append((bounds[0], bounds[1], true)) }
            } else if inCode, fields.first == "Anonymous:", fields.count > 1, fields[1] != "0" {
                mappings[mappings.count - 1].unwritten = false
            }
        }
        return mappings
    }

    /// OpenSSL's first use loads its provider and algorithm tables: done here, before the release, its
    /// code is not kept resident for the one time it runs (session tokens, object ids, password hashes).
    private static func warmUpOpenSSL() {
        _ = try? PasswordHasher(iterations: 1).hash("warm-up")
        _ = SessionToken.digest("warm-up")
    }
}
