/// One change to one field in a save, as Parse clients send it: a plain value or an `__op`.
public enum FieldOperation: Equatable, Sendable {
    case set(JSON)
    case delete
    case increment(Double)
    case add([JSON])
    case addUnique([JSON])
    case remove([JSON])
    /// `AddRelation`/`RemoveRelation` (or both, in a `Batch`): object ids of `targetClass` to link and unlink.
    case relation(targetClass: String, add: [String], remove: [String])

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
        case "AddRelation", "RemoveRelation":
            let (target, ids) = try relationTargets(members["objects"])
            let operation = FieldOperation.relation(targetClass: target, add: op == "AddRelation" ? ids : [], remove: op == "RemoveRelation" ? ids : [])
            return (operation, .relation(targetClass: target))
        case "Batch":
            guard let ops = members["ops"]?.arrayValue, !ops.isEmpty else { throw ParseError(.invalidJSON, "Batch must have ops") }
            var target: String?, added: [String] = [], removed: [String] = []
            for op in ops {
                guard case (.relation(let opTarget, let add, let remove), _) = try decode(op), target == nil || target == opTarget else {
                    throw ParseError(.invalidJSON, "Batch ops must be AddRelation or RemoveRelation on one class")
                }
                target = opTarget
                added += add
                removed += remove
            }
            return (.relation(targetClass: target!, add: added, remove: removed), .relation(targetClass: target!))
        default:
            throw ParseError(.commandUnavailable, "The \(op) operator is not supported yet.")
        }
    }

    /// The class and object ids of a relation operation's `objects`: Pointers, all to one class.
    private static func relationTargets(_ objects: JSON?) throws -> (String, [String]) {
        guard let objects = objects?.arrayValue, !objects.isEmpty else { throw ParseError(.invalidJSON, "objects must be a non-empty array") }
        var target: String?
        var ids: [String] = []
        for object in objects {
            guard object["__type"]?.stringValue == "Pointer", let className = object["className"]?.stringValue,
                Names.isValidClassName(className), let id = object["objectId"]?.stringValue, !id.isEmpty
            else { throw ParseError(.invalidPointer, "relation objects must be Pointers") }
            guard target == nil || target == className else {
                throw ParseError(.incorrectType, "All objects in a relation must be of the same class")
            }
            target = className
            ids.append(id)
        }
        return (target!, ids)
    }

    /// Whether the update response must echo the field's resulting value (Parse does for these ops).
    public var echoesResult: Bool {
        switch self {
        case .increment, .add, .addUnique, .remove: true
        case .set, .delete, .relation: false
        }
    }

    /// The field's value after this operation, given its current value (`nil` when absent).
    /// `nil` means the field is removed.
    /// - Throws: `ParseError` 111 when the current value has the wrong type for the operation, 107 when
    ///   an Increment's result is out of a Double's range.
    public func applied(to current: JSON?) throws -> JSON? {
        switch self {
        case .set(let value): return value
        case .delete: return nil
        case .increment(let amount):
            switch current {
            case nil, .null?: return .number(amount)
            case .number(let value)?:
                // Past a Double's range the sum is infinity, which JSON cannot hold (it was stored, and read back as null).
                let sum = value + amount
                guard sum.isFinite else { throw ParseError(.invalidJSON, "Increment overflows: the result is out of range.") }
                return .number(sum)
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
        case .relation(let target, _, _):
            // The pairs live in the join table; the object shows where to find them, as Parse does.
            return ["__type": "Relation", "className": .string(target)]
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
