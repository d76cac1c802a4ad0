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
    /// Read as bytes: split into `Character`s, its ~6,000 lines took half of start-up's instructions (callgrind: 321M → 151M).
    private static func executableFileMappings() -> [(start: UInt, end: UInt, unwritten: Bool)] {
        // Read to its end: `String(contentsOfFile:)` returns a /proc file's first few kilobytes only.
        guard let file = FileHandle(forReadingAtPath: "/proc/self/smaps") else { return [] }
        defer { try? file.close() }
        let space = UInt8(ascii: " ")
        func text(_ bytes: ArraySlice<UInt8>) -> String { String(decoding: bytes, as: UTF8.self) }
        var mappings: [(start: UInt, end: UInt, unwritten: Bool)] = []
        var inCode = false  // Whether the field lines read belong to the last mapping listed.
        for line in [UInt8](file.readDataToEndOfFile()).split(separator: UInt8(ascii: "\n")) {
            // A mapping's header, "start-end perms offset device inode   path", then its "Field: value kB" lines.
            let fields = line.split(separator: space, maxSplits: 5)
            if fields.count >= 5, fields[0].contains(UInt8(ascii: "-")), fields[0].last != UInt8(ascii: ":") {
                let bounds = fields[0].split(separator: UInt8(ascii: "-")).compactMap { UInt(text($0), radix: 16) }
                inCode = fields.count == 6 && text(fields[1]) == "r-xp" && fields[5].first(where: { $0 != space }) == UInt8(ascii: "/")
                    && bounds.count == 2 && bounds[1] > bounds[0]
                if inCode { mappings.append((bounds[0], bounds[1], true)) }
            } else if inCode, fields.count > 1, text(fields[0]) == "Anonymous:", text(fields[1]) != "0" {
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
