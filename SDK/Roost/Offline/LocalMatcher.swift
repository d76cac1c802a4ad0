import Foundation
import RoostCore

/// Evaluates a `QueryConstraint` against objects held locally (pinned objects): equality,
/// comparisons, `$in`/`$nin`, `$exists`, `$all`, `$containedBy`, `$regex`, `$or`/`$and`/`$nor`.
/// Subqueries, relations and geo operators need the server.
struct LocalMatcher {
    func matches(_ constraint: QueryConstraint, _ object: RoostObject) throws -> Bool {
        switch constraint {
        case .and(let parts): return try parts.allSatisfy { try matches($0, object) }
        case .or(let parts): return try parts.contains { try matches($0, object) }
        case .nor(let parts): return try !parts.contains { try matches($0, object) }
        case .relatedTo: throw RoostError.invalidArgument("$relatedTo needs the server")
        case .field(let key, let condition): return try matches(value(key, object), condition)
        }
    }

    private func value(_ key: String, _ object: RoostObject) -> JSON? {
        switch key {
        case "objectId": return object.objectId.map(JSON.string)
        case "createdAt": return object.createdAt?.roostJSON
        case "updatedAt": return object.updatedAt?.roostJSON
        default:
            let parts = key.split(separator: ".").map(String.init)
            var current = object.value(forKey: parts[0])
            for part in parts.dropFirst() { current = current?[part] }
            return current
        }
    }

    private func matches(_ value: JSON?, _ condition: FieldCondition) throws -> Bool {
        switch condition {
        case .equalTo(let expected): return equal(value, expected)
        case .notEqualTo(let expected): return !equal(value, expected)
        case .lessThan(let bound): return compare(value, bound).map { $0 < 0 } ?? false
        case .lessThanOrEqualTo(let bound): return compare(value, bound).map { $0 <= 0 } ?? false
        case .greaterThan(let bound): return compare(value, bound).map { $0 > 0 } ?? false
        case .greaterThanOrEqualTo(let bound): return compare(value, bound).map { $0 >= 0 } ?? false
        case .containedIn(let values): return values.contains { equal(value, $0) }
        case .notContainedIn(let values): return !values.contains { equal(value, $0) }
        case .exists(let flag): return (value != nil) == flag
        case .containsAll(let values): return values.allSatisfy { equal(value, $0) }
        case .containedBy(let values):
            return (value?.arrayValue ?? []).allSatisfy { element in values.contains { same(element, $0) } }
        case .matchesRegex(let pattern, let options):
            var regex = try Regex(options.contains("x") ? "(?x)" + pattern : pattern)
            if options.contains("i") { regex = regex.ignoresCase() }
            if options.contains("m") { regex = regex.anchorsMatchLineEndings() }
            if options.contains("s") { regex = regex.dotMatchesNewlines() }
            let strings = value?.arrayValue?.compactMap(\.stringValue) ?? value?.stringValue.map { [$0] } ?? []
            return strings.contains { $0.contains(regex) }
        case .containsAllMatching(let conditions): return try conditions.allSatisfy { try matches(value, $0) }
        default: throw RoostError.invalidArgument("this constraint needs the server")
        }
    }

    /// Equality as Parse means it: an array field matches when it holds the value; null matches missing.
    private func equal(_ value: JSON?, _ expected: JSON) -> Bool {
        if expected == .null { return value == nil || value == .null }
        guard let value else { return false }
        if same(value, expected) { return true }
        if case .array(let elements) = value, expected.arrayValue == nil { return elements.contains { same($0, expected) } }
        return false
    }

    /// Pointers by class and objectId, dates by instant, everything else by value.
    private func same(_ a: JSON, _ b: JSON) -> Bool {
        if a["__type"] == "Pointer" || b["__type"] == "Pointer" || a["__type"] == "Object" {
            return a["objectId"] == b["objectId"] && a["className"] == b["className"]
        }
        return a == b
    }

    private func compare(_ value: JSON?, _ bound: JSON) -> Int? {
        switch (value, bound) {
        case (.number(let a)?, .number(let b)): return a < b ? -1 : a > b ? 1 : 0
        case (.string(let a)?, .string(let b)): return a < b ? -1 : a > b ? 1 : 0
        default:
            guard let a = value.flatMap(Date.init(roostJSON:)), let b = Date(roostJSON: bound) else { return nil }
            return a < b ? -1 : a > b ? 1 : 0
        }
    }
}
