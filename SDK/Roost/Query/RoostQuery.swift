import Foundation
import RoostCore

/// A query on one class, built from the server's own constraint types (`QueryConstraint`).
///
/// ```swift
/// let open = try await client.query("Todo")
///     .whereKey("done", equalTo: false)
///     .order(byDescending: "createdAt")
///     .limit(20)
///     .find()
/// ```
public struct RoostQuery: Sendable {
    public let className: String
    let client: RoostClient
    public var constraints: [QueryConstraint] = []
    var order: [String] = []
    var limitValue: Int?
    var skipValue = 0
    var selectedKeys: [String]?
    var includedKeys: [String] = []
    var policy: CachePolicy = .ignoreCache
    var maxAge: TimeInterval?
    var isLocal = false
    var localPinName: String?

    public init(className: String, client: RoostClient? = nil) {
        self.className = className
        self.client = client ?? RoostClient.shared
    }

    /// The `where` JSON this query sends.
    public var whereJSON: JSON { QueryConstraint.and(constraints).whereJSON }

    // MARK: Constraints

    public func whereKey(_ key: String, _ condition: FieldCondition) -> RoostQuery {
        adding(.field(key, condition))
    }
    public func whereKey(_ key: String, equalTo value: some RoostValueConvertible) -> RoostQuery { whereKey(key, .equalTo(value.roostJSON)) }
    public func whereKey(_ key: String, equalTo object: RoostObject) -> RoostQuery {
        whereKey(key, .equalTo(WireValue.pointer(object.className, object.objectId ?? "")))
    }
    public func whereKey(_ key: String, notEqualTo value: some RoostValueConvertible) -> RoostQuery { whereKey(key, .notEqualTo(value.roostJSON)) }
    public func whereKey(_ key: String, lessThan value: some RoostValueConvertible) -> RoostQuery { whereKey(key, .lessThan(value.roostJSON)) }
    public func whereKey(_ key: String, lessThanOrEqualTo value: some RoostValueConvertible) -> RoostQuery {
        whereKey(key, .lessThanOrEqualTo(value.roostJSON))
    }
    public func whereKey(_ key: String, greaterThan value: some RoostValueConvertible) -> RoostQuery { whereKey(key, .greaterThan(value.roostJSON)) }
    public func whereKey(_ key: String, greaterThanOrEqualTo value: some RoostValueConvertible) -> RoostQuery {
        whereKey(key, .greaterThanOrEqualTo(value.roostJSON))
    }
    public func whereKey(_ key: String, containedIn values: [some RoostValueConvertible]) -> RoostQuery {
        whereKey(key, .containedIn(values.map(\.roostJSON)))
    }
    public func whereKey(_ key: String, notContainedIn values: [some RoostValueConvertible]) -> RoostQuery {
        whereKey(key, .notContainedIn(values.map(\.roostJSON)))
    }
    public func whereKey(_ key: String, containsAllObjectsIn values: [some RoostValueConvertible]) -> RoostQuery {
        whereKey(key, .containsAll(values.map(\.roostJSON)))
    }
    public func whereKey(_ key: String, containedBy values: [some RoostValueConvertible]) -> RoostQuery {
        whereKey(key, .containedBy(values.map(\.roostJSON)))
    }
    public func whereKeyExists(_ key: String) -> RoostQuery { whereKey(key, .exists(true)) }
    public func whereKeyDoesNotExist(_ key: String) -> RoostQuery { whereKey(key, .exists(false)) }
    public func whereKey(_ key: String, matchesRegex pattern: String, options: String = "") -> RoostQuery {
        whereKey(key, .matchesRegex(pattern, options: options))
    }
    /// Full text search: strings with any of the words of `text` (`"a phrase"` must appear whole,
    /// `-word` must not appear), folded as a text index folds them (`$text`).
    public func whereKey(_ key: String, matchesText text: String, language: String? = nil, caseSensitive: Bool = false,
                         diacriticSensitive: Bool = false) -> RoostQuery {
        whereKey(key, .matchesText(TextSearch(term: text, language: language, caseSensitive: caseSensitive,
                                              diacriticSensitive: diacriticSensitive)))
    }
    /// Best `matchesText` matches first (`order=$score`).
    public func orderByTextScore() -> RoostQuery { with { $0.order.append("$score") } }
    /// Strings starting with `prefix` (sent as `^\Q…\E`, as the Parse SDKs do).
    public func whereKey(_ key: String, hasPrefix prefix: String) -> RoostQuery {
        whereKey(key, .matchesRegex("^" + RoostQuery.quoted(prefix), options: ""))
    }
    public func whereKey(_ key: String, hasSuffix suffix: String) -> RoostQuery {
        whereKey(key, .matchesRegex(RoostQuery.quoted(suffix) + "$", options: ""))
    }
    /// Pointers to objects matching `query`.
    public func whereKey(_ key: String, matchesQuery query: RoostQuery) -> RoostQuery { whereKey(key, .matchesQuery(query.subquery)) }
    public func whereKey(_ key: String, doesNotMatchQuery query: RoostQuery) -> RoostQuery { whereKey(key, .doesNotMatchQuery(query.subquery)) }
    /// Values equal to `otherKey` of some object matching `query`.
    public func whereKey(_ key: String, matchesKey otherKey: String, in query: RoostQuery) -> RoostQuery {
        whereKey(key, .matchesKeyInQuery(key: otherKey, query.subquery))
    }
    public func whereKey(_ key: String, doesNotMatchKey otherKey: String, in query: RoostQuery) -> RoostQuery {
        whereKey(key, .doesNotMatchKeyInQuery(key: otherKey, query.subquery))
    }
    /// Objects in the relation `key` of `object`.
    public func whereRelated(to object: RoostObject, key: String) -> RoostQuery {
        adding(.relatedTo(className: object.className, objectId: object.objectId ?? "", key: key))
    }
    /// Nearest first; `maxDistance` in radians.
    public func whereKey(_ key: String, nearGeoPoint point: GeoPoint, maxDistance: Double? = nil) -> RoostQuery {
        whereKey(key, .nearSphere(point, maxDistance: maxDistance))
    }
    public func whereKey(_ key: String, nearGeoPoint point: GeoPoint, withinKilometers distance: Double) -> RoostQuery {
        whereKey(key, nearGeoPoint: point, maxDistance: distance / 6371.0)
    }
    public func whereKey(_ key: String, withinGeoBoxFromSouthwest southWest: GeoPoint, toNortheast northEast: GeoPoint) -> RoostQuery {
        whereKey(key, .withinBox(southWest: southWest, northEast: northEast))
    }
    public func whereKey(_ key: String, withinPolygon points: [GeoPoint]) -> RoostQuery { whereKey(key, .withinPolygon(points)) }

