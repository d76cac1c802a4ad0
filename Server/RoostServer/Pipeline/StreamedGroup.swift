import RoostCore

/// A `$group` computed while the database streams the few values it needs from each matching row (its key and its
/// accumulators' inputs): memory grows with the groups, never with the rows, and no object is decoded. The
/// accumulators add up in the order `Aggregation.run` would (rowid order), so sums and averages come out to the
/// same bits.
///
/// On SQLite, when every value is a top-level field, each row's `data` text is read in place and scanned for them
/// (`TopLevelFields`), and a `"$field"` key finds its group by its text (`KeyTexts`); otherwise (and on PostgreSQL)
/// SQL reads the values (`columns`). Over 1,000,000 objects into 10 groups (`roost-query-bench`) the scan took
/// 0.39–0.42 s of CPU where reading the values with `json_extract` took 0.95–1.09 s.
///
/// Why not `GROUP BY`: SQLite 3.40 (Debian 12's) sorts every input row to group them. Over 1,000,000 rows into
/// 10 groups it took 1.7–2.9 s and 53–112 MB, where this scan runs in constant memory.
struct StreamedGroup {
    /// The values read from each row, in this order.
    let columns: [AggregationColumn]
    /// The columns' top-level fields, when each column is one and the database's `data` is the text scanned.
    let scannedFields: [String]?
    private let key: RowExpression
    private let accumulators: [(field: String, name: Accumulator.Name, argument: RowExpression)]

    static let maximumColumns = 100

    /// Nil when the stage needs more than values SQL can read, or is malformed (the in-memory path then answers,
    /// with its errors).
    init?(_ specification: JSON, schema: ClassSchema, dialect: SQLDialect = .sqlite) {
        guard case .object(var fields) = specification, let keyExpression = fields.removeValue(forKey: "_id") else { return nil }
        var columns: [AggregationColumn] = []
        func compile(_ expression: JSON) -> RowExpression? {
            RowExpression(expression, schema: schema, dialect: dialect, columns: &columns)
        }
        guard let key = compile(keyExpression) else { return nil }
        var accumulators: [(String, Accumulator.Name, RowExpression)] = []
        for (field, accumulator) in fields.sorted(by: { $0.key < $1.key }) {
            guard case .object(let operation) = accumulator, operation.count == 1, let (op, argument) = operation.first,
                let name = Accumulator.Name(rawValue: op), let compiled = compile(argument) else { return nil }
            accumulators.append((field, name, compiled))
        }
        // SQLite allows 2,000 result columns; a group reading more than these few fields runs in memory.
        guard columns.count <= Self.maximumColumns else { return nil }
        self.columns = columns
        let topLevel = columns.compactMap(\.topLevelField)
        scannedFields = dialect == .sqlite && !columns.isEmpty && topLevel.count == columns.count ? topLevel : nil
        self.key = key
        self.accumulators = accumulators
    }

    /// The groups, first seen first, as `Aggregation` answers them; `rows` calls its argument with each row's `columns`.
    func run(_ rows: (([SQLValue]) throws -> Void) throws -> Void) throws -> [Aggregation.Document] {
        var groups = Groups(accumulators.map(\.name))
        var values = [JSON](repeating: .null, count: columns.count)
        try rows { row in
            for (position, column) in columns.enumerated() { values[position] = column.value(row[position]) }
            add(values, to: groups.group(Aggregation.groupKey(key.value(values))), in: &groups)
        }
        return documents(groups)
    }

