import RoostCore

/// The MongoDB aggregation stages Parse's `/aggregate` passes through, evaluated in memory over
/// objects in their wire form (`objectId` plays MongoDB's `_id`, and a group's key comes back as
/// `objectId`, as Parse renames it).
///
/// Supported: `$match` (equality, `$eq $ne $gt $gte $lt $lte $in $nin $exists`, `$or $and $nor`), `$group` (`_id`
/// an expression; `$sum $avg $min $max $first $last $push $addToSet $count`), `$project`, `$sort`,
/// `$skip`, `$limit`, `$count`, `$unwind`. Others answer 102.
struct Aggregation {
    typealias Document = [String: JSON]

    let stages: [(name: String, argument: JSON)]

    /// Checks the stages as Parse's `AggregateRouter.getPipeline` does (102 for each mistake).
    init(pipeline: [JSON]) throws {
        stages = try pipeline.map { stage in
            guard case .object(let members) = stage, members.count == 1, let (name, argument) = members.first else {
                let keys = stage.objectValue.map { $0.keys.sorted().joined(separator: ", ") } ?? ""
                throw ParseError(.invalidQuery, "Pipeline stages should only have one key but found \(keys).")
            }
            guard name.hasPrefix("$") else { throw ParseError(.invalidQuery, "Invalid aggregate stage '\(name)'.") }
            if name == "$group" {
                if argument["objectId"] != nil { throw ParseError(.invalidQuery, "Cannot use 'objectId' in aggregation stage $group.") }
                if argument["_id"] == nil { throw ParseError(.invalidQuery, "Invalid parameter for query: group. Missing key _id") }
            }
            guard Self.stageNames.contains(name) else { throw ParseError(.invalidQuery, "Unsupported aggregate stage '\(name)'.") }
            return (name, argument)
        }
    }

    /// Stages already checked by `init(pipeline:)`: the part of a pipeline left to memory.
    init(checked stages: ArraySlice<(name: String, argument: JSON)>) {
        self.stages = Array(stages)
    }

    private static let stageNames: Set<String> = ["$match", "$group", "$project", "$sort", "$skip", "$limit", "$count", "$unwind"]

    func run(_ documents: [Document]) throws -> [Document] {
        var documents = documents
        for (name, argument) in stages {
            switch name {
            case "$match": documents = try documents.filter { try Self.matches($0, argument) }
            case "$group": documents = try Self.group(documents, argument)
            case "$project": documents = try documents.map { try Self.project($0, argument) }
            case "$sort": documents = try Self.sort(documents, argument)
            case "$skip": documents = Array(documents.dropFirst(try Self.count(argument, name)))
            case "$limit": documents = Array(documents.prefix(try Self.count(argument, name)))
            case "$count":
                guard let field = argument.stringValue, !field.isEmpty else { throw ParseError(.invalidQuery, "$count needs a field name.") }
                documents = documents.isEmpty ? [] : [[field: .number(Double(documents.count))]]
            default: documents = try Self.unwind(documents, argument)
            }
        }
        return documents
    }

    /// The distinct values of `path` (arrays unwound, nulls and missing values dropped), first seen first.
    static func distinct(_ path: String, in documents: [Document]) -> [JSON] {
        var seen: Set<JSON> = [], values: [JSON] = []
        for document in documents {
            guard let value = lookup(path, in: document) else { continue }
            for element in value.arrayValue ?? [value] where element != .null && seen.insert(element).inserted {
                values.append(element)
            }
        }
        return values
    }

    // MARK: Expressions

    /// A value of `document` at a dotted path; `_id` names `objectId`.
    static func lookup(_ path: String, in document: Document) -> JSON? {
        var current: JSON? = .object(document)
        for (index, part) in path.split(separator: ".").enumerated() {
            // `_id`, `_created_at` and `_updated_at` are MongoDB's names of `objectId`, `createdAt` and `updatedAt`.
            let renamed = ["_id": "objectId", "_created_at": "createdAt", "_updated_at": "updatedAt"]
            let key = index == 0 ? renamed[String(part)] ?? String(part) : String(part)
            current = current?[key]
        }
        return current
    }

    /// `"$field"` reads the document; objects are evaluated member by member; anything else is literal.
    static func evaluate(_ expression: JSON, in document: Document) -> JSON {
        switch expression {
        case .string(let text) where text.hasPrefix("$"): return lookup(String(text.dropFirst()), in: document) ?? .null
        case .object(let members) where !members.keys.contains(where: { $0.hasPrefix("$") }):
            return .object(members.mapValues { evaluate($0, in: document) })
        case .object(let members) where members.count == 1 && AggregationExpression.operators.contains(members.keys.first!):
            let (op, argument) = members.first!
            return AggregationExpression.apply(op, argument) { evaluate($0, in: document) }
        default: return expression
        }
    }

    // MARK: Stages

