import Foundation

/// Creates the data directory (mode 0700, with any missing parents) and checks this user may write in it.
enum DataDirectory {
    static let remedy = "Choose another with --data-dir or ROOST_DATA_DIR, or fix the owner or mode of that path."

    static func prepare(_ path: String) throws(StartupError) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                throw StartupError("the data directory \(path) is a file, not a directory. \(remedy)")
            }
        } else {
            try create(path)
        }
        guard access(path, R_OK | W_OK | X_OK) == 0 else {
            throw StartupError("the data directory \(path) is not writable by this user (\(StartupError.systemReason)). \(remedy)")
        }
    }

    /// `mkdir -p`, one component at a time, so a failure names the component that failed and why.
    private static func create(_ path: String) throws(StartupError) {
        let components = path.split(separator: "/", omittingEmptySubsequences: true)
        var prefix = path.hasPrefix("/") ? "" : "."
        for (index, component) in components.enumerated() {
            let parent = prefix.isEmpty ? "/" : prefix
            prefix += "/" + component
            let isLast = index == components.count - 1
            guard mkdir(prefix, isLast ? 0o700 : 0o755) != 0 else { continue }
            let code = errno
            if code == EEXIST, !isLast || FileManager.default.fileExists(atPath: prefix) { continue }
            let reason = code == ENOTDIR ? "\(parent) is a file, not a directory" : "\(String(cString: strerror(code))) at \(prefix)"
            throw StartupError("cannot create the data directory \(path): \(reason). \(remedy)")
        }
    }
}
