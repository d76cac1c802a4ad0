/// A value bound to or read from SQL, independent of the connection that carries it.
enum SQLValue: Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)

    var text: String? {
        if case .text(let value) = self { return value }
        return nil
    }

    var integer: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }
}

/// Runs statements that return rows; the reader and writer connections both conform.
protocol SQLQuerying {
    /// Which SQL the connection speaks, for the statements that differ.
    var dialect: SQLDialect { get }
    /// All rows of `sql`, each as its column values. `cacheable` marks SQL whose text is fixed
    /// (not shaped by a client query), so a statement cache stays bounded.
    func fetchRows(_ sql: String, _ arguments: [SQLValue], cacheable: Bool) throws -> [[SQLValue]]
    /// Each row of `sql` in turn, none kept: for reads whose size must not grow with the rows they scan.
    func forEachRow(_ sql: String, _ arguments: [SQLValue], cacheable: Bool, _ body: ([SQLValue]) throws -> Void) throws
}
