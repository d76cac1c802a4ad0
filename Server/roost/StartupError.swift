import Glibc

/// A start-up failure told in words: what is wrong, with which path, and what to do
/// (raw Foundation or SQLite errors name neither the path nor the remedy).
struct StartupError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) { self.description = description }

    /// The text of the current `errno`.
    static var systemReason: String { String(cString: strerror(errno)) }
}
