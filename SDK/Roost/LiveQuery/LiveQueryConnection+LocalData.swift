import Foundation
import RoostCore

/// Live events kept locally, on the LiveQuery thread before each is handed out: the query cache and pinned objects
/// take every change once (a change two subscriptions see arrives twice), a subscription's pin group follows its
/// query, and `dataDidChangeNotification` is posted once per change.
extension LiveQueryConnection {
    func applyLocally(_ kind: LiveQueryEvent.Kind, _ object: JSON, seq: Int?, subscription: LiveSubscription) {
        guard let client, let objectId = object["objectId"]?.stringValue else { return }
        let className = subscription.query.className
        // One change: one `seq` (from a server without seqs, one updatedAt, or the delete).
        let change = seq.map(String.init) ?? ((object["updatedAt"]?.stringValue ?? "") + (kind == .deleted ? "|deleted" : ""))
        let isNew = condition.withLock { appliedChanges.insert("\(change)|\(className)|\(objectId)") }
        if isNew {
            try? client.localStore.applyLiveChange(kind, className: className, objectId: objectId, object: object,
                                                   isPartial: subscription.query.selectedKeys != nil)
        }
        try? client.localStore.applyLiveMembership(kind, objectId: objectId, object: object, cacheKey: subscription.query.cacheKey)
        if let pinName = subscription.pinName {
            try? client.localStore.keepPinned(kind, className: className, objectId: objectId, object: object, name: pinName)
        }
        if isNew {
            NotificationCenter.default.post(name: RoostClient.dataDidChangeNotification, object: client,
                                            userInfo: ["className": className, "objectId": objectId])
        }
    }

    func applyRefresh(_ results: [JSON], subscription: LiveSubscription) {
        guard let client else { return }
        try? client.localStore.applyLiveRefresh(results, className: subscription.query.className,
                                                isPartial: subscription.query.selectedKeys != nil,
                                                subscriptionCacheKey: subscription.query.cacheKey)
        if let pinName = subscription.pinName {
            try? client.localStore.keepPinned(results, className: subscription.query.className, name: pinName)
        }
        NotificationCenter.default.post(name: RoostClient.dataDidChangeNotification, object: client,
                                        userInfo: ["className": subscription.query.className])
    }
}

/// A set remembering only its last `capacity` insertions.
struct RecentSet {
    let capacity: Int
    private var members: Set<String> = []
    private var order: [String] = []

    init(capacity: Int) { self.capacity = capacity }

    /// Inserts `member`; returns false when it was there already.
    mutating func insert(_ member: String) -> Bool {
        guard members.insert(member).inserted else { return false }
        order.append(member)
        if order.count > capacity { members.remove(order.removeFirst()) }
        return true
    }
}
