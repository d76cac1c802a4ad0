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
        /// The only fields to keep of the objects included here (`keys=post.title`); nil keeps all.
        var keys: Set<String>?
        /// Fields to leave out of the objects included here (`excludeKeys=post.title`).
        var excluded: Set<String> = []

        init(_ paths: [[String]] = []) {
            for path in paths { insert(path[...]) }
        }

        mutating func insert(_ path: ArraySlice<String>) {
            guard let first = path.first else { return }
            children[first, default: PathTree()].insert(path.dropFirst())
        }

        mutating func setKeys(_ selected: Set<String>, at path: ArraySlice<String>) {
            guard let first = path.first else {
                keys = selected
                return
            }
            children[first]?.setKeys(selected, at: path.dropFirst())
        }

        mutating func setExcluded(_ excluded: Set<String>, at path: ArraySlice<String>) {
            guard let first = path.first else {
                self.excluded = excluded
                return
            }
            children[first]?.setExcluded(excluded, at: path.dropFirst())
        }
    }

    static let maximumDepth = 10

    /// - Parameters:
    ///   - keys: per include path (`"post"`, `"post.author"`), the fields to keep of included objects.
    ///   - excluded: per include path, the fields to leave out of included objects.
    func resolve(_ objects: [JSON], schema: ClassSchema, paths: [[String]], keys: [String: Set<String>] = [:],
                 excluded: [String: Set<String>] = [:]) throws -> [JSON] {
        var tree = PathTree(paths.filter { $0.count <= IncludeResolver.maximumDepth })
        if let all = tree.children.removeValue(forKey: "*") {  // `*`: every pointer (or array) field of this class.
            for (field, type) in schema.fields where type == .array || { if case .pointer = type { true } else { false } }() {
                if tree.children[field] == nil { tree.children[field] = all }  // Paths named as well keep their subtrees.
            }
        }
        for (path, selected) in keys { tree.setKeys(selected, at: path.split(separator: ".").map(String.init)[...]) }
        for (path, left) in excluded { tree.setExcluded(left, at: path.split(separator: ".").map(String.init)[...]) }
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
                for (id, object) in try fetch(className, Array(ids), subtree: subtree) {
                    found[className + "/" + id] = project(object, subtree.keys, excluding: subtree.excluded)
                }
            }
            objects = objects.map { replace(key, in: $0, with: found) }
        }
        return objects
    }

    /// The readable objects among `ids`: ACL, the class's `get` permission and its protected fields apply,
    /// as if the caller fetched them.
    private func fetch(_ className: String, _ ids: [String], subtree: PathTree) throws -> [(String, JSON)] {
        if !context.isMaster { try ObjectWriter.checkMasterOnlyClass(className, "get") }  // Parse's `enforceRoleSecurity`.
        guard let schema = try SchemaStore.load(className, in: db),
            let grant = try? ClassPermissions.check(.get, schema, context: context)
        else { return [] }
        let hidden = ClassPermissions.protectedFields(schema, context: context)
        let rules = ClassPermissions.userFieldRules(schema, context: context)
        let fileFields = FileURLs.fields(of: schema), urls = FileURLs(context: context)
        let rows = try ObjectStore.fetchMany(ids, from: schema, readableBy: context.aclSubjects, in: db)
        var objects: [JSON] = try rows.compactMap { row in
            let object = try row.decoded()
            guard ClassPermissions.allows(grant, object, context: context) else { return nil }
            // On `_User` the protected fields apply too (and other users' email and authData stay hidden).
            let protected = rules.isEmpty ? hidden : ClassPermissions.protectedFields(hidden, of: object.fields, rules: rules, context: context)
            var json = object.wireJSON(excluding: ClassRoutes.hiddenKeys(of: object.objectId, className: className, protected: protected,
                                                                         context: context))
            json = try urls.expand(json, fields: fileFields)
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

    /// Keeps only `keys` (plus the built-in fields) of an included object, less `excluded`.
    private func project(_ object: JSON, _ keys: Set<String>?, excluding excluded: Set<String>) -> JSON {
        guard keys != nil || !excluded.isEmpty, case .object(let members) = object else { return object }
        let always: Set<String> = ["objectId", "createdAt", "updatedAt", "ACL", "__type", "className"]
        return .object(members.filter { member in
            if always.contains(member.key) { return true }
            if excluded.contains(member.key) { return false }
            guard let keys else { return true }
            return keys.contains(member.key) || member.value["__type"] == "Object"
        })
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
