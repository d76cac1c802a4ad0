import RoostCore

/// `include`: replaces pointers along the given paths by the objects they point to
/// (`{"__type": "Object", "className": …, …fields}`), fetched with the caller's ACL, one query per
/// class and level. A pointer to a missing or unreadable object is removed, as Parse does: the key
/// disappears, or the element leaves its array.
struct IncludeResolver {
    let context: RequestContext
    let db: any SQLQuerying

    /// Include paths as a tree: `["post", "post.author"]` → `post { author {} }`.
    struct PathTree {
        var children: [String: PathTree] = [:]

        init(_ paths: [[String]] = []) {
            for path in paths { insert(path[...]) }
        }

        mutating func insert(_ path: ArraySlice<String>) {
            guard let first = path.first else { return }
            children[first, default: PathTree()].insert(path.dropFirst())
        }
    }

    static let maximumDepth = 10

    func resolve(_ objects: [JSON], schema: ClassSchema, paths: [[String]]) throws -> [JSON] {
        var tree = PathTree(paths.filter { $0.count <= IncludeResolver.maximumDepth })
        if let all = tree.children.removeValue(forKey: "*") {  // `*`: every pointer field of this class.
            for (field, type) in schema.fields { if case .pointer = type { tree.children[field, default: all] = all } }
        }
        return try resolve(objects, tree: tree)
    }

    private func resolve(_ objects: [JSON], tree: PathTree) throws -> [JSON] {
        var objects = objects
        for (key, subtree) in tree.children {
            var wanted: [String: Set<String>] = [:]
            for object in objects {
                for pointer in pointers(in: object[key]) { wanted[pointer.className, default: []].insert(pointer.objectId) }
            }
            var found: [String: JSON] = [:]  // "Class/id" → included object
            for (className, ids) in wanted {
                for (id, object) in try fetch(className, Array(ids), subtree: subtree) { found[className + "/" + id] = object }
            }
            objects = objects.map { replace(key, in: $0, with: found) }
        }
        return objects
    }

    private func fetch(_ className: String, _ ids: [String], subtree: PathTree) throws -> [(String, JSON)] {
        guard let schema = try SchemaStore.load(className, in: db) else { return [] }
        let rows = try ObjectStore.fetchMany(ids, from: schema, readableBy: context.aclSubjects, in: db)
        var objects: [JSON] = try rows.map { row in
            let object = try row.decoded()
            var json = className == UserStore.className
                ? UserStore.wireJSON(object, viewerId: context.user?.id, isMaster: context.isMaster)
                : object.wireJSON()
            if case .object(var members) = json {
                members["__type"] = "Object"
                members["className"] = .string(className)
                json = .object(members)
            }
            return json
        }
        objects = try resolve(objects, tree: subtree)
        return objects.compactMap { object in object["objectId"]?.stringValue.map { ($0, object) } }
    }

    private func pointers(in value: JSON?) -> [(className: String, objectId: String)] {
        switch value {
        case .object(let members)? where members["__type"] == "Pointer":
            guard let className = members["className"]?.stringValue, let id = members["objectId"]?.stringValue else { return [] }
            return [(className, id)]
        case .array(let elements)?: return elements.flatMap { pointers(in: $0) }
        default: return []
        }
    }

    private func replace(_ key: String, in object: JSON, with found: [String: JSON]) -> JSON {
        guard case .object(var members) = object, let value = members[key] else { return object }
        func included(_ element: JSON) -> JSON? {
            guard element["__type"] == "Pointer", let className = element["className"]?.stringValue,
                let id = element["objectId"]?.stringValue
            else { return element }
            return found[className + "/" + id]
        }
        if case .array(let elements) = value {
            members[key] = .array(elements.compactMap(included))
        } else {
            members[key] = included(value)
        }
        return .object(members)
    }
}
