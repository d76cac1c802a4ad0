import RoostCore

/// The pairs of every Relation field, in the `_join` table.
enum RelationStore {
    /// Links and unlinks the objects named by relation operations of one save.
    static func apply(_ operations: [String: FieldOperation], className: String, objectId: String, in db: any SQLConnection) throws {
        for (field, operation) in operations {
            guard case .relation(_, let added, let removed) = operation else { continue }
            if className == RoleStore.className { db.changedAuthentication = true }  // Role membership changed.
            for relatedId in added {
                try db.execute("INSERT INTO _join (owningClass, field, owningId, relatedId) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                               [.text(className), .text(field), .text(objectId), .text(relatedId)])
            }
            for relatedId in removed {
                try db.execute("DELETE FROM _join WHERE owningClass = ? AND field = ? AND owningId = ? AND relatedId = ?",
                               [.text(className), .text(field), .text(objectId), .text(relatedId)])
            }
        }
    }

    /// The marker every object shows for a Relation field (`{"__type": "Relation", "className": …}`).
    static func marker(_ target: String) -> JSON { ["__type": "Relation", "className": .string(target)] }

    /// Adds the markers of the schema's Relation fields to a new object's fields.
    static func addMarkers(to fields: inout [String: JSON], schema: ClassSchema) {
        for (field, type) in schema.fields {
            // A `null` written to it too: Parse accepts one (ParsePy re-sends every fetched Relation as `null`) and
            // answers the Relation from the schema whatever the object holds.
            if case .relation(let target) = type, fields[field] == nil || fields[field] == .null { fields[field] = marker(target) }
        }
    }

    /// Writes the marker of a newly recorded Relation field into every stored object of the class.
    static func markExisting(_ added: [String: FieldType], schema: ClassSchema, in db: any SQLConnection) throws {
        for (field, type) in added {
            guard case .relation(let target) = type else { continue }
            try db.execute("UPDATE \(schema.tableName) SET data = json_set(data, '$.\(field)', json(?))",
                           [.text(marker(target).jsonText)], cacheable: false)
        }
    }

    /// Forgets the pairs of a deleted object (as owner).
    static func deleteAll(className: String, objectId: String, in db: any SQLConnection) throws {
        if className == RoleStore.className { db.changedAuthentication = true }
        try db.execute("DELETE FROM _join WHERE owningClass = ? AND owningId = ?", [.text(className), .text(objectId)])
    }

    /// Forgets a Relation field removed from the schema.
    static func deleteField(className: String, field: String, in db: any SQLConnection) throws {
        try db.execute("DELETE FROM _join WHERE owningClass = ? AND field = ?", [.text(className), .text(field)])
    }
}
