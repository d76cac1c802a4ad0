import RoostCore

/// The values a dot path reaches in a document as MongoDB's dot notation reaches them: through arrays of objects
/// on the way (`comments.author` reads each comment's author), with numeric parts also indexing arrays, and an
/// array where the path ends counting as itself and as each of its elements.
enum PathValues {
    static func values(in document: JSON, path: [String]) -> [JSON] {
        var reached: [JSON] = []
        collect(document, path[...], into: &reached)
        return reached.flatMap { value -> [JSON] in
            if case .array(let elements) = value { return elements + [value] }
            return [value]
        }
    }

    private static func collect(_ value: JSON, _ path: ArraySlice<String>, into reached: inout [JSON]) {
        guard let part = path.first else {
            reached.append(value)
            return
        }
        switch value {
        case .object(let members):
            if let member = members[part] { collect(member, path.dropFirst(), into: &reached) }
        case .array(let elements):
            if part.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let index = Int(part), index < elements.count {
                collect(elements[index], path.dropFirst(), into: &reached)
            }
            // The part applies to each object in the array (MongoDB does not descend into nested arrays).
            for element in elements {
                if case .object = element { collect(element, path, into: &reached) }
            }
        default:
            return
        }
    }
}
