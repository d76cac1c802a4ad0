/// One change to one field in a save, as Parse clients send it: a plain value or an `__op`.
public enum FieldOperation: Equatable, Sendable {
    case set(JSON)
    case delete
    case increment(Double)
    case add([JSON])
    case addUnique([JSON])
    case remove([JSON])

    /// Reads a field value from a save body: `{"__op": ...}` becomes an operation, anything else a `set`
    /// of the validated value.
    /// - Throws: `ParseError` 108 for an unknown `__op`, 107 for a malformed one, and `WireValue`'s errors.
    public static func decode(_ value: JSON) throws -> (FieldOperation, FieldType?) {
        guard case .object(let members) = value, let opValue = members["__op"] else {
            let (type, normalized) = try WireValue.validate(value)
            return (.set(normalized), type)
        }
        guard let op = opValue.stringValue else { throw ParseError(.invalidJSON, "__op must be a string") }
        switch op {
        case "Delete":
            return (.delete, nil)
        case "Increment":
            guard let amount = members["amount"]?.numberValue else {
                throw ParseError(.invalidJSON, "incrementing must provide a number")
            }
            return (.increment(amount), .number)
        case "Add", "AddUnique", "Remove":
            guard let objects = members["objects"]?.arrayValue else {
                throw ParseError(.invalidJSON, "objects to \(op == "Remove" ? "remove" : "add") must be an array")
            }
            let validated = try objects.map { try WireValue.validateNested($0) }
            switch op {
            case "Add": return (.add(validated), .array)
            case "AddUnique": return (.addUnique(validated), .array)
            default: return (.remove(validated), .array)
            }
        default:
            throw ParseError(.commandUnavailable, "The \(op) operator is not supported yet.")
        }
    }

    /// Whether the update response must echo the field's resulting value (Parse does for these ops).
    public var echoesResult: Bool {
        switch self {
        case .increment, .add, .addUnique, .remove: true
        case .set, .delete: false
        }
    }

    /// The field's value after this operation, given its current value (`nil` when absent).
    /// `nil` means the field is removed.
    /// - Throws: `ParseError` 111 when the current value has the wrong type for the operation.
    public func applied(to current: JSON?) throws -> JSON? {
        switch self {
        case .set(let value): return value
        case .delete: return nil
        case .increment(let amount):
            switch current {
            case nil, .null?: return .number(amount)
            case .number(let value)?: return .number(value + amount)
            default: throw ParseError(.incorrectType, "Cannot increment a non-number field")
            }
        case .add(let objects):
            return .array(try currentArray(current) + objects)
        case .addUnique(let objects):
            // Sets keep this linear: a large body must not hold the single writer for long.
            var result = try currentArray(current)
            var present = Set(result)
            for object in objects where present.insert(object).inserted { result.append(object) }
            return .array(result)
        case .remove(let objects):
            let removed = Set(objects)
            return .array(try currentArray(current).filter { !removed.contains($0) })
        }
    }

    private func currentArray(_ current: JSON?) throws -> [JSON] {
        switch current {
        case nil, .null?: return []
        case .array(let elements)?: return elements
        default: throw ParseError(.incorrectType, "Cannot apply an array operation to a non-array field")
        }
    }
}