    /// As `run`, where `texts` calls its argument with each row's `data` text, from which `scannedFields` are read
    /// (`scannedFields` must not be nil).
    func run(scanning texts: ((UnsafeBufferPointer<UInt8>) throws -> Void) throws -> Void, className: String) throws
        -> [Aggregation.Document] {
        guard let names = scannedFields else { preconditionFailure("run(scanning:) without scanned fields") }
        let scan = TopLevelFields(names)
        // A `"$field"` key only read for grouping is never parsed once its text is known.
        var keyColumn: Int?
        if case .column(let position) = key { keyColumn = position }
        var parsed = [Bool](repeating: false, count: columns.count)
        for position in accumulators.flatMap(\.argument.columnsRead) + (keyColumn == nil ? key.columnsRead : []) {
            parsed[position] = true
        }
        var groups = Groups(accumulators.map(\.name))
        var keyTexts = KeyTexts()
        var values = [JSON](repeating: .null, count: columns.count)
        var ranges = [Range<Int>?](repeating: nil, count: columns.count)
        let corrupt = StorageError.corruptRow(className: className, objectId: "?")
        try texts { text in
            guard scan.ranges(in: text, into: &ranges) else {
                guard case .object(let object) = try? JSONParser.parse(text) else { throw corrupt }
                for (position, name) in names.enumerated() { values[position] = object[name] ?? .null }
                add(values, to: groups.group(Aggregation.groupKey(key.value(values))), in: &groups)
                return
            }
            func value(_ position: Int) throws -> JSON {
                guard let range = ranges[position] else { return .null }
                guard let value = try? JSONParser.parse(UnsafeBufferPointer(rebasing: text[range])) else { throw corrupt }
                return value
            }
            for position in parsed.indices where parsed[position] { values[position] = try value(position) }
            let group: Int
            if let keyColumn {
                let keyText = ranges[keyColumn].map { UnsafeBufferPointer(rebasing: text[$0]) }
                if let known = keyTexts.group(keyText) {
                    group = known
                } else {
                    group = groups.group(Aggregation.groupKey(try value(keyColumn)))
                    keyTexts.insert(keyText, group: group, groups: groups.count)
                }
            } else {
                group = groups.group(Aggregation.groupKey(key.value(values)))
            }
            add(values, to: group, in: &groups)
        }
        return documents(groups)
    }

    private func add(_ values: [JSON], to group: Int, in groups: inout Groups) {
        for (position, accumulator) in accumulators.enumerated() {
            groups.states[group][position].add(accumulator.argument.value(values))
        }
    }

    private func documents(_ groups: Groups) -> [Aggregation.Document] {
        zip(groups.keys, groups.states).map { key, state in
            var document: Aggregation.Document = ["objectId": key]
            for (position, accumulator) in accumulators.enumerated() { document[accumulator.field] = state[position].result }
            return document
        }
    }
}

/// The groups seen so far, first seen first, with their accumulators.
private struct Groups {
    private let names: [Accumulator.Name]
    private var index: [JSON: Int] = [:]
    private(set) var keys: [JSON] = []
    var states: [[Accumulator]] = []

    init(_ names: [Accumulator.Name]) { self.names = names }

    var count: Int { keys.count }

    /// The group of `key`, added if new.
    mutating func group(_ key: JSON) -> Int {
        if let known = index[key] { return known }
        index[key] = keys.count
        keys.append(key)
        states.append(names.map { Accumulator(name: $0) })
        return keys.count - 1
    }
}

/// The groups of the key texts seen so far (a `"$field"` key's JSON text in the row, nil where the row has no such
/// field), so that a row finds its group without parsing its key or hashing a `JSON`. One text always parses to the
/// same key; several texts may spell one key (`1`, `1.0`), each then kept. (`AggregationPlan.distinct` uses it to
/// parse each value text once.)
struct KeyTexts {
    private var buckets: [UInt64: [(text: [UInt8], group: Int)]] = [:]
    private var missing: Int?
    private var count = 0

    func group(_ text: UnsafeBufferPointer<UInt8>?) -> Int? {
        guard let text else { return missing }
        return buckets[Self.hash(text)]?.first { $0.text.elementsEqual(text) }?.group
    }

    /// Remembers `text`'s group, while the texts are not many more than the `groups` (keys spelled many ways are
    /// then parsed each time instead).
    mutating func insert(_ text: UnsafeBufferPointer<UInt8>?, group: Int, groups: Int) {
        guard let text else { missing = group; return }
        guard count < 2 * groups + 64 else { return }
        buckets[Self.hash(text), default: []].append((Array(text), group))
        count += 1
    }

    /// FNV-1a: a few bytes hashed in a few nanoseconds.
    private static func hash(_ text: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return hash
    }
}

