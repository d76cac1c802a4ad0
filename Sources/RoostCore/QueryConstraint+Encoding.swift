extension QueryConstraint {
    /// The `where` JSON Parse servers accept: the inverse of `parse(where:)`.
    public var whereJSON: JSON {
        switch self {
        case .and(let parts):
            // Conditions on different keys merge into one object; repeated keys need `$and`.
            var merged: [String: JSON] = [:]
            var needsAnd = false
            for part in parts {
                guard case .object(let members) = part.whereJSON else { continue }
                for (key, value) in members {
                    if let existing = merged[key] {
                        if case .object(var left) = existing, case .object(let right) = value,
                            left.keys.allSatisfy({ $0.hasPrefix("$") }), right.keys.allSatisfy({ $0.hasPrefix("$") }),
                            Set(left.keys).isDisjoint(with: right.keys)
                        {
                            left.merge(right) { first, _ in first }
                            merged[key] = .object(left)
                        } else {
                            needsAnd = true
                        }
                    } else {
                        merged[key] = value
                    }
                }
            }
            if needsAnd { return ["$and": .array(parts.map(\.whereJSON))] }
            return .object(merged)
        case .or(let parts): return ["$or": .array(parts.map(\.whereJSON))]
        case .nor(let parts): return ["$nor": .array(parts.map(\.whereJSON))]
        case .relatedTo(let className, let objectId, let key):
            return ["$relatedTo": ["object": WireValue.pointer(className, objectId), "key": .string(key)]]
        case .field(let key, let condition):
            return .object([key: condition.json])
        }
    }
}

extension FieldCondition {
    /// The operator object for one key (or the plain value, for equality).
    public var json: JSON {
        func geo(_ point: GeoPoint) -> JSON {
            ["__type": "GeoPoint", "latitude": .number(point.latitude), "longitude": .number(point.longitude)]
        }
        func subquery(_ query: Subquery) -> JSON {
            var json: [String: JSON] = ["className": .string(query.className), "where": query.constraint.whereJSON]
            if let key = query.redirectKey { json["redirectClassNameForKey"] = .string(key) }
            return .object(json)
        }
        switch self {
        case .equalTo(let value):
            // A value that looks like an operator object must be wrapped to stay a value.
            if case .object(let members) = value, members.keys.contains(where: { $0.hasPrefix("$") }) { return ["$eq": value] }
            return value
        case .notEqualTo(let value): return ["$ne": value]
        case .lessThan(let value): return ["$lt": value]
        case .lessThanOrEqualTo(let value): return ["$lte": value]
        case .greaterThan(let value): return ["$gt": value]
        case .greaterThanOrEqualTo(let value): return ["$gte": value]
        case .containedIn(let values): return ["$in": .array(values)]
        case .notContainedIn(let values): return ["$nin": .array(values)]
        case .exists(let flag): return ["$exists": .bool(flag)]
        case .containsAll(let values): return ["$all": .array(values)]
        case .containedBy(let values): return ["$containedBy": .array(values)]
        case .containsAllMatching(let regexes): return ["$all": .array(regexes.map(\.json))]
        case .matchesRegex(let pattern, let options):
            return options.isEmpty ? ["$regex": .string(pattern)] : ["$regex": .string(pattern), "$options": .string(options)]
        case .matchesKeyInQuery(let key, let query): return ["$select": ["query": subquery(query), "key": .string(key)]]
        case .doesNotMatchKeyInQuery(let key, let query): return ["$dontSelect": ["query": subquery(query), "key": .string(key)]]
        case .matchesQuery(let query): return ["$inQuery": subquery(query)]
        case .doesNotMatchQuery(let query): return ["$notInQuery": subquery(query)]
        case .nearSphere(let point, let maxDistance):
            var result: [String: JSON] = ["$nearSphere": geo(point)]
            if let maxDistance { result["$maxDistanceInRadians"] = .number(maxDistance) }
            return .object(result)
        case .withinBox(let southWest, let northEast): return ["$within": ["$box": [geo(southWest), geo(northEast)]]]
        case .withinPolygon(let points): return ["$geoWithin": ["$polygon": .array(points.map(geo))]]
        case .polygonContains(let point): return ["$geoIntersects": ["$point": geo(point)]]
        case .withinCenterSphere(let center, let radius):
            return ["$geoWithin": ["$centerSphere": [geo(center), .number(radius)]]]
        case .matchesText(let search): return ["$text": search.json]
        }
    }
}
