import RoostCore

/// The values a dot path reaches in a document as MongoDB's dot notation reaches them: through arrays of objects
/// on the way (`comments.author` reads each comment's author), with numeric parts also indexing arrays, and an
/// array where the path ends counting as itself and as each of its elements.
///
/// A numeric part on an array both indexes it and applies to each object in it, so a hostile document and path
/// (objects keyed "0" nested in arrays, 40 levels deep) branch exponentially: the walk stops after `maximumSteps`
/// nodes and keeps what it reached (a SQL function cannot be interrupted by the query's time budget).
enum PathValues {
    static let maximumSteps = 10_000

    static func values(in document: JSON, path: [String]) -> [JSON] {
        var reached: [JSON] = []
        var steps = 0
        collect(document, path[...], into: &reached, steps: &steps)
        return reached.flatMap { value -> [JSON] in
            if case .array(let elements) = value { return elements + [value] }
            return [value]
        }
    }

    private static func collect(_ value: JSON, _ path: ArraySlice<String>, into reached: inout [JSON], steps: inout Int) {
        steps += 1
        guard steps <= maximumSteps else { return }
        guard let part = path.first else {
            reached.append(value)
            return
        }
        switch value {
        case .object(let members):
            if let member = members[part] { collect(member, path.dropFirst(), into: &reached, steps: &steps) }
        case .array(let elements):
            if part.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let index = Int(part), index < elements.count {
                collect(elements[index], path.dropFirst(), into: &reached, steps: &steps)
            }
            // The part applies to each object in the array (MongoDB does not descend into nested arrays).
            for element in elements {
                if case .object = element { collect(element, path, into: &reached, steps: &steps) }
            }
        default:
            return
        }
    }
}
