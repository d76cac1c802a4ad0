import RoostCore

/// Operand values read as Parse Server (MongoTransform) reads them before comparing: objectIds on Pointer
/// fields, `$relativeTime`, and the values it refuses.
extension QueryCompiler {
    /// Plain objectIds in the `$in`/`$nin`/`$ne` of a Pointer field name objects of its target class, as Parse
    /// reads them (`<targetClass>$<id>`). (`$eq` would too, but it reaches us as a plain equality, which Parse
    /// compares with the id itself: no match.)
    func pointersForIds(_ key: String, _ values: [JSON]) -> [JSON] {
        guard case .pointer(let target)? = schema.fields[key] else { return values }
        return values.map { value in
            if case .string(let id) = value { return WireValue.pointer(target, id) }
            return value
        }
    }

    /// The type `$relativeTime` is checked against: the schema's, with the built-in dates.
    func recordedType(_ key: String) -> FieldType? {
        switch key {
        case "createdAt", "updatedAt": .date
        case "objectId": .string
        default: schema.fields[key]
        }
    }

    /// A `{"$relativeTime": …}` operand as the Date it names now, with Parse's 107s: only on Date fields (or keys the
    /// schema does not know), and only text Parse's `relativeTimeToDate` reads.
    func resolvingRelativeTime(_ key: String, _ value: JSON, _ op: String) throws -> JSON {
        guard case .object(let members) = value, let relative = members["$relativeTime"] else { return value }
        if let type = recordedType(key), type != .date { throw ParseError(.invalidJSON, RelativeTime.onlyDates) }
        switch RelativeTime.resolve(JavaScriptString.of(relative), now: .now()) {
        case .success(let date): return ["__type": "Date", "iso": .string(date.iso)]
        case .failure(let failure): throw ParseError(.invalidJSON, "bad $relativeTime (\(op)) value. \(failure.info)")
        }
    }

    /// `$eq`/`$ne` of a `$relativeTime`: refused, after the same field check as the comparisons.
    func refuseRelativeTime(_ key: String, _ value: JSON) throws {
        guard case .object(let members) = value, members["$relativeTime"] != nil else { return }
        if let type = recordedType(key), type != .date { throw ParseError(.invalidJSON, RelativeTime.onlyDates) }
        throw ParseError(.invalidJSON, RelativeTime.onlyComparisons)
    }

    /// Parse (MongoTransform) refuses a plain object or an array inside `$ne`, `$lt`…, `$in`, `$nin` or
    /// `$containedBy` (`bad atom: …`) but on Array fields. (Parse also refuses one as a plain equality's value,
    /// `You cannot use … as a query parameter.`; we match it whole, as our tests of such equality expect.)
    func checkAtoms(_ key: String, _ condition: FieldCondition) throws {
        func isAtom(_ value: JSON) -> Bool {
            switch value {
            case .array: return false
            case .object(let members):
                if members.isEmpty || members["$relativeTime"] != nil { return true }  // `{}` matches `{}`; resolved later.
                return ["Pointer", "Date", "Bytes", "GeoPoint", "Polygon", "File"].contains(members["__type"]?.stringValue ?? "")
            default: return true
            }
        }
        let arrayField = isArrayField(key)
        switch condition {
        case .notEqualTo(let value), .lessThan(let value), .lessThanOrEqualTo(let value), .greaterThan(let value),
            .greaterThanOrEqualTo(let value):
            if arrayField || isAtom(value) { return }
            throw ParseError(.invalidJSON, "bad atom: \(value.jsonText)")
        case .containedIn(let values), .notContainedIn(let values), .containedBy(let values):
            if arrayField { return }
            if let bad = values.first(where: { !isAtom($0) }) { throw ParseError(.invalidJSON, "bad atom: \(bad.jsonText)") }
        default: return
        }
    }
}
