import Synchronization

/// Bounds the request-body bytes held in memory at once, in all and per client address (`ConnectionLimits`); the
/// bodies written to disk as they arrive (`BodySpool`) count too, so that the disk they take is bounded alike.
///
/// Bodies are buffered whole before any handler or authentication runs. Without a bound, one address's 1,024
/// connections, each sending a 20 MB body just fast enough for the request deadline, made the server hold 20 GB.
/// Now a request reserves its declared `Content-Length` when its headers arrive, before a byte of its body is
/// read: the declared length is what its buffer is made to hold, and a refusal that came after the body would
/// reach a client still sending it as a reset connection. A body without a length (chunked) reserves as its
/// buffer grows. `HTTPServer` answers a request that finds no room with a 503 that clients retry.
///
/// A reservation is given back once, when libmicrohttpd completes its request (answered, refused, timed out or
/// its connection closed); `release` empties it, so a second call gives nothing back twice.
///
/// Cost: a request without a body touches nothing. A body of up to `smallBodyBytes` (almost every Parse request)
/// counts in the total only: one atomic add when reserved, one subtract when released, no lock. Larger ones also
/// count against their address, under a lock. One address's small bodies are bounded by its connections instead
/// (1,024 × 16 KB = 16 MB by default; less than the connections' own memory pools may hold), and the total holds
/// for every body.
final class BodyBudget: Sendable {
    /// Bodies up to this size count in the total only (see above).
    static let smallBodyBytes = 16 * 1024

    /// What one request holds. Kept in the request's state and touched only on its connection's thread.
    struct Reservation {
        /// Counted in the total: what the request's body buffer may hold.
        fileprivate(set) var bytes = 0
        /// The part of `bytes` also counted against `address` (0 while the body is small).
        fileprivate var addressBytes = 0
        fileprivate var address: ConnectionGate.Address?
    }

    /// Bytes held in all at most.
    let limit: Int
    /// Bytes held for one client address at most; 0 for no limit.
    let perAddressLimit: Int
    private let total = Atomic<Int>(0)
    private let perAddress = Mutex<[ConnectionGate.Address: Int]>([:])

    init(limits: ConnectionLimits) {
        limit = limits.maxBufferedBodyBytes
        perAddressLimit = limits.maxBufferedBodyBytesPerAddress
    }

    /// Grows `reservation` to `bytes` for a client at `address` (nil: not counted per address); false, with
    /// `reservation` unchanged, when the total or the address has no room for the difference.
    func reserve(_ reservation: inout Reservation, upTo bytes: Int, from address: ConnectionGate.Address?) -> Bool {
        let more = bytes - reservation.bytes
        guard more > 0 else { return true }
        // Added, then taken back when over: another request may be refused while these bytes are briefly counted
        // (only ever near the limit), but the limit is never passed.
        if total.add(more, ordering: .relaxed).newValue > limit {
            total.subtract(more, ordering: .relaxed)
            return false
        }
        if bytes > Self.smallBodyBytes, perAddressLimit > 0, let address {
            let addressMore = bytes - reservation.addressBytes
            let fits = perAddress.withLock { held in
                let current = held[address, default: 0]
                guard current + addressMore <= perAddressLimit else { return false }
                held[address] = current + addressMore
                return true
            }
            guard fits else {
                total.subtract(more, ordering: .relaxed)
                return false
            }
            reservation.addressBytes = bytes
            reservation.address = address
        }
        reservation.bytes = bytes
        return true
    }

    /// Gives back all that `reservation` holds and empties it.
    func release(_ reservation: inout Reservation) {
        if reservation.bytes > 0 { total.subtract(reservation.bytes, ordering: .relaxed) }
        if reservation.addressBytes > 0, let address = reservation.address {
            perAddress.withLock { held in
                let left = held[address, default: 0] - reservation.addressBytes
                held[address] = left > 0 ? left : nil
            }
        }
        reservation = Reservation()
    }

    /// Makes room in `body` for `needed` bytes (at most `maximum`), reserving the buffer's new capacity: double
    /// the old one, so a chunked body is copied a logarithmic number of times, or just what is needed when the
    /// budget has no room for double. False when it has no room for that either.
    func makeRoom(in body: inout [UInt8], for needed: Int, maximum: Int, reservation: inout Reservation,
                  from address: ConnectionGate.Address?) -> Bool {
        guard needed > reservation.bytes else { return true }
        guard grow(&reservation, toHold: needed, maximum: maximum, from: address) else { return false }
        body.reserveCapacity(reservation.bytes)
        return true
    }

    /// Grows `reservation` to hold `needed` bytes (at most `maximum`) as `makeRoom` does, for a body kept
    /// elsewhere than in a buffer (`SpooledBody`). False when the budget has no room.
    func grow(_ reservation: inout Reservation, toHold needed: Int, maximum: Int, from address: ConnectionGate.Address?) -> Bool {
        guard needed > reservation.bytes else { return true }
        let doubled = min(max(needed, 2 * reservation.bytes), maximum)
        return reserve(&reservation, upTo: doubled, from: address) || reserve(&reservation, upTo: needed, from: address)
    }
}
