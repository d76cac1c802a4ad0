import RoostCore

/// A `$match` as a query constraint for `QueryCompiler`, when the SQL it compiles to selects exactly the objects
/// `Aggregation.matches` keeps; nil otherwise (the stage then runs in memory).
///
/// MongoDB's matching and Parse's queries agree on values of the field's own type: strings, numbers, Booleans,
/// Dates and Pointers (a Pointer also by its bare objectId), null for a missing value, an Array field holding a
/// string or number, `$exists` on any field. Left to memory: dot paths, fields the schema does not know, plain
/// objects and arrays as values, comparisons of Booleans, Pointers or Arrays, operators other than
/// `$eq $ne $gt $gte $lt $lte $in $nin $exists $or $and $nor`.
enum AggregationMatch {
    static func constraint(_ condition: JSON, schema: ClassSchema) -> QueryConstraint? {
        guard case .object(let fields) = condition else { return nil }
        var parts: [QueryConstraint] = []
        for (key, expected) in fields.sorted(by: { $0.key < $1.key }) {
            if ["$or", "$and", "$nor"].contains(key) {
                guard let branches = expected.arrayValue else { return nil }
                var translated: [QueryConstraint] = []
                for branch in branches {
                    guard let part = constraint(branch, schema: schema) else { return nil }
                    translated.append(part)
                }
                parts.append(key == "$or" ? .or(translated) : key == "$and" ? .and(translated) : .nor(translated))
                continue
            }
            guard let field = Field(key, schema: schema) else { return nil }
            guard case .object(let operators) = expected, !operators.isEmpty, operators.keys.allSatisfy({ $0.hasPrefix("$") }) else {
                guard let value = field.operand(expected, comparing: false) else { return nil }
                parts.append(.field(field.name, .equalTo(value)))
                continue
            }
            for (name, operand) in operators.sorted(by: { $0.key < $1.key }) {
                guard let condition = field.condition(name, operand) else { return nil }
                parts.append(.field(field.name, condition))
            }
        }
        return parts.count == 1 ? parts[0] : .and(parts)
    }

    /// A top-level key of the documents and what the schema says of its values.
    private struct Field {
        let name: String
        let type: FieldType

        init?(_ key: String, schema: ClassSchema) {
            let renamed = ["_id": "objectId", "_created_at": "createdAt", "_updated_at": "updatedAt"]
            name = renamed[key] ?? key
            switch name {
            case "objectId": type = .string
            case "createdAt", "updatedAt": type = .date
            default:
                guard Names.isValidIdentifier(name), let recorded = schema.fields[name] else { return nil }
                type = recorded
            }
        }

        var isBuiltIn: Bool { ["objectId", "createdAt", "updatedAt"].contains(name) }

        func condition(_ name: String, _ operand: JSON) -> FieldCondition? {
            switch name {
            case "$exists": return operand.boolValue.map(FieldCondition.exists)
            case "$eq": return self.operand(operand, comparing: false).map(FieldCondition.equalTo)
            case "$ne": return self.operand(operand, comparing: false).map(FieldCondition.notEqualTo)
            case "$in", "$nin":
                guard let values = operand.arrayValue, values.count <= QueryConstraint.maximumListValues else { return nil }
                let operands = values.compactMap { self.operand($0, comparing: false) }
                // QueryCompiler ORs nulls and Booleans one by one, and refuses more than 100 of them.
                guard operands.count == values.count, operands.filter({ $0 == .null || $0.boolValue != nil }).count <= 100 else { return nil }
                return name == "$in" ? .containedIn(operands) : .notContainedIn(operands)
            case "$gt", "$gte", "$lt", "$lte":
                guard let value = self.operand(operand, comparing: true) else { return nil }
                switch name {
                case "$gt": return .greaterThan(value)
                case "$gte": return .greaterThanOrEqualTo(value)
                case "$lt": return .lessThan(value)
                default: return .lessThanOrEqualTo(value)
                }
            default: return nil
            }
        }

        /// `value` as the constraint's operand (a bare objectId becomes the Pointer it names), or nil when SQL would
        /// compare it otherwise than MongoDB does.
        func operand(_ value: JSON, comparing: Bool) -> JSON? {
            // (`nil` in a ternary with a JSON would be JSON's null: each refusal returns `nil` on its own.)
            if value == .null {
                if comparing || type == .array { return nil }
                return .null
            }
            let accepted: Bool
            switch type {
            case .string: accepted = value.stringValue != nil
            case .number: accepted = value.numberValue != nil
            case .boolean: accepted = !comparing && value.boolValue != nil
            case .array: accepted = !comparing && (value.stringValue != nil || value.numberValue != nil)
            case .date:
                // Dates compare by their ISO text in memory; the built-in ones by instant in SQL: only a canonical text agrees.
                guard case .object(let members) = value, members.count == 2, value["__type"] == "Date",
                    let iso = value["iso"]?.stringValue else { return nil }
                accepted = !isBuiltIn || ParseDate(iso: iso)?.iso == iso
            case .pointer(let target):
                if comparing { return nil }
                if let id = value.stringValue { return WireValue.pointer(target, id) }
                guard case .object(let members) = value, members.count == 3, value["__type"] == "Pointer",
                    value["className"]?.stringValue == target, value["objectId"]?.stringValue != nil else { return nil }
                accepted = true
            default: accepted = false
            }
            guard accepted else { return nil }
            return value
        }
    }
}
