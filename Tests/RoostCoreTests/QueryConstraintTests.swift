import RoostCore
import Testing

@Suite struct QueryConstraintTests {
    static let date: JSON = ["__type": "Date", "iso": "2026-11-22T10:00:00.000Z"]
    static let pointer: JSON = ["__type": "Pointer", "className": "Player", "objectId": "p1"]

    @Test(arguments: [
        ([:], .all),
        (["name": "Sean"], .field("name", .equalTo("Sean"))),
        (["score": 1337], .field("score", .equalTo(1337))),
        (["done": false], .field("done", .equalTo(false))),
        (["gone": nil], .field("gone", .equalTo(nil))),
        (["tags": ["a", "b"]], .field("tags", .equalTo(["a", "b"]))),
        (["settings": ["theme": "dark"]], .field("settings", .equalTo(["theme": "dark"]))),
        (["settings.theme": "dark"], .field("settings.theme", .equalTo("dark"))),
        (["objectId": "abc"], .field("objectId", .equalTo("abc"))),
        (["when": QueryConstraintTests.date], .field("when", .equalTo(QueryConstraintTests.date))),
        (["owner": QueryConstraintTests.pointer], .field("owner", .equalTo(QueryConstraintTests.pointer))),
        (["b": 2, "a": 1], .and([.field("a", .equalTo(1)), .field("b", .equalTo(2))])),
    ] as [(JSON, QueryConstraint)])
    func equality(query json: JSON, expected: QueryConstraint) throws {
        #expect(try QueryConstraint.parse(where: json) == expected)
    }

    @Test(arguments: [
        ("$eq", 1, .equalTo(1)),
        ("$ne", 1, .notEqualTo(1)),
        ("$lt", 1, .lessThan(1)),
        ("$lte", 1, .lessThanOrEqualTo(1)),
        ("$gt", "b", .greaterThan("b")),
        ("$gte", QueryConstraintTests.date, .greaterThanOrEqualTo(QueryConstraintTests.date)),
        ("$in", [1, "a"], .containedIn([1, "a"])),
        ("$nin", [], .notContainedIn([])),
        ("$exists", true, .exists(true)),
        ("$exists", false, .exists(false)),
        ("$ne", nil, .notEqualTo(nil)),
        ("$in", [QueryConstraintTests.pointer], .containedIn([QueryConstraintTests.pointer])),
    ] as [(String, JSON, FieldCondition)])
    func operators(op: String, operand: JSON, condition: FieldCondition) throws {
        #expect(try QueryConstraint.parse(where: ["f": [op: operand]]) == .field("f", condition))
    }

    @Test func severalOperatorsOnOneKeyAreAnded() throws {
        let parsed = try QueryConstraint.parse(where: ["score": ["$lt": 10, "$gte": 2]])
        #expect(parsed == .and([.field("score", .greaterThanOrEqualTo(2)), .field("score", .lessThan(10))]))
    }

    @Test func operandsAreNormalized() throws {
        let parsed = try QueryConstraint.parse(where: ["when": ["$lt": ["__type": "Date", "iso": "2026-11-22T12:00:00+02:00"]]])
        #expect(parsed == .field("when", .lessThan(Self.date)))
        #expect(parseErrorCode { try QueryConstraint.parse(where: ["when": ["__type": "Date", "iso": "nope"]]) } == 111)
        #expect(parseErrorCode { try QueryConstraint.parse(where: ["when": ["$gt": ["__type": "Date"]]]) } == 111)
    }

    @Test func compoundQueries() throws {
        let or = try QueryConstraint.parse(where: ["$or": [["a": 1], ["b": ["$gt": 2]]]])
        #expect(or == .or([.field("a", .equalTo(1)), .field("b", .greaterThan(2))]))
        let and = try QueryConstraint.parse(where: ["$and": [["a": 1]], "c": 3])
        #expect(and == .and([.and([.field("a", .equalTo(1))]), .field("c", .equalTo(3))]))
        let nor = try QueryConstraint.parse(where: ["$nor": [["a": 1], ["a": 2]]])
        #expect(nor == .nor([.field("a", .equalTo(1)), .field("a", .equalTo(2))]))
        let nested = try QueryConstraint.parse(where: ["$or": [["$and": [["a": 1], ["b": 2]]], ["c": 3]]])
        #expect(nested == .or([.and([.field("a", .equalTo(1)), .field("b", .equalTo(2))]), .field("c", .equalTo(3))]))
    }

    @Test(arguments: [
        ["$or": 1], ["$or": []], ["$or": ["a": 1]], ["$and": "x"], ["$nor": []], ["$or": [1]], ["$or": [["ACL": 1]]],
    ] as [JSON])
    func malformedCompoundQueriesAre102(query json: JSON) {
        #expect(parseErrorCode { try QueryConstraint.parse(where: json) } == 102)
    }

    /// Parse: "Invalid key name: x" (105) for keys that are not field names.
    @Test(arguments: ["1abc", "a-b", "a b", "$foo", "", ".a", "a'b", #"a"b"#, "a;DROP TABLE x", "é", "_id"])
    func badKeyNamesAre105(key: String) {
        #expect(parseErrorCode { try QueryConstraint.parse(where: [key: 1]) } == 105)
        #expect(parseErrorCode { try QueryConstraint.parse(where: [key: ["$gt": 1]]) } == 105)
    }

    @Test func queryingOnACLIs102() throws {
        let error = try #require(throws: ParseError.self) { try QueryConstraint.parse(where: ["ACL": ["*": ["read": true]]]) }
        #expect(error.code == .invalidQuery)
        #expect(error.message == "Cannot query on ACL.")
    }

    /// Parse (`MongoTransform.transformConstraint`): an unknown operator is 107 "bad constraint: $foo".
    @Test(arguments: ["$foo", "$regexx", "$EQ", "$"])
    func unknownOperatorsAre107(op: String) {
        #expect(parseErrorCode { try QueryConstraint.parse(where: ["f": [op: 1]]) } == 107)
    }

    /// Parse: "bad $in value" / "bad $nin value" are 107.
    @Test(arguments: ["$in", "$nin"])
    func nonArrayInOperandsAre107(op: String) {
        #expect(parseErrorCode { try QueryConstraint.parse(where: ["f": [op: 1]]) } == 107)
        #expect(parseErrorCode { try QueryConstraint.parse(where: ["f": [op: "a"]]) } == 107)
    }

    @Test(arguments: ["text", 1, [1], true, nil] as [JSON])
    func whereMustBeAnObject(query json: JSON) {
        #expect(parseErrorCode { try QueryConstraint.parse(where: json) } == 102)
    }

    @Test(arguments: [
        ("name", true), ("a_b9", true), ("a.b.c", true), ("objectId", true), ("createdAt", true), ("updatedAt", true),
        ("1a", false), ("a.", false), ("", false), ("a-b", false), ("$or", false), ("_rperm", false),
        // Parse's key check is `^[a-zA-Z][a-zA-Z0-9_.]*$`: array indexes and other words after the field name.
        ("items.1.value", true), ("items.0", true), ("a.1b", true), ("a._x", true), ("a..b", false), ("1.a", false), ("a.b-c", false),
    ] as [(String, Bool)])
    func queryableKeys(key: String, valid: Bool) {
        #expect(QueryConstraint.isQueryableKey(key) == valid)
    }
}
