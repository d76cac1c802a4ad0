import RoostCore

/// One object as stored: the built-in columns plus its fields in wire encoding.
public struct StoredObject: Sendable, Equatable {
    public var objectId: String
    public var createdAt: ParseDate
    public var updatedAt: ParseDate
    /// `nil` means no ACL: public read and write.
    public var acl: JSON?
    public var fields: [String: JSON]

    /// The object as Parse answers it: `createdAt`/`updatedAt` as plain ISO strings.
    /// - Parameter keys: when given, only these fields (the built-in ones are always kept).
    func wireJSON(keys: Set<String>? = nil, excluding: Set<String> = []) -> JSON {
        var result: [String: JSON] = [:]
        for (name, value) in fields where (keys?.contains(name) ?? true) && !excluding.contains(name) {
            result[name] = value
        }
        result["objectId"] = .string(objectId)
        result["createdAt"] = .string(createdAt.iso)
        result["updatedAt"] = .string(updatedAt.iso)
        if let acl { result["ACL"] = acl }
        return .object(result)
    }
}

/// One row as read from a class table, still in its stored text form. Reads send it as is
/// (`wireFragment`); writes decode it (`decoded()`).
struct StoredRow: Sendable {
    let className: String
    let objectId: String
    let createdAt: Int64
    let updatedAt: Int64
    let aclText: String?
    let dataText: String

    init(className: String, objectId: String, createdAt: Int64, updatedAt: Int64, aclText: String?, dataText: String) {
        self.className = className
        self.objectId = objectId
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.aclText = aclText
        self.dataText = dataText
    }

    /// From the columns `objectId, createdAt, updatedAt, acl, data`.
    init(_ row: [SQLValue], className: String) {
        self.className = className
        objectId = row[0].text ?? ""
        createdAt = row[1].integer ?? 0
        updatedAt = row[2].integer ?? 0
        aclText = row[3].text
        dataText = row[4].text ?? "{}"
    }

    /// - Throws: `StorageError.corruptRow` when the stored JSON does not parse.
    func decoded() throws -> StoredObject {
        guard case .object(let fields) = try? JSONParser.parse(dataText) else {
            throw StorageError.corruptRow(className: className, objectId: objectId)
        }
        let acl = try aclText.map { text -> JSON in
            guard let acl = try? JSONParser.parse(text) else { throw StorageError.corruptRow(className: className, objectId: objectId) }
            return acl
        }
        return StoredObject(
            objectId: objectId, createdAt: ParseDate(millisecondsSince1970: createdAt),
            updatedAt: ParseDate(millisecondsSince1970: updatedAt), acl: acl, fields: fields)
    }

    /// The object as Parse answers it, spliced from the stored text without decoding the fields:
    /// `{"objectId":…,"createdAt":…,"updatedAt":…,"ACL":…,<stored fields>}`.
    var wireFragment: JSON {
        var output: [UInt8] = []
        output.reserveCapacity(dataText.utf8.count + 120)
        output.append(contentsOf: #"{"objectId":"#.utf8)
        JSON.writeString(objectId, to: &output)
        output.append(contentsOf: #","createdAt":"#.utf8)
        ParseDate(millisecondsSince1970: createdAt).appendQuotedISO(to: &output)
        output.append(contentsOf: #","updatedAt":"#.utf8)
        ParseDate(millisecondsSince1970: updatedAt).appendQuotedISO(to: &output)
        if let aclText {
            output.append(contentsOf: #","ACL":"#.utf8)
            output.appendBytes(of: aclText)
        }
        if dataText.utf8.count > 2 { output.append(UInt8(ascii: ",")) }  // Not "{}".
        output.appendBytes(of: dataText, droppingFirst: 1)  // Stored as one compact object: drop its "{".
        return .encodedFragment(output)
    }
}

extension [UInt8] {
    /// Appends a string's UTF-8 bytes straight from its buffer (a generic `utf8` view copies byte by byte).
    mutating func appendBytes(of text: String, droppingFirst count: Int = 0) {
        var text = text
        text.withUTF8 { append(contentsOf: UnsafeBufferPointer(rebasing: $0.dropFirst(count))) }
    }
}