/// An expression of `Aggregation.evaluate` over the values a row's columns read.
private enum RowExpression {
    /// `"$path"`: the value at one column.
    case column(Int)
    case literal(JSON)
    /// Anything else evaluated on a document holding the columns' values under their top-level names.
    case document(JSON, fields: [(name: String, column: Int)])

    init?(_ expression: JSON, schema: ClassSchema, dialect: SQLDialect, columns: inout [AggregationColumn]) {
        func column(_ path: String) -> Int? {
            guard let column = AggregationColumn(path: path, schema: schema, dialect: dialect) else { return nil }
            if let known = columns.firstIndex(of: column) { return known }
            columns.append(column)
            return columns.count - 1
        }
        switch expression {
        case .string(let text) where text.hasPrefix("$"):
            guard let position = column(String(text.dropFirst())) else { return nil }
            self = .column(position)
        case .object(let members) where !members.keys.contains(where: { $0.hasPrefix("$") })
            || (members.count == 1 && AggregationExpression.operators.contains(members.keys.first!)):
            // Every `"$…"` string inside may be read: hold their top-level fields whole.
            var fields: [(String, Int)] = []
            for path in Self.references(in: expression) {
                let root = String(path.split(separator: ".", omittingEmptySubsequences: false)[0])
                let name = ["_id": "objectId", "_created_at": "createdAt", "_updated_at": "updatedAt"][root] ?? root
                guard !fields.contains(where: { $0.0 == name }) else { continue }
                guard let position = column(root) else { return nil }
                fields.append((name, position))
            }
            self = .document(expression, fields: fields)
        default:
            self = .literal(expression)
        }
    }

    /// The columns `value` reads.
    var columnsRead: [Int] {
        switch self {
        case .column(let position): [position]
        case .literal: []
        case .document(_, let fields): fields.map(\.column)
        }
    }

    func value(_ values: [JSON]) -> JSON {
        switch self {
        case .column(let position): return values[position]
        case .literal(let value): return value
        case .document(let expression, let fields):
            var document: Aggregation.Document = [:]
            for (name, position) in fields where values[position] != .null { document[name] = values[position] }
            return Aggregation.evaluate(expression, in: document)
        }
    }

    /// The paths of the `"$…"` strings anywhere in `expression`.
    private static func references(in expression: JSON) -> [String] {
        switch expression {
        case .string(let text) where text.hasPrefix("$"): [String(text.dropFirst())]
        case .array(let elements): elements.flatMap(references)
        case .object(let members): members.values.flatMap(references)
        default: []
        }
    }
}

/// One accumulator of one group, fed value by value as `Aggregation.accumulate` reads them all at once.
private struct Accumulator {
    enum Name: String { case sum = "$sum", avg = "$avg", min = "$min", max = "$max", first = "$first", last = "$last",
                        push = "$push", addToSet = "$addToSet", count = "$count" }

    let name: Name
    private var total = 0.0, numbers = 0, rows = 0
    private var best: JSON?, first: JSON?, last: JSON = .null
    private var values: [JSON] = []
    private var seen: Set<JSON> = []

    init(name: Name) { self.name = name }

    mutating func add(_ value: JSON) {
        rows += 1
        switch name {
        case .sum, .avg:
            if case .number(let number) = value {
                total += number
                numbers += 1
            }
        case .min, .max:
            guard value != .null else { return }
            // As `min(by:)` and `max(by:)`: the first of equals stays.
            if let current = best {
                let order = Aggregation.compare(value, current)
                if name == .min ? order < 0 : order > 0 { best = value }
            } else {
                best = value
            }
        case .first: if first == nil { first = value }
        case .last: last = value
        case .push: values.append(value)
        case .addToSet: if seen.insert(value).inserted { values.append(value) }
        case .count: break  // It counts rows.
        }
    }

    var result: JSON {
        switch name {
        case .sum: .number(total)
        case .avg: numbers == 0 ? .null : .number(total / Double(numbers))
        case .min, .max: best ?? .null
        case .first: first ?? .null
        case .last: last
        case .push, .addToSet: .array(values)
        case .count: .number(Double(rows))
        }
    }
}
