import RoostCore
import Synchronization

/// A `$group` PostgreSQL computes itself (`GROUP BY`), for a key and accumulator inputs that are fields with typed
/// columns (`PostgresTypedColumns`: Number and String fields with a declared index), giving the answer
/// `StreamedGroup` gives to the bit, or nil (the plan then streams the rows).
///
/// Why: streaming 1,000,000 rows through libpq to group them in Swift took 968–1,119 ms (`roost-query-bench
/// --database-url`), most of it roost's CPU reading one result per row; PostgreSQL groups the typed columns in about
/// 200 ms (a hash aggregate: the columns have statistics, where a `jsonb` expression has none and is sorted instead,
/// 1.4–1.7 s). Only where it can be exact: `StreamedGroup` adds numbers one by one in rowid order, and a sum in any
/// other order has the same bits only when every partial sum is exact, which holds when every value is an integer
/// and the group's count times its largest magnitude is at most 2^53. Each group's SQL reports both; a group that
/// breaks either makes `run` return nil. Groups come out in the order of their first row (`min(rowid)`), as streamed;
/// keys equal as JSON but spelt apart in SQL (a string's two Unicode normalizations) are merged, as Swift groups them.
///
/// Accumulators taken: `$sum` of a Number field or of an integer literal, `$avg` of a Number field, `$count`. Others
/// (`$min`, `$max`, `$first`, `$last`, `$push`, `$addToSet`, expressions) leave the stage to `StreamedGroup`. A column
/// once found inexact (fractions: prices, ratings) is not summed here again while the process runs: its groups would
/// be read twice, grouped then streamed.
struct TypedGroup {
    private enum Key {
        case constant(JSON)
        /// A typed column; for a String field the empty string groups with null (`Aggregation.groupKey`).
        case column(sql: String, isString: Bool)
    }

    private enum Input {
        /// `$sum` of an integer literal: the literal once per row.
        case literalSum(Double)
        case sum(column: Int)
        case average(column: Int)
        case count
    }

    private let key: Key
    /// The Number columns the accumulators read, each once.
    private let columns: [String]
    private let accumulators: [(field: String, input: Input)]

    /// 2^53: integers up to it are exact doubles.
    private static let exactLimit = 9_007_199_254_740_992.0
    /// The Number columns (`table.column`) whose sums were found inexact; bounded by the typed columns there are. Two
    /// databases in one process share it (their `c<id>` names may meet): that only sends a group to streaming.
    private static let inexactColumns = Mutex<Set<String>>([])
    private let table: String

    private struct Inexact: Error {}

    /// `field`'s typed column (a Number's float8, a String's text), if the class has one (PostgreSQL only).
    static func typedColumn(_ field: String, of schema: ClassSchema) -> String? {
        guard schema.view == nil, schema.typedColumns.contains(field) else { return nil }
        return PostgresTypedColumns.column(field)
    }

    /// Nil unless the database is PostgreSQL and the stage is one this type computes exactly (see the type's doc).
    init?(_ specification: JSON, schema: ClassSchema, dialect: SQLDialect) {
        guard dialect == .postgres, schema.view == nil, !schema.typedColumns.isEmpty,
            case .object(var fields) = specification, let keyExpression = fields.removeValue(forKey: "_id") else { return nil }
        func typedColumn(_ expression: JSON, _ type: FieldType) -> String? {
            guard case .string(let text) = expression, text.hasPrefix("$") else { return nil }
            let field = String(text.dropFirst())
            return schema.fields[field] == type ? Self.typedColumn(field, of: schema) : nil
        }
        switch keyExpression {
        case .string(let text) where text.hasPrefix("$"):
            if let column = typedColumn(keyExpression, .number) {
                key = .column(sql: column, isString: false)
            } else if let column = typedColumn(keyExpression, .string) {
                key = .column(sql: "NULLIF(\(column), '')", isString: true)
            } else {
                return nil
            }
        case .string, .number, .bool, .null: key = .constant(Aggregation.groupKey(keyExpression))
        default: return nil
        }
        table = schema.tableName
        let inexact = Self.inexactColumns.withLock { $0 }
        var columns: [String] = []
        func position(_ column: String) -> Int {
            if let known = columns.firstIndex(of: column) { return known }
            columns.append(column)
            return columns.count - 1
        }
        var accumulators: [(String, Input)] = []
        for (field, accumulator) in fields.sorted(by: { $0.key < $1.key }) {
            guard case .object(let operation) = accumulator, operation.count == 1, let (name, argument) = operation.first else { return nil }
            switch (name, argument) {
            case ("$sum", .number(let literal)):
                guard literal == literal.rounded(), abs(literal) <= Self.exactLimit else { return nil }
                accumulators.append((field, .literalSum(literal)))
            case ("$sum", _), ("$avg", _):
                guard let column = typedColumn(argument, .number), !inexact.contains("\(table).\(column)") else { return nil }
                accumulators.append((field, name == "$sum" ? .sum(column: position(column)) : .average(column: position(column))))
            case ("$count", _): accumulators.append((field, .count))
            default: return nil
            }
        }
        self.columns = columns
        self.accumulators = accumulators
    }

