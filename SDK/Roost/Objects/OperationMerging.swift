import RoostCore

/// How a new edit combines with an edit of the same field that has not been saved yet, so each
/// save sends one operation per field (as the Parse SDKs do).
enum OperationMerging {
    /// `new` applied after `previous`; `base` is the field's last known server value. Combinations that
    /// no single Parse operation expresses become a `set` of the resulting value.
    static func merge(_ new: FieldOperation, after previous: FieldOperation?, base: JSON?) -> FieldOperation {
        guard let previous else { return new }
        switch (previous, new) {
        case (_, .set), (_, .delete): return new
        case (.increment(let a), .increment(let b)): return .increment(a + b)
        case (.add(let a), .add(let b)): return .add(a + b)
        case (.addUnique(let a), .addUnique(let b)): return .addUnique(a + b.filter { !a.contains($0) })
        case (.remove(let a), .remove(let b)): return .remove(a + b.filter { !a.contains($0) })
        case (.relation(let target, let addedA, let removedA), .relation(_, let addedB, let removedB)):
            return .relation(targetClass: target, add: addedA.filter { !removedB.contains($0) } + addedB,
                             remove: removedA.filter { !addedB.contains($0) } + removedB)
        default:
            let value = (try? previous.applied(to: base)).flatMap { try? new.applied(to: $0) }
            return value.map(FieldOperation.set) ?? .delete
        }
    }

    /// `later` (edits made while a save was in flight) on top of `earlier` (the failed save's edits).
    static func merge(_ later: [String: FieldOperation], after earlier: [String: FieldOperation],
                      base: [String: JSON]) -> [String: FieldOperation] {
        var result = earlier
        for (key, operation) in later {
            result[key] = merge(operation, after: result[key], base: base[key])
        }
        return result
    }

    /// The wire form of an operation in a save body.
    static func json(_ operation: FieldOperation) -> JSON {
        switch operation {
        case .set(let value): value
        case .delete: ["__op": "Delete"]
        case .increment(let amount): ["__op": "Increment", "amount": .number(amount)]
        case .add(let objects): ["__op": "Add", "objects": .array(objects)]
        case .addUnique(let objects): ["__op": "AddUnique", "objects": .array(objects)]
        case .remove(let objects): ["__op": "Remove", "objects": .array(objects)]
        case .relation(let target, let added, let removed):
            relationJSON(target, added: added, removed: removed)
        }
    }

    private static func relationJSON(_ target: String, added: [String], removed: [String]) -> JSON {
        let pointers = { (ids: [String]) in JSON.array(ids.map { WireValue.pointer(target, $0) }) }
        switch (added.isEmpty, removed.isEmpty) {
        case (false, true): return ["__op": "AddRelation", "objects": pointers(added)]
        case (true, false): return ["__op": "RemoveRelation", "objects": pointers(removed)]
        default:
            return ["__op": "Batch", "ops": [["__op": "AddRelation", "objects": pointers(added)],
                                             ["__op": "RemoveRelation", "objects": pointers(removed)]]]
        }
    }
}
