import GRDB

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

/// Runs read statements: GRDB's `Database` (inside write transactions) and `SQLiteReader`
/// (the lean per-thread read connections) both conform, so the storage code is written once.
protocol SQLQuerying {
    /// All rows of `sql`, each as its column values. `cacheable` marks SQL whose text is fixed
    /// (not shaped by a client query), so a statement cache stays bounded.
    func fetchRows(_ sql: String, _ arguments: [SQLValue], cacheable: Bool) throws -> [[SQLValue]]
}

extension Database: SQLQuerying {
    func fetchRows(_ sql: String, _ arguments: [SQLValue], cacheable: Bool) throws -> [[SQLValue]] {
        let statement = cacheable ? try cachedStatement(sql: sql) : try makeStatement(sql: sql)
        let values: [DatabaseValue] = arguments.map {
            switch $0 {
            case .null: .null
            case .integer(let value): value.databaseValue
            case .real(let value): value.databaseValue
            case .text(let value): value.databaseValue
            }
        }
        return try Row.fetchAll(statement, arguments: StatementArguments(values)).map { row in
            row.databaseValues.map { value in
                switch value.storage {
                case .null: .null
                case .int64(let number): .integer(number)
                case .double(let number): .real(number)
                case .string(let text): .text(text)
                case .blob(let data): .text(String(decoding: data, as: UTF8.self))
                }
            }
        }
    }
}