    private static func group(_ documents: [Document], _ specification: JSON) throws -> [Document] {
        guard case .object(var fields) = specification, let key = fields.removeValue(forKey: "_id") else { return [] }
        var order: [JSON] = [], members: [JSON: [Document]] = [:]
        for document in documents {
            let value = groupKey(evaluate(key, in: document))
            if members[value] == nil { order.append(value) }
            members[value, default: []].append(document)
        }
        return try order.map { value in
            var result: Document = ["objectId": value]
            for (field, accumulator) in fields {
                guard case .object(let operation) = accumulator, operation.count == 1, let (name, argument) = operation.first else {
                    throw ParseError(.invalidQuery, "The field '\(field)' must be an accumulator object.")
                }
                result[field] = try accumulate(name, argument, over: members[value] ?? [])
            }
            return result
        }
    }

    /// As Parse's MongoDB adapter answers a group's key: a Pointer by its objectId (it groups on the stored
    /// `_p_<field>`), and an empty object, string or array as null.
    static func groupKey(_ value: JSON) -> JSON {
        switch value {
        case .object(let members) where members.isEmpty: return .null
        case .string(""), .array([]): return .null
        case .object(let members) where members["__type"] == "Pointer": return members["objectId"] ?? .null
        default: return value
        }
    }

    private static func accumulate(_ name: String, _ argument: JSON, over documents: [Document]) throws -> JSON {
        let values = documents.map { evaluate(argument, in: $0) }
        let numbers = values.compactMap(\.numberValue)
        switch name {
        case "$sum": return .number(numbers.reduce(0, +))
        case "$avg": return numbers.isEmpty ? .null : .number(numbers.reduce(0, +) / Double(numbers.count))
        case "$min": return values.filter { $0 != .null }.min(by: { compare($0, $1) < 0 }) ?? .null
        case "$max": return values.filter { $0 != .null }.max(by: { compare($0, $1) < 0 }) ?? .null
        case "$first": return values.first ?? .null
        case "$last": return values.last ?? .null
        case "$push": return .array(values)
        case "$addToSet":
            var seen: Set<JSON> = []
            return .array(values.filter { seen.insert($0).inserted })
        case "$count": return .number(Double(documents.count))
        default: throw ParseError(.invalidQuery, "Unsupported accumulator '\(name)'.")
        }
    }

    private static func project(_ document: Document, _ specification: JSON) throws -> Document {
        guard case .object(let fields) = specification, !fields.isEmpty else {
            throw ParseError(.invalidQuery, "$project needs at least one field.")
        }
        func isExcluded(_ value: JSON) -> Bool { value == .number(0) || value == .bool(false) }
        let idKey = { (key: String) in key == "_id" ? "objectId" : key }
        let excludesOnly = fields.allSatisfy { isExcluded($0.value) }
        if excludesOnly {
            var result = document
            for key in fields.keys { result[idKey(key)] = nil }
            return result
        }
        var result: Document = [:]
        if !(fields["_id"].map(isExcluded) ?? false) && !(fields["objectId"].map(isExcluded) ?? false) {
            result["objectId"] = document["objectId"]
        }
        for (key, value) in fields where !isExcluded(value) {
            if value == .number(1) || value == .bool(true) {
                result[idKey(key)] = lookup(key, in: document)
            } else {
                result[idKey(key)] = evaluate(value, in: document)
            }
        }
        return result
    }

    private static func sort(_ documents: [Document], _ specification: JSON) throws -> [Document] {
        guard case .object(let fields) = specification, !fields.isEmpty else { throw ParseError(.invalidQuery, "$sort needs a field.") }
        // MongoDB keeps the written order of the keys; a decoded object does not, so keys sort by name.
        let keys = try fields.sorted { $0.key < $1.key }.map { key, direction -> (String, Bool) in
            guard let number = direction.numberValue, number == 1 || number == -1 else {
                throw ParseError(.invalidQuery, "$sort directions are 1 or -1.")
            }
            return (key, number < 0)
        }
        return documents.sorted { left, right in
            for (key, descending) in keys {
                let order = compare(lookup(key, in: left) ?? .null, lookup(key, in: right) ?? .null)
                if order != 0 { return descending ? order > 0 : order < 0 }
            }
            return false
        }
    }

    private static func unwind(_ documents: [Document], _ argument: JSON) throws -> [Document] {
        guard let path = (argument.stringValue ?? argument["path"]?.stringValue), path.hasPrefix("$") else {
            throw ParseError(.invalidQuery, "$unwind needs a field path.")
        }
        let field = String(path.dropFirst())
        return documents.flatMap { document -> [Document] in
            guard case .array(let elements)? = document[field] else { return [] }
            return elements.map { element in
                var copy = document
                copy[field] = element
                return copy
            }
        }
    }

    static func count(_ argument: JSON, _ stage: String) throws -> Int {
        guard let number = argument.numberValue, number >= 0, number == number.rounded() else {
            throw ParseError(.invalidQuery, "\(stage) needs a non-negative integer.")
        }
        // Past Int's range is past any class's size: as many as there are (and no trap converting it).
        return Int(exactly: number) ?? Int.max
    }