    /// Objects matching any of the queries (all on this class).
    public static func or(_ queries: [RoostQuery]) -> RoostQuery {
        var result = RoostQuery(className: queries[0].className, client: queries[0].client)
        result.constraints = [.or(queries.map { .and($0.constraints) })]
        return result
    }

    // MARK: Options

    public func order(byAscending key: String) -> RoostQuery { with { $0.order.append(key) } }
    public func order(byDescending key: String) -> RoostQuery { with { $0.order.append("-" + key) } }
    public func limit(_ count: Int) -> RoostQuery { with { $0.limitValue = count } }
    public func skip(_ count: Int) -> RoostQuery { with { $0.skipValue = count } }
    /// Only these fields (objectId, createdAt, updatedAt and ACL always come).
    public func select(_ keys: [String]) -> RoostQuery { with { $0.selectedKeys = keys } }
    /// Replaces pointers at these paths by the objects they point to.
    public func include(_ keys: String...) -> RoostQuery { with { $0.includedKeys += keys } }

    // MARK: Running

    /// The matching objects: from the local store (`fromLocalDatastore()`), or as the cache policy says
    /// (for `cacheThenNetwork`, the network answer; use `results()` to get both).
    public func find() async throws -> [RoostObject] {
        if isLocal { return try findLocally() }
        var last: QueryResults?
        for try await answer in results() { last = answer }
        try Task.checkCancellation()  // A cancelled stream just ends: that is not an empty result.
        return last?.objects ?? []
    }

    public func findBlocking() throws -> [RoostObject] { try runBlocking { try await self.find() } }

    public func findInBackground(_ completion: @escaping @Sendable (Result<[RoostObject], Error>) -> Void) {
        runInBackground({ try await self.find() }, completion: completion)
    }

    public func first() async throws -> RoostObject? { try await limit(1).find().first }

    /// The number of matching objects (no objects are transferred).
    public func count() async throws -> Int {
        if isLocal { return try findLocally().count }
        var query = self
        query.limitValue = 0
        let answer = try await client.request("GET", "classes/\(className)", query: query.parameters(count: true))
        return Int(answer["count"]?.numberValue ?? 0)
    }

    /// The object with this id. - Throws: `RoostError.server` 101 when missing or not readable.
    public func get(_ objectId: String) async throws -> RoostObject {
        var parameters: [String: String] = [:]
        if !includedKeys.isEmpty { parameters["include"] = includedKeys.joined(separator: ",") }
        if let selectedKeys { parameters["keys"] = selectedKeys.joined(separator: ",") }
        let path = (className == "_User" ? "users" : "classes/\(className)") + "/\(objectId)"
        let answer = try await client.request("GET", path, query: parameters)
        guard WriteReply.isObject(answer, withId: objectId) else { throw WriteReply.unusable }
        return makeObject(answer)
    }

    // MARK: Internals

    var subquery: Subquery { Subquery(className: className, constraint: .and(constraints)) }

    func parameters(count: Bool) -> [String: String] {
        var result: [String: String] = [:]
        if !constraints.isEmpty { result["where"] = whereJSON.jsonText }
        if !order.isEmpty { result["order"] = order.joined(separator: ",") }
        if let limitValue { result["limit"] = String(limitValue) }
        if skipValue > 0 { result["skip"] = String(skipValue) }
        if let selectedKeys { result["keys"] = selectedKeys.joined(separator: ",") }
        if !includedKeys.isEmpty { result["include"] = includedKeys.joined(separator: ",") }
        if count { result["count"] = "1" }
        return result
    }

    func makeObject(_ json: JSON) -> RoostObject {
        let object = client.object(className)
        object.applyServerObject(json)
        return object
    }

    private func adding(_ constraint: QueryConstraint) -> RoostQuery { with { $0.constraints.append(constraint) } }

    func with(_ change: (inout RoostQuery) -> Void) -> RoostQuery {
        var copy = self
        change(&copy)
        return copy
    }

    /// `\Q…\E` quoting, with any `\E` inside split out, as the Parse SDKs quote.
    static func quoted(_ text: String) -> String {
        "\\Q" + text.replacingOccurrences(of: "\\E", with: "\\E\\\\E\\Q") + "\\E"
    }
}

extension RoostClient {
    /// A query on `className`.
    public func query(_ className: String) -> RoostQuery { RoostQuery(className: className, client: self) }
}
