/// A `where` clause as a typed tree, shared by the server (which compiles it to SQL) and the SDK
/// (which builds it).
public indirect enum QueryConstraint: Equatable, Sendable {
    case and([QueryConstraint])
    case or([QueryConstraint])
    case nor([QueryConstraint])
    /// A condition on one key: a field name, a dot path into an Object field, or
    /// `objectId`/`createdAt`/`updatedAt`.
    case field(String, FieldCondition)
    /// `$relatedTo`: the objects in relation `key` of the object `objectId` of `className`.
    case relatedTo(className: String, objectId: String, key: String)

    /// Matches everything.
    public static let all = QueryConstraint.and([])

    /// The number of nodes in the tree, subqueries included (a measure of the SQL expression's size).
    public var complexity: Int {
        switch self {
        case .and(let parts), .or(let parts), .nor(let parts): return parts.reduce(1) { $0 + $1.complexity }
        case .field(_, let condition): return 1 + (condition.subquery?.constraint.complexity ?? 0)
        case .relatedTo: return 1
        }
    }

    /// The most nodes a `where` may have; SQLite refuses expressions much deeper than this.
    public static let maximumComplexity = 500
    /// The most values of one `$in`, `$nin`, `$all` or `$containedBy`: each becomes a value in memory and
    /// in the SQL's lists (10 million took ~2 GB).
    public static let maximumListValues = 100_000
    /// The deepest nesting of `$inQuery`/`$select` and their negations.
    public static let maximumSubqueryDepth = 8
}

/// A query on another class, inside `$inQuery`, `$notInQuery`, `$select` and `$dontSelect`.
public struct Subquery: Equatable, Sendable {
    public var className: String
    public var constraint: QueryConstraint
    /// `redirectClassNameForKey`: the subquery runs on the target class of this relation field of `className`.
    public var redirectKey: String?

    public init(className: String, constraint: QueryConstraint, redirectKey: String? = nil) {
        self.className = className
        self.constraint = constraint
        self.redirectKey = redirectKey
    }
}

/// A point on the sphere, in degrees.
public struct GeoPoint: Equatable, Sendable {
    public var latitude: Double
    public var longitude: Double

    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }
}

/// A condition on one field's value.
public enum FieldCondition: Equatable, Sendable {
    case equalTo(JSON)
    case notEqualTo(JSON)
    case lessThan(JSON)
    case lessThanOrEqualTo(JSON)
    case greaterThan(JSON)
    case greaterThanOrEqualTo(JSON)
    case containedIn([JSON])
    case notContainedIn([JSON])
    case exists(Bool)
    /// An array field holding every one of the values.
    case containsAll([JSON])
    /// An array field whose elements are all among the values.
    case containedBy([JSON])
    /// An array field with, for each regex, an element matching it, and every plain value (`$all` with `$regex`es).
    indirect case containsAllMatching([FieldCondition])
    /// A string matching a regular expression; options from `i`, `m`, `x`, `s`.
    case matchesRegex(String, options: String)
    /// The field equals `key` of some result of the subquery (`$select`), or of none (`$dontSelect`).
    case matchesKeyInQuery(key: String, Subquery)
    case doesNotMatchKeyInQuery(key: String, Subquery)
    /// A pointer to some result of the subquery (`$inQuery`), or to none (`$notInQuery`).
    case matchesQuery(Subquery)
    case doesNotMatchQuery(Subquery)
    /// Within `maxDistance` radians of the point (unbounded when nil); results nearest first.
    case nearSphere(GeoPoint, maxDistance: Double?)
    /// Inside the box from the south-west to the north-east corner.
    case withinBox(southWest: GeoPoint, northEast: GeoPoint)
    /// Inside the polygon.
    case withinPolygon([GeoPoint])
    /// A Polygon field that holds the point, its edges included (`$geoIntersects` with `$point`).
    case polygonContains(GeoPoint)
    /// Within `radius` radians of the center.
    case withinCenterSphere(GeoPoint, radius: Double)
    /// A string whose words match a full text search (`$text`).
    case matchesText(TextSearch)

    var subquery: Subquery? {
        switch self {
        case .matchesKeyInQuery(_, let query), .doesNotMatchKeyInQuery(_, let query), .matchesQuery(let query),
            .doesNotMatchQuery(let query):
            query
        default: nil
        }
    }
}