    // MARK: Matching and ordering

    static func matches(_ document: Document, _ condition: JSON) throws -> Bool {
        guard case .object(let fields) = condition else { throw ParseError(.invalidQuery, "$match needs an object.") }
        for (key, expected) in fields {
            if let branches = try logicalBranches(key, expected) {
                let matched = try branches.map { try matches(document, $0) }
                switch key {
                case "$or": if !matched.contains(true) { return false }
                case "$and": if matched.contains(false) { return false }
                default: if matched.contains(true) { return false }  // $nor
                }
                continue
            }
            let actual = matchedValue(key, in: document)
            guard case .object(let operators) = expected, operators.keys.allSatisfy({ $0.hasPrefix("$") }), !operators.isEmpty else {
                if !equals(actual, expected) { return false }
                continue
            }
            for (name, operand) in operators {
                let value = actual ?? .null
                let satisfied: Bool
                switch name {
                case "$eq": satisfied = equals(actual, operand)
                case "$ne": satisfied = !equals(actual, operand)
                case "$gt": satisfied = actual != nil && comparable(value, operand) && compare(value, operand) > 0
                case "$gte": satisfied = actual != nil && comparable(value, operand) && compare(value, operand) >= 0
                case "$lt": satisfied = actual != nil && comparable(value, operand) && compare(value, operand) < 0
                case "$lte": satisfied = actual != nil && comparable(value, operand) && compare(value, operand) <= 0
                case "$in": satisfied = (operand.arrayValue ?? []).contains { equals(actual, $0) }
                case "$nin": satisfied = !(operand.arrayValue ?? []).contains { equals(actual, $0) }
                case "$exists": satisfied = (actual != nil) == (operand.boolValue ?? true)
                default: throw ParseError(.invalidQuery, "Unsupported $match operator '\(name)'.")
                }
                if !satisfied { return false }
            }
        }
        return true
    }

    /// The conditions of `$or`, `$and` and `$nor` (nil for a field name).
    /// - Throws: `ParseError` 102 when the operator's value is not an array.
    private static func logicalBranches(_ key: String, _ value: JSON) throws -> [JSON]? {
        guard key == "$or" || key == "$and" || key == "$nor" else { return nil }
        guard let branches = value.arrayValue else { throw ParseError(.invalidQuery, "\(key) needs an array.") }
        return branches
    }

    /// A field's value as MongoDB holds it for matching: `createdAt` and `updatedAt` are dates there (their wire form
    /// is a bare string), so a `$match` on them compares with `{"__type": "Date"}` values.
    private static func matchedValue(_ key: String, in document: Document) -> JSON? {
        let value = lookup(key, in: document)
        let dateKeys: Set<String> = ["createdAt", "updatedAt", "_created_at", "_updated_at"]
        if dateKeys.contains(key) {
            let stored = key.hasPrefix("_") ? lookup(key == "_created_at" ? "createdAt" : "updatedAt", in: document) : value
            if case .string(let iso)? = stored { return ["__type": "Date", "iso": .string(iso)] }
        }
        return value
    }

    /// MongoDB's equality: an array field matches a value it contains. A Pointer matches its objectId, as
    /// Parse's adapter turns `{pointer: "<id>"}` into a match on the stored `_p_pointer`.
    private static func equals(_ actual: JSON?, _ expected: JSON) -> Bool {
        guard let actual else { return expected == .null }
        if actual == expected { return true }
        if actual["__type"] == "Pointer", case .string = expected { return actual["objectId"] == expected }
        if case .array(let elements) = actual { return elements.contains(expected) }
        return false
    }

    private static func comparable(_ left: JSON, _ right: JSON) -> Bool { rank(left) == rank(right) }

    /// MongoDB's order across types: null < numbers < strings < objects < arrays < booleans; dates by instant.
    static func compare(_ left: JSON, _ right: JSON) -> Int {
        let (leftRank, rightRank) = (rank(left), rank(right))
        if leftRank != rightRank { return leftRank < rightRank ? -1 : 1 }
        switch (left, right) {
        case (.number(let a), .number(let b)): return a < b ? -1 : a > b ? 1 : 0
        case (.string(let a), .string(let b)): return a < b ? -1 : a > b ? 1 : 0
        case (.bool(let a), .bool(let b)): return a == b ? 0 : (a ? 1 : -1)
        default:
            let (a, b) = (dateText(left) ?? left.jsonText, dateText(right) ?? right.jsonText)
            return a < b ? -1 : a > b ? 1 : 0
        }
    }

    private static func rank(_ value: JSON) -> Int {
        switch value {
        case .null: 0
        case .number: 1
        case .string: 2
        case .object, .encodedFragment: dateText(value) != nil ? 5 : 3
        case .array: 4
        case .bool: 6
        }
    }

    private static func dateText(_ value: JSON) -> String? {
        guard value["__type"] == "Date" else { return nil }
        return value["iso"]?.stringValue
    }
}