    /// The groups as `StreamedGroup.run` answers them, or nil when a sum could differ from its one-by-one sum in
    /// the last bits. `filter` is the rows' condition (with the read permission), on the schema's table.
    func run(filter: SQLFragment, in db: some SQLQuerying) throws -> [Aggregation.Document]? {
        var selected = ["min(rowid)", "count(*)"]
        for column in columns {
            selected += ["sum(\(column))", "count(\(column))", "coalesce(bool_and(\(column) = trunc(\(column))), true)",
                         "max(abs(\(column)))"]
        }
        var sql = "SELECT \(selected.joined(separator: ", "))"
        switch key {
        case .constant: sql += " FROM \(table) WHERE \(filter.sql)"
        case .column(let column, _): sql += ", \(column) FROM \(table) WHERE \(filter.sql) GROUP BY \(column) ORDER BY 1"
        }
        var index: [JSON: Int] = [:]
        var groups: [Totals] = []
        do {
            // Streamed: a key of many values makes many groups, each kept once (`Totals`), not twice.
            try db.forEachRow(sql, filter.arguments, cacheable: false) { row in
                guard case .integer(let rowCount) = row[1], rowCount > 0 else { return }  // No GROUP BY over no rows.
                var totals = Totals(key: .null, rows: rowCount)
                for position in columns.indices {
                    let first = 2 + 4 * position
                    let numbers = row[first + 1].integer ?? 0
                    var largest = 0.0
                    if numbers > 0 {
                        guard row[first + 2].integer == 1 else { throw inexact(position) }  // A fraction.
                        guard case .real(let magnitude) = row[first + 3], case .real(let sum) = row[first] else { throw Inexact() }
                        largest = magnitude
                        totals.sums.append(sum)
                    } else {
                        totals.sums.append(0)
                    }
                    totals.numbers.append(numbers)
                    totals.largest.append(largest)
                }
                switch key {
                case .constant(let value): totals.key = value
                case .column(_, let isString):
                    switch row[2 + 4 * columns.count] {
                    case .text(let text) where isString: totals.key = .string(text)
                    case .real(let number) where !isString: totals.key = .number(number)
                    case .null: totals.key = .null
                    default: throw Inexact()
                    }
                }
                if let group = index[totals.key] {
                    groups[group].merge(totals)
                } else {
                    index[totals.key] = groups.count
                    groups.append(totals)
                }
            }
            for group in groups { try checkExact(group) }
        } catch is Inexact {
            return nil
        }
        return groups.map { group in
            var document: Aggregation.Document = ["objectId": group.key]
            for (field, input) in accumulators {
                document[field] = switch input {
                case .literalSum(let literal): .number(literal * Double(group.rows))
                case .sum(let column): .number(group.sums[column])
                case .average(let column):
                    group.numbers[column] == 0 ? .null : .number(group.sums[column] / Double(group.numbers[column]))
                case .count: .number(Double(group.rows))
                }
            }
            return document
        }
    }

    /// Throws `Inexact` unless every one-by-one sum of `group` is exact, so that any order of adding gives its bits:
    /// each partial sum is at most the count times the largest magnitude (the values are integers: SQL checked).
    private func checkExact(_ group: Totals) throws {
        let limit = Self.exactLimit
        for (_, input) in accumulators {
            if case .literalSum(let literal) = input, abs(literal) * Double(group.rows) > limit { throw Inexact() }
        }
        for position in columns.indices where Double(group.numbers[position]) * group.largest[position] > limit {
            throw inexact(position)
        }
    }

    /// Remembers that the sums of `columns[position]` are inexact here (`inexactColumns`).
    private func inexact(_ position: Int) -> Inexact {
        Self.inexactColumns.withLock { _ = $0.insert("\(table).\(columns[position])") }
        return Inexact()
    }
}

/// One group's row counts and, per Number column read, the sum, the count of numbers and the largest magnitude.
private struct Totals {
    var key: JSON
    var rows: Int64
    var sums: [Double] = []
    var numbers: [Int64] = []
    var largest: [Double] = []

    /// Adds the totals of rows whose key SQL spelt apart from this group's (sums of integers: exact while `checkExact` passes).
    mutating func merge(_ other: Totals) {
        rows += other.rows
        for position in sums.indices {
            sums[position] += other.sums[position]
            numbers[position] += other.numbers[position]
            largest[position] = max(largest[position], other.largest[position])
        }
    }
}
