import RoostCore

/// Keys as paths into a row's JSON: dot paths, array indexes, and arrays where a path ends (MongoDB's dot notation).
extension QueryCompiler {
    /// The SQLite JSON path of a key: `sender.group` is `$.sender.group`; a numeric part indexes an
    /// array (`items.1.value` is `$.items[1].value`), as in MongoDB's dot notation.
    func jsonPath(_ key: String) -> String {
        guard key.utf8.contains(UInt8(ascii: ".")) else { return "$." + key }
        var path = "$"
        for (index, part) in key.split(separator: ".").enumerated() {
            if index > 0, part.utf8.count <= 9, part.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) {
                path += "[\(part)]"
            } else if index == 0 || Names.isValidIdentifier(String(part)) {
                path += "." + part
            } else {
                path += ".\"\(part)\""  // Letters, digits and `_` only (`isQueryableKey`): nothing to escape.
            }
        }
        return path
    }

    /// A dot path may end at an array (`sender.group` with `group: ["A", "B"]`), whose elements then match
    /// one by one, as MongoDB matches them; only the stored value can tell.
    func isDotPath(_ key: String) -> Bool { key.utf8.contains(UInt8(ascii: ".")) }

    /// `scalar`, or, when a dot path ends at an array, `element` (a test on `element`) for any of its elements; when
    /// the path crosses an array of objects on the way (`comments.author`), for any value it reaches
    /// (`roost_path_values`, which reads the row's JSON: only for rows where the plain path finds nothing).
    func scalarOrAnyElement(_ key: String, scalar: SQLFragment, element: SQLFragment) -> SQLFragment {
        let path = jsonPath(key)
        return SQLFragment(
            sql: "(\(scalar.sql)) OR (json_type(data, '\(path)') = 'array' AND \(anyElement(key, element.sql)))"
                + " OR (json_type(data, '\(path)') IS NULL AND EXISTS (SELECT 1 FROM json_each(roost_path_values(data, ?)) AS element WHERE \(element.sql)))",
            arguments: scalar.arguments + element.arguments + [.text(key)] + element.arguments)
    }

    /// A dot path reaches something: directly, or through arrays of objects on the way.
    func dotPathExists(_ key: String) -> SQLFragment {
        SQLFragment(sql: "json_type(data, '\(jsonPath(key))') IS NOT NULL OR json_array_length(roost_path_values(data, ?)) > 0",
                    arguments: [.text(key)])
    }

    /// `EXISTS` an element of the array at `key` passing `test` (on `element`).
    func anyElement(_ key: String, _ test: String) -> String {
        "EXISTS (SELECT 1 FROM json_each(data, '\(jsonPath(key))') AS element WHERE \(test))"
    }
}
