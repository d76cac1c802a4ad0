extension QueryConstraint {
    /// Parses the JSON of a `where` parameter.
    /// - Throws: `ParseError` 102 for a malformed or unsupported constraint (107 for malformed operator
    ///   values, as Parse), 105 for a bad key name, and `WireValue`'s errors for malformed values.
    public static func parse(where json: JSON) throws -> QueryConstraint {
        let constraint = try parseClause(json, depth: 0)
        guard constraint.complexity <= maximumComplexity else {
            throw ParseError(.invalidQuery, "The query is too complex: more than \(maximumComplexity) conditions.")
        }
        return constraint
    }

    static func parseClause(_ json: JSON, depth: Int) throws -> QueryConstraint {
        guard case .object(let members) = json else {
            throw ParseError(.invalidQuery, "where must be a JSON object")
        }
        var parts: [QueryConstraint] = []
        for key in members.keys.sorted() {
            let value = members[key]!
            switch key {
            case "$or", "$and", "$nor":
                guard let clauses = value.arrayValue else {
                    // Parse's words: `$nor` says "of at least 1 value" whatever its fault.
                    let needs = key == "$nor" ? "an array of at least 1 value" : "an array value"
                    throw ParseError(.invalidQuery, "Bad \(key) format - use \(needs).")
                }
                guard !clauses.isEmpty else {
                    throw ParseError(.invalidQuery, "Bad \(key) format - use an array of at least 1 value.")
                }
                let parsed = try clauses.map { try parseClause($0, depth: depth) }
                parts.append(key == "$or" ? .or(parsed) : key == "$and" ? .and(parsed) : .nor(parsed))
            case "$relatedTo":
                guard let object = value["object"], object["__type"]?.stringValue == "Pointer",
                    let className = object["className"]?.stringValue, let objectId = object["objectId"]?.stringValue,
                    let relationKey = value["key"]?.stringValue, Names.isValidIdentifier(relationKey)
                else { throw ParseError(.invalidQuery, "improper usage of $relatedTo") }
                parts.append(.relatedTo(className: className, objectId: objectId, key: relationKey))
            default:
                parts.append(contentsOf: try parseField(key, value, depth: depth))
            }
        }
        return parts.count == 1 ? parts[0] : .and(parts)
    }

    private static func parseField(_ key: String, _ value: JSON, depth: Int) throws -> [QueryConstraint] {
        if key == "ACL" { throw ParseError(.invalidQuery, "Cannot query on ACL.") }
        guard isQueryableKey(key) else { throw ParseError(.invalidKeyName, "Invalid key name: \(key)") }
        guard case .object(let members) = value, members["__type"] == nil,
            members.keys.contains(where: { $0.hasPrefix("$") })
        else {
            return [.field(key, .equalTo(try constraintValue(value)))]
        }
        var conditions: [QueryConstraint] = []
        for op in members.keys.sorted() where !["$options", "$maxDistance", "$maxDistanceInRadians",
                                               "$maxDistanceInKilometers", "$maxDistanceInMiles"].contains(op) {
            let condition = try parseOperator(op, members[op]!, members, depth: depth)
            conditions.append(.field(key, condition))
        }
        if conditions.isEmpty { throw ParseError(.invalidQuery, "bad constraint on \(key)") }
        return conditions
    }

    private static func parseOperator(_ op: String, _ operand: JSON, _ members: [String: JSON], depth: Int) throws -> FieldCondition {
        switch op {
        case "$eq": return .equalTo(try comparedValue(operand))
        case "$ne": return .notEqualTo(try comparedValue(operand))
        case "$lt": return .lessThan(try comparedValue(operand))
        case "$lte": return .lessThanOrEqualTo(try comparedValue(operand))
        case "$gt": return .greaterThan(try comparedValue(operand))
        case "$gte": return .greaterThanOrEqualTo(try comparedValue(operand))
        case "$all" where operand.arrayValue?.contains(where: { $0["$regex"] != nil }) == true:
            let elements = operand.arrayValue!
            guard elements.count <= maximumListValues else {
                throw ParseError(.invalidQuery, "$all takes at most \(maximumListValues) values.")
            }
            // Parse's check, made for the JS SDK's containsAllStartingWith (`^\Q…\E` regexes): one regex must be
            // such a prefix, and several must all be or all not be.
            let prefixes = elements.map(isStartsWithRegex)
            guard elements.count == 1 ? prefixes[0] : prefixes.allSatisfy({ $0 == prefixes[0] }) else {
                let listed = elements.map { $0["$regex"].map { "/\(JavaScriptString.of($0))/" } ?? JavaScriptString.of($0) }
                throw ParseError(.invalidJSON, "All $all values must be of regex type or none: " + listed.joined(separator: ","))
            }
            // Every regex must match some element, and every plain value be one.
            let conditions = try elements.map { element -> FieldCondition in
                guard let regex = element["$regex"] else { return .equalTo(try constraintValue(element)) }
                return .matchesRegex(JavaScriptString.of(regex), options: element["$options"]?.stringValue ?? "")
            }
            return .containsAllMatching(conditions)
        case "$in", "$nin", "$all", "$containedBy":
            guard let values = operand.arrayValue else {
                throw ParseError(.invalidJSON, op == "$containedBy" ? "bad $containedBy: should be an array" : "bad \(op) value")
            }
            // Parse spreads the arrays in an `$in`/`$nin` list into their elements.
            let listed = op == "$in" || op == "$nin" ? values.flatMap { $0.arrayValue ?? [$0] } : values
            guard listed.count <= maximumListValues else {
                throw ParseError(.invalidQuery, "\(op) takes at most \(maximumListValues) values.")
            }
            // An `$all` element like `{"$unknown": …}` is kept as it is: no stored value equals it (MongoDB finds none).
            let parsed = try listed.map { value in
                if op == "$all", case .object(let members) = value, members.keys.contains(where: { $0.hasPrefix("$") }) { return value }
                return try constraintValue(value)
            }
            switch op {
            case "$in": return .containedIn(parsed)
            case "$nin": return .notContainedIn(parsed)
            case "$all": return .containsAll(parsed)
            default: return .containedBy(parsed)
            }
        case "$exists":
            if RelativeTime.operand(operand) != nil {
                throw ParseError(.invalidJSON, RelativeTime.onlyComparisons)
            }
            // Parse passes the atom to MongoDB, which reads it by truth: numbers other than 0 and every string
            // are true, null is false; objects and arrays are not atoms.
            switch operand {
            case .bool(let flag): return .exists(flag)
            case .number(let number): return .exists(number != 0)
            case .string: return .exists(true)
            case .null: return .exists(false)
            default: throw ParseError(.invalidJSON, "bad atom: \(operand.jsonText)")
            }
        case "$regex":
            // Parse's validateQuery tests a string `$options` (`^[imxs]+$`, so not empty) before anything else, when
            // `$regex` is truthy.
            if JavaScriptString.isTruthy(operand), case .string(let options)? = members["$options"],
                options.isEmpty || !options.allSatisfy({ "imxs".contains($0) }) {
                throw ParseError(.invalidQuery, "Bad $options value for query: \(options)")
            }
            guard let pattern = operand.stringValue else { throw ParseError(.invalidJSON, "bad regex: " + JavaScriptString.of(operand)) }
            return .matchesRegex(pattern, options: members["$options"]?.stringValue ?? "")
        case "$text":
            return .matchesText(try TextSearch.parse(operand))
        case "$select", "$dontSelect":
            guard case .object(let select) = operand, Set(select.keys) == ["query", "key"],
                let key = select["key"]?.stringValue, let query = select["query"]
            else { throw ParseError(.invalidQuery, "improper usage of \(op)") }
            let subquery = try parseSubquery(query, depth: depth, op: op)
            return op == "$select" ? .matchesKeyInQuery(key: key, subquery) : .doesNotMatchKeyInQuery(key: key, subquery)
        case "$inQuery", "$notInQuery":
            let subquery = try parseSubquery(operand, depth: depth, op: op)
            return op == "$inQuery" ? .matchesQuery(subquery) : .doesNotMatchQuery(subquery)
        case "$nearSphere":
            let point = try geoPoint(operand, op)
            return .nearSphere(point, maxDistance: try maxDistance(members))
        case "$within":
            guard let box = operand["$box"]?.arrayValue, box.count == 2 else { throw ParseError(.invalidJSON, "malformatted $within arg") }
            let first = try geoPoint(box[0], "$box"), second = try geoPoint(box[1], "$box")
            // Any two opposite corners, as MongoDB and Postgres take them (the REST guide's example
            // gives the northern corner first).
            return .withinBox(
                southWest: GeoPoint(latitude: min(first.latitude, second.latitude), longitude: min(first.longitude, second.longitude)),
                northEast: GeoPoint(latitude: max(first.latitude, second.latitude), longitude: max(first.longitude, second.longitude)))
        case "$geoWithin":
            if let polygon = operand["$polygon"] {
                return .withinPolygon(try polygonPoints(polygon))
            }
            if let sphere = operand["$centerSphere"] {
                guard let parts = sphere.arrayValue, parts.count >= 2 else {
                    throw ParseError(.invalidJSON, "bad $geoWithin value; $centerSphere should be an array of Parse.GeoPoint and distance")
                }
                guard parts[0].arrayValue?.count == 2 || parts[0]["__type"]?.stringValue == "GeoPoint" else {
                    throw ParseError(.invalidJSON, "bad $geoWithin value; $centerSphere geo point invalid")
                }
                let center = try geoPoint(parts[0], "$centerSphere")
                guard let radius = parts[1].numberValue, radius >= 0 else {
                    throw ParseError(.invalidJSON, "bad $geoWithin value; $centerSphere distance invalid")
                }
                return .withinCenterSphere(center, radius: radius)
            }
            throw ParseError(.invalidJSON, "bad $geoWithin value")
        case "$geoIntersects":
            guard let point = operand["$point"], point["__type"]?.stringValue == "GeoPoint" else {
                throw ParseError(.invalidJSON, "bad $geoIntersect value; $point should be GeoPoint")
            }
            return .polygonContains(try geoPoint(point, "$geoIntersect"))
        default:
            if op.hasPrefix("$") { throw ParseError(.invalidJSON, "bad constraint: \(op)") }
            // A plain key mixed with operators compares the plain part for equality, as Parse does.
            return .equalTo(try constraintValue(.object(members.filter { !$0.key.hasPrefix("$") })))
        }
    }

    /// `{"className": "C", "where": {...}}` (for `$select`, the `where` may be left out).
    private static func parseSubquery(_ json: JSON, depth: Int, op: String) throws -> Subquery {
        guard depth < maximumSubqueryDepth else {
            throw ParseError(.invalidQuery, "Subqueries are nested deeper than \(maximumSubqueryDepth) levels.")
        }
        guard let className = json["className"]?.stringValue, Names.isValidClassName(className),
            op.hasSuffix("elect") || json["where"] != nil
        else { throw ParseError(.invalidQuery, "improper usage of \(op)") }
        let constraint = try json["where"].map { try parseClause($0, depth: depth + 1) } ?? .all
        // The JS SDK's query on a relation of an unfetched parent names the parent's class and the field.
        var redirectKey: String?
        if let value = json["redirectClassNameForKey"], value != .null {
            guard let key = value.stringValue else { throw ParseError(.invalidQuery, "redirectClassNameForKey must be a string") }
            redirectKey = key
        }
        return Subquery(className: className, constraint: constraint, redirectKey: redirectKey)
    }

    private static func geoPoint(_ json: JSON, _ op: String) throws -> GeoPoint {
        if let pair = json.arrayValue, pair.count == 2, let longitude = pair[0].numberValue, let latitude = pair[1].numberValue {
            return try checked(GeoPoint(latitude: latitude, longitude: longitude), op)  // [lng, lat], as Mongo.
        }
        guard json["__type"]?.stringValue == "GeoPoint", let latitude = json["latitude"]?.numberValue,
            let longitude = json["longitude"]?.numberValue
        else { throw ParseError(.invalidJSON, "bad \(op) value; expected a GeoPoint") }
        return try checked(GeoPoint(latitude: latitude, longitude: longitude), op)
    }

    private static func checked(_ point: GeoPoint, _ op: String) throws -> GeoPoint {
        guard (-90...90).contains(point.latitude), (-180...180).contains(point.longitude) else {
            throw ParseError(.invalidJSON, "bad \(op) value; GeoPoint out of bounds")
        }
        return point
    }

    /// GeoPoints, or a Polygon's `[lat, lng]` pairs; at least three, with Parse's messages.
    private static func polygonPoints(_ json: JSON) throws -> [GeoPoint] {
        if json["__type"]?.stringValue == "Polygon" {
            guard let pairs = json["coordinates"]?.arrayValue, pairs.count >= 3 else {
                throw ParseError(.invalidJSON, "bad $geoWithin value; Polygon.coordinates should contain at least 3 lon/lat pairs")
            }
            return try pairs.map { pair in
                guard let values = pair.arrayValue, values.count == 2, let lat = values[0].numberValue, let lng = values[1].numberValue
                else { throw ParseError(.invalidJSON, "bad $geoWithin value") }
                return try checked(GeoPoint(latitude: lat, longitude: lng), "$polygon")
            }
        }
        guard let points = json.arrayValue else {
            throw ParseError(.invalidJSON, "bad $geoWithin value; $polygon should be Polygon object or Array of Parse.GeoPoint's")
        }
        guard points.count >= 3 else {
            throw ParseError(.invalidJSON, "bad $geoWithin value; $polygon should contain at least 3 GeoPoints")
        }
        return try points.map { point in
            guard point.arrayValue?.count == 2 || point["__type"]?.stringValue == "GeoPoint" else {
                throw ParseError(.invalidJSON, "bad $geoWithin value")
            }
            return try geoPoint(point, "$polygon")
        }
    }

    /// `$maxDistance` (radians) or its `InRadians`/`InKilometers`/`InMiles` forms, as radians.
    private static func maxDistance(_ members: [String: JSON]) throws -> Double? {
        let earthRadiusKilometers = 6371.0, earthRadiusMiles = 3958.8
        for (name, divisor) in [("$maxDistance", 1.0), ("$maxDistanceInRadians", 1.0),
                                ("$maxDistanceInKilometers", earthRadiusKilometers), ("$maxDistanceInMiles", earthRadiusMiles)] {
            if let value = members[name] {
                guard let number = value.numberValue, number >= 0 else { throw ParseError(.invalidJSON, "bad \(name) value") }
                return number / divisor
            }
        }
        return nil
    }

    private static func constraintValue(_ value: JSON) throws -> JSON {
        try WireValue.validate(value).1
    }

    /// The operand of `$lt`, `$lte`, `$gt`, `$gte`, `$eq` or `$ne`. A `{"$relativeTime": …}` stays as it is: the
    /// compiler checks it against the field's type and resolves it against the clock, as Parse does.
    private static func comparedValue(_ value: JSON) throws -> JSON {
        if let relative = RelativeTime.operand(value) { return ["$relativeTime": relative] }
        return try constraintValue(value)
    }

    /// `{"$regex": "^\\Q…\\E"}`, a regex as containsAllStartingWith writes it.
    private static func isStartsWithRegex(_ element: JSON) -> Bool {
        guard let regex = element["$regex"] else { return false }
        let pattern = JavaScriptString.of(regex)
        return pattern.hasPrefix("^\\Q") && pattern.hasSuffix("\\E")
    }

    /// A field name, a dot path into it, or one of the built-in keys. After the field name, a path's parts
    /// may be array indexes or any word of letters, digits and `_` (Parse's key check is
    /// `^[a-zA-Z][a-zA-Z0-9_.]*$`).
    public static func isQueryableKey(_ key: String) -> Bool {
        if key == "objectId" || key == "createdAt" || key == "updatedAt" { return true }
        let parts = key.split(separator: ".", omittingEmptySubsequences: false)
        return Names.isValidIdentifier(String(parts[0])) && parts.dropFirst().allSatisfy(isPathPart)
    }

    private static func isPathPart(_ part: Substring) -> Bool {
        !part.isEmpty && part.utf8.count <= 128
            && part.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 65 && $0 <= 90) || ($0 >= 97 && $0 <= 122) || $0 == 95 }
    }
}
