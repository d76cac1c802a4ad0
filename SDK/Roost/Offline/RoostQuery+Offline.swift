import Foundation
import RoostCore

/// Where a query reads from, as in the Parse SDKs. Cached results live in the client's local store,
/// keyed by the query and the current user.
public enum CachePolicy: Sendable {
    /// The network only; the cache is neither read nor written.
    case ignoreCache
    /// The cache only (error 120 when there is none, or it is older than `maxCacheAge`).
    case cacheOnly
    /// The network only; its results are cached.
    case networkOnly
    /// The cache when it has fresh results, else the network.
    case cacheElseNetwork
    /// The network; when it cannot be reached, the cache (with the network error attached).
    case networkElseCache
    /// Answers twice: the cache at once (when it has results), then the network.
    case cacheThenNetwork
}

/// One answer of a query under a cache policy.
public struct QueryResults: Sendable {
    public enum Source: Sendable { case cache, network }

    public let objects: [RoostObject]
    public let source: Source
    /// When these results were fetched from the server.
    public let lastUpdated: Date?
    /// For a network answer after a cached one: whether the results differ from what was cached.
    public let changed: Bool?
    /// The network error, when cached results stand in for a failed refresh.
    public let networkError: RoostError?
}

extension RoostQuery {
    public func cachePolicy(_ policy: CachePolicy) -> RoostQuery { with { $0.policy = policy } }

    /// Cached results older than this are not used (by `cacheOnly`, `cacheElseNetwork`, `cacheThenNetwork`).
    public func maxCacheAge(_ seconds: TimeInterval) -> RoostQuery { with { $0.maxAge = seconds } }

    /// Queries the objects pinned in the local store (under `pinName`, or any) instead of the server.
    public func fromLocalDatastore(pinName: String? = nil) -> RoostQuery {
        with {
            $0.isLocal = true
            $0.localPinName = pinName
        }
    }

    /// When this query's cached results were fetched, if it has any.
    public var lastUpdated: Date? { (try? client.localStore.cached(cacheKey))??.updatedAt }

    /// Forgets this query's cached results.
    public func clearCachedResult() throws { try client.localStore.clearCache(cacheKey) }

    /// The answers of this query under its cache policy: one, or two for `cacheThenNetwork`
    /// (the second says whether anything changed).
    public func results() -> AsyncThrowingStream<QueryResults, Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    for try await result in self.answers() { continuation.yield(result) }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    var cacheKey: String {
        let user = client.currentUserKey ?? ""
        return className + "|" + JSON.object(parameters(count: false).mapValues(JSON.string)).jsonText + "|" + user
    }

    func findLocally() throws -> [RoostObject] {
        let matcher = LocalMatcher()
        var objects = try client.localStore.pinned(className: className, name: localPinName)
            .map { RoostObject.fromPin($0, client: client) }
            .filter { try matcher.matches(.and(constraints), $0) }
        for key in order.reversed() {
            let descending = key.hasPrefix("-")
            let name = descending ? String(key.dropFirst()) : key
            objects.sort { a, b in
                let left = LocalSortKey(a, name), right = LocalSortKey(b, name)
                return descending ? right < left : left < right
            }
        }
        return Array(objects.dropFirst(skipValue).prefix(limitValue ?? 100))
    }

    private func answers() -> AsyncThrowingStream<QueryResults, Error> {
        AsyncThrowingStream { continuation in
            Task {
                do {
                    let store = client.localStore
                    let cached = try store.cached(cacheKey)
                    let fresh = cached.flatMap { entry in maxAge.map { Date().timeIntervalSince(entry.updatedAt) <= $0 } ?? true } == true
                    func fromCache(_ error: RoostError? = nil) -> QueryResults {
                        QueryResults(objects: cached!.results.map(makeObject), source: .cache, lastUpdated: cached!.updatedAt,
                                     changed: nil, networkError: error)
                    }
                    func fromNetwork() async throws -> QueryResults {
                        let answer = try await client.request("GET", "classes/\(className)", query: parameters(count: false))
                        let results = answer["results"]?.arrayValue ?? []
                        if policy != .ignoreCache { try store.cache(results, for: cacheKey) }
                        let changed = cached.map { $0.results != results }
                        return QueryResults(objects: results.map(makeObject), source: .network, lastUpdated: Date(),
                                            changed: changed, networkError: nil)
                    }
                    switch policy {
                    case .ignoreCache, .networkOnly:
                        continuation.yield(try await fromNetwork())
                    case .cacheOnly:
                        guard fresh else { throw RoostError.server(code: ParseErrorCode(rawValue: 120), message: "Results not found in the cache.") }
                        continuation.yield(fromCache())
                    case .cacheElseNetwork:
                        continuation.yield(fresh ? fromCache() : try await fromNetwork())
                    case .networkElseCache, .cacheThenNetwork:
                        if policy == .cacheThenNetwork, fresh { continuation.yield(fromCache()) }
                        do {
                            continuation.yield(try await fromNetwork())
                        } catch let error as RoostError where error.isTransport && cached != nil {
                            continuation.yield(fromCache(error))  // Shown with the error, not as if nothing were there.
                        }
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
        }
    }
}

/// Sorting pinned objects: numbers, then strings, then dates; missing values first.
private struct LocalSortKey: Comparable {
    let value: JSON?

    init(_ object: RoostObject, _ key: String) {
        switch key {
        case "createdAt": value = object.createdAt?.roostJSON["iso"]
        case "updatedAt": value = object.updatedAt?.roostJSON["iso"]
        case "objectId": value = object.objectId.map(JSON.string)
        default: value = object.value(forKey: key).map { $0["iso"] ?? $0 }
        }
    }

    static func < (lhs: LocalSortKey, rhs: LocalSortKey) -> Bool {
        switch (lhs.value, rhs.value) {
        case (nil, nil): return false
        case (nil, _): return true
        case (_, nil): return false
        case (.number(let a)?, .number(let b)?): return a < b
        case (.string(let a)?, .string(let b)?): return a < b
        case (.bool(let a)?, .bool(let b)?): return !a && b
        default: return false
        }
    }

    static func == (lhs: LocalSortKey, rhs: LocalSortKey) -> Bool { lhs.value == rhs.value }
}
