import RoostCore

/// The server's own tables an export carries row for row: what is in flight when an app moves. Without them a
/// retried `X-Parse-Request-Id` write (the SDK's `saveEventually` whose reply was lost) would be applied a second
/// time on the new server, an emailed link would stop working, a half-counted lockout would start over and a
/// mail accepted for sending would never go.
struct StateTable {
    enum Kind { case text, optionalText, integer, optionalInteger }

    /// The record's `type` in the export.
    let type: String
    let table: String
    /// The exported columns, as record members of the same names.
    let columns: [(name: String, kind: Kind)]
    /// The unique column rows are paged by; a key not among `columns` (the outbox's order) is read, not exported.
    let key: String
    let keyIsInteger: Bool

    static let all = [
        StateTable(type: "requestRecord", table: "_idempotency", columns: [
            ("requestId", .text), ("fingerprint", .optionalText), ("status", .integer), ("body", .optionalText),
            ("location", .optionalText), ("expiresAt", .integer),
        ], key: "requestId", keyIsInteger: false),
        StateTable(type: "accountToken", table: "_account_token", columns: [
            ("tokenHash", .text), ("userId", .text), ("purpose", .text), ("expiresAt", .optionalInteger), ("issuedAt", .optionalInteger),
        ], key: "tokenHash", keyIsInteger: false),
        StateTable(type: "loginFailure", table: "_login_failure", columns: [
            ("userId", .text), ("failedCount", .integer), ("lockedUntil", .optionalInteger),
        ], key: "userId", keyIsInteger: false),
        // Imported in export order, so the new outbox sends them in the order the old one would have.
        StateTable(type: "mail", table: "_mail_outbox", columns: [
            ("recipient", .text), ("message", .text), ("attempts", .integer), ("nextAttemptAt", .integer), ("createdAt", .integer),
        ], key: "id", keyIsInteger: true),
    ]

    private var readsKeySeparately: Bool { !columns.contains { $0.name == key } }

    /// Every row as its export record's members, a page at a time in key order (memory stays flat).
    func forEachRecord(in db: some SQLQuerying, pageSize: Int, _ body: ([String: JSON]) throws -> Void) throws {
        let selected = (readsKeySeparately ? [key] : []) + columns.map(\.name)
        let keyIndex = selected.firstIndex(of: key)!
        if db.dialect == .postgres {
            // One streamed statement (single-row mode), text keys in bytewise order as on SQLite.
            let order = keyIsInteger ? key : key + " COLLATE \"C\""
            try db.forEachRow("SELECT \(selected.joined(separator: ", ")) FROM \(table) ORDER BY \(order)", [], cacheable: false) { row in
                try body(record(readsKeySeparately ? Array(row.dropFirst()) : row))
            }
            return
        }
        var after: SQLValue = keyIsInteger ? .integer(.min) : .text("")
        while true {
            let rows = try db.fetchRows("SELECT \(selected.joined(separator: ", ")) FROM \(table) WHERE \(key) > ? ORDER BY \(key) LIMIT \(pageSize)",
                                        [after], cacheable: false)
            for row in rows {
                try body(record(readsKeySeparately ? Array(row.dropFirst()) : row))
            }
            guard rows.count == pageSize, let last = rows.last?[keyIndex] else { return }
            after = last
        }
    }

    /// A row's export record members.
    private func record(_ values: [SQLValue]) -> [String: JSON] {
        var members: [String: JSON] = [:]
        for (column, value) in zip(columns, values) {
            switch value {
            case .text(let text): members[column.name] = .string(text)
            case .integer(let number): members[column.name] = .number(Double(number))
            case .real(let number): members[column.name] = .number(number)
            case .null: members[column.name] = .null
            }
        }
        return members
    }

    /// Inserts one record's row. - Throws: a description of the member at fault.
    func insert(_ record: [String: JSON], into db: any SQLConnection) throws(StateTableError) {
        var values: [SQLValue] = []
        for (name, kind) in columns {
            let member = record[name] ?? .null
            switch (kind, member) {
            case (.optionalText, .null), (.optionalInteger, .null): values.append(.null)
            case (.text, .string(let text)), (.optionalText, .string(let text)): values.append(.text(text))
            // The `where` on each pattern: one after both would apply to the second only (and `Int64(1e300)` traps).
            case (.integer, .number(let number)) where number.rounded() == number && abs(number) < 9e15,
                (.optionalInteger, .number(let number)) where number.rounded() == number && abs(number) < 9e15:
                values.append(.integer(Int64(number)))
            default:
                throw StateTableError(description: "no \(kind == .text || kind == .optionalText ? "text" : "integer") \"\(name)\"")
            }
        }
        let names = columns.map(\.name)
        do {
            try db.execute("INSERT INTO \(table) (\(names.joined(separator: ", "))) VALUES (\(names.map { _ in "?" }.joined(separator: ", ")))", values)
        } catch {
            throw StateTableError(description: "\(error)")
        }
    }
}

struct StateTableError: Error, CustomStringConvertible {
    let description: String
}
