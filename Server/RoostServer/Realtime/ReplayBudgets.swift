/// How many logged changes each client address may have replayed, refilled with time (a token bucket per
/// address): one address's resumes, however many sockets it opens, cannot keep the LiveQuery worker from
/// other clients. Past its budget a resume answers `resumed: false` (the client re-queries) at no cost.
/// Pure: the caller passes the time; owned by one thread. `Address` is a client address as counted.
struct ReplayBudgets<Address: Hashable> {
    /// Changes an address may have replayed at once, and per second after that.
    let capacity: Double
    let perSecond: Double
    private var buckets: [Address: (changes: Double, at: UInt64)] = [:]

    init(capacity: Int, perSecond: Int) {
        self.capacity = Double(capacity)
        self.perSecond = Double(perSecond)
    }

    /// Whether `address` has budget left at `milliseconds` (monotonic).
    mutating func allows(_ address: Address, at milliseconds: UInt64) -> Bool {
        refill(address, at: milliseconds) > 0
    }

    /// Charges `changes` replayed (read from the log) to `address`; the budget may go below zero.
    mutating func charge(_ changes: Int, to address: Address, at milliseconds: UInt64) {
        buckets[address] = (refill(address, at: milliseconds) - Double(changes), milliseconds)
        if buckets.count > 10_000 {  // Addresses back at full budget need no entry.
            buckets = buckets.filter { _, bucket in
                bucket.changes + Double(milliseconds - min(bucket.at, milliseconds)) / 1000 * perSecond < capacity
            }
        }
    }

    private func refill(_ address: Address, at milliseconds: UInt64) -> Double {
        guard let bucket = buckets[address] else { return capacity }
        let elapsed = Double(milliseconds - min(bucket.at, milliseconds)) / 1000
        return min(capacity, bucket.changes + elapsed * perSecond)
    }
}
