import Foundation

/// Hands back the pages of this binary's machine code that only starting up touched.
///
/// A page fault on a file mapping maps its neighbours as well (the kernel's fault-around, 64 KB), so
/// starting up (argument parsing, migrations, the runtime's first calls) leaves about 11 MB of the 19 MB of
/// code resident, most of it never run again. `MADV_DONTNEED` unmaps it: the code is clean and file-backed,
/// so nothing is lost, and what requests run faults back in from the page cache (about 6 MB after every
/// benchmark workload; see the README's memory figures).
enum StartupCode {
    static func release() {
        guard let binary = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"),
              let maps = try? String(contentsOfFile: "/proc/self/maps", encoding: .utf8) else { return }
        // "start-end perms offset device inode   path": only the executable mappings of this binary.
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ", maxSplits: 5)
            guard fields.count == 6, fields[1] == "r-xp",
                  fields[5].trimmingCharacters(in: .whitespaces) == binary else { continue }
            let bounds = fields[0].split(separator: "-").compactMap { UInt($0, radix: 16) }
            guard bounds.count == 2, bounds[1] > bounds[0], let start = UnsafeMutableRawPointer(bitPattern: bounds[0]) else { continue }
            _ = madvise(start, Int(bounds[1] - bounds[0]), MADV_DONTNEED)
        }
    }
}
