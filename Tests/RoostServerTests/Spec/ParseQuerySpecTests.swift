import Foundation
import RoostCore
import Testing

/// Parse Server's spec/ParseQuery.spec.js, the cases a REST client can observe, in the spec's order.
/// The JS SDK calls become the `where` JSON the SDK sends.
@Suite struct ParseQuerySpecTests {
    /// `BoxedNumber` objects numbered `numbers`, named after their number.
    func boxedNumbers(_ numbers: [Int] = Array(0...9), server: TestServer? = nil) async throws -> (TestServer, [String]) {
        let s = try server ?? TestServer()
        let ids = try await s.createAll("BoxedNumber", numbers.map { ["number": .number(Double($0)), "name": .string("\($0)")] })
        return (s, ids)
    }

    func count(_ s: TestServer, _ className: String, _ constraint: JSON, master: Bool = false,
               sourceLocation: SourceLocation = #_sourceLocation) async throws -> Int {
        try await s.queryResults(className, ["where": constraint], master: master, sourceLocation: sourceLocation).count
    }

    // spec: ParseQuery.spec.js: basic query
    // spec: ParseQuery.spec.js: searching for null
    // spec: ParseQuery.spec.js: searching for not null
    @Test func basicAndNullQueries() async throws {
        let s = try TestServer()
        let ids = try await s.createAll("TestObject", [["name": "baz", "foo": "baz"], ["name": "qux", "foo": "qux"], ["name": "nul", "foo": .null], ["name": "none"]])
        #expect(try await s.names("TestObject", where: ["foo": "baz"]) == ["baz"])
        #expect(try await s.names("TestObject", where: ["foo": .null]) == ["none", "nul"])
        #expect(try await s.names("TestObject", where: ["foo": ["$ne": .null]]) == ["baz", "qux"])
        try await s.update("TestObject", ids[1], ["foo": .null])
        #expect(try await s.names("TestObject", where: ["foo": .null]) == ["none", "nul", "qux"])
        #expect(try await s.names("TestObject", where: ["foo": ["$ne": .null]]) == ["baz"])
    }

    // spec: ParseQuery.spec.js: notEqualTo with Relation is working
    @Test func relationEqualityAndInequality() async throws {
        let s = try TestServer()
        let users = try await s.createAll("Person", [["name": "user"], ["name": "user1"], ["name": "user2"]])
        let (user, user1, user2) = (pointer("Person", users[0]), pointer("Person", users[1]), pointer("Person", users[2]))
        func add(_ people: JSON...) -> JSON { ["__op": "AddRelation", "objects": .array(people)] }
        let cake1 = try await s.create("Cake", ["name": "cake1", "liker": add(user, user1), "hater": add(user2)])
        _ = try await s.create("Cake", ["name": "cake2", "liker": add(user, user1), "hater": add(user2), "something": add(user)])
        _ = try await s.create("Cake", ["name": "cake3", "liker": add(user), "hater": add(user1, user2)])
        #expect(try await s.names("Cake", where: ["liker": user2]) == [])
        #expect(try await s.names("Cake", where: ["liker": user1]) == ["cake1", "cake2"])
        #expect(try await s.names("Cake", where: ["liker": ["$ne": user1]]) == ["cake3"])
        #expect(try await s.names("Cake", where: ["hater": ["$ne": user2]]) == [])
        #expect(try await s.names("Cake", where: ["liker": ["$nin": [user1]]]) == ["cake3"])
        #expect(try await s.names("Cake", where: ["liker": ["$in": [user, user1, user2], "$ne": user1]]) == ["cake3"])
        #expect(try await s.names("Cake", where: ["liker": ["$ne": user1], "objectId": .string(cake1)]) == [])
        #expect(try await s.names("Cake", where: ["hater": ["$ne": user2], "liker": ["$ne": user2]]) == [])
        #expect(try await s.names("Cake", where: ["hater": user, "liker": user]) == [])
        #expect(try await s.names("Cake", where: ["hater": .null, "liker": .null]) == [])
        #expect(try await s.names("Cake", where: ["something": .null]) == [])
    }

    // spec: ParseQuery.spec.js: query notContainedIn on empty array
    // spec: ParseQuery.spec.js: query containedIn on empty array
    // spec: ParseQuery.spec.js: query with limit
    // spec: ParseQuery.spec.js: nested equalTo string with single quote
    // spec: ParseQuery.spec.js: nested containedIn string with single quote
    // spec: ParseQuery.spec.js: nested containedIn string
    // spec: ParseQuery.spec.js: nested containedIn number
    @Test func emptyListsLimitAndNestedValues() async throws {
        let s = try TestServer()
        _ = try await s.createAll("TestObject", [
            ["name": "v", "value": 100], ["name": "w", "value": 101],
            ["name": "q1", "nested": ["foo": "single'quote"]], ["name": "q2", "nested": ["foo": ["single'quote"]]],
            ["name": "s1", "sender": ["group": ["A", "B"]]], ["name": "s2", "sender": ["group": ["A", "C"]]],
            ["name": "s3", "sender": ["group": ["B", "C"]]],
            ["name": "n1", "sender": ["group": [1, 2]]], ["name": "n2", "sender": ["group": [1, 3]]], ["name": "n3", "sender": ["group": [2, 3]]],
        ])
        #expect(try await s.names("TestObject", where: ["value": ["$nin": []], "name": ["$in": ["v"]]]) == ["v"])
        #expect(try await s.names("TestObject", where: ["value": ["$in": []]]) == [])
        #expect(try await s.queryResults("TestObject", ["where": ["value": ["$exists": true]], "limit": 1]).count == 1)
        #expect(try await s.names("TestObject", where: ["nested.foo": "single'quote"]) == ["q1", "q2"])
        #expect(try await s.names("TestObject", where: ["nested.foo": ["$in": ["single'quote"]]]) == ["q1", "q2"])
        #expect(try await s.names("TestObject", where: ["sender.group": ["$in": ["A"]]]) == ["s1", "s2"])
        #expect(try await s.names("TestObject", where: ["sender.group": ["$in": [1]]]) == ["n1", "n2"])
    }

    // spec: ParseQuery.spec.js: query without limit respects default limit
    // spec: ParseQuery.spec.js: query with limit overrides default limit
    @Test func defaultLimit() async throws {
        let one = try TestServer(arguments: ["--default-limit", "1"])
        _ = try await one.createAll("TestObject", [["foo": "baz"], ["foo": "qux"]])
        #expect(try await one.queryResults("TestObject").count == 1)
        #expect(try await one.queryResults("TestObject", ["limit": 2]).count == 2)
        let two = try TestServer(environment: ["ROOST_DEFAULT_LIMIT": "2"])
        _ = try await two.createAll("TestObject", [["foo": "baz"], ["foo": "qux"], ["foo": "quux"]])
        #expect(try await two.queryResults("TestObject").count == 2)
        #expect(try await two.queryResults("TestObject", ["limit": 1]).count == 1)
    }

    // spec: ParseQuery.spec.js: query with limit equal to maxlimit
    // spec: ParseQuery.spec.js: query with limit exceeding maxlimit
    @Test func maxLimit() async throws {
        let s = try TestServer(arguments: ["--max-limit", "1"])
        _ = try await s.createAll("TestObject", [["foo": "baz"], ["foo": "qux"]])
        #expect(try await s.queryResults("TestObject", ["limit": 1]).count == 1)
        #expect(try await s.queryResults("TestObject", ["limit": 2]).count == 1)
    }

    // spec: ParseQuery.spec.js: containedIn object array queries
    // spec: ParseQuery.spec.js: containedIn null array
    @Test func containedInPointersAndNull() async throws {
        let s = try TestServer()
        var ids: [String] = []
        for index in 0..<4 {
            var fields: [String: JSON] = ["name": .string("m\(index)")]
            if index > 0 { fields["prior"] = pointer("TestObject", ids[index - 1]) }
            ids.append(try await s.create("TestObject", .object(fields)))
        }
        #expect(try await s.names("TestObject", where: ["prior": ["$in": [pointer("TestObject", ids[0]), pointer("TestObject", ids[2])]]]) == ["m1", "m3"])
        _ = try await s.signUpAccount("contact@xyz.com")
        let users = try await s.queryResults("_User", ["where": ["username": ["$in": ["contact@xyz.com", "contact@zyx.com", .null]]]], master: true)
        #expect(users.count == 1)
    }

    // spec: ParseQuery.spec.js: containsAll number array queries
    // spec: ParseQuery.spec.js: containsAll string array queries
    // spec: ParseQuery.spec.js: containsAll date array queries
    // spec: ParseQuery.spec.js: containsAll object array queries
    @Test func containsAll() async throws {
        let s = try TestServer()
        _ = try await s.createAll("NumberSet", [["numbers": [1, 2, 3, 4, 5]], ["numbers": [1, 3, 4, 5]]])
        #expect(try await count(s, "NumberSet", ["numbers": ["$all": [1, 2, 3]]]) == 1)
        _ = try await s.createAll("StringSet", [["strings": ["a", "b", "c", "d", "e"]], ["strings": ["a", "c", "d", "e"]]])
        #expect(try await count(s, "StringSet", ["strings": ["$all": ["a", "b", "c"]]]) == 1)
        func dates(_ days: [String]) -> JSON { .array(days.map { date("\($0)T00:00:00.000Z") }) }
        _ = try await s.createAll("DateSet", [["dates": dates(["2013-02-01", "2013-02-02", "2013-02-03", "2013-02-04"])],
                                              ["dates": dates(["2013-02-01", "2013-02-03", "2013-02-04"])]])
        #expect(try await count(s, "DateSet", ["dates": ["$all": dates(["2013-02-01", "2013-02-02", "2013-02-03"])]]) == 1)
        let messages = try await s.createAll("TestObject", (0..<4).map { ["i": .number(Double($0))] }).map { pointer("TestObject", $0) }
        _ = try await s.createAll("MessageSet", [["messages": .array(messages)], ["messages": [messages[0], messages[1], messages[3]]]])
        #expect(try await count(s, "MessageSet", ["messages": ["$all": [messages[0], messages[2]]]]) == 1)
    }

    // spec: ParseQuery.spec.js: containsAllStartingWith should match all strings that starts with string
    // spec: ParseQuery.spec.js: containsAllStartingWith values must be all of type starting with regex
    // spec: ParseQuery.spec.js: containsAllStartingWith empty array values should return empty results
    // spec: ParseQuery.spec.js: containsAllStartingWith single empty value returns empty results
    // spec: ParseQuery.spec.js: containsAllStartingWith single regex value should return corresponding matching results
    // spec: ParseQuery.spec.js: containsAllStartingWith single invalid regex returns empty results
    @Test func containsAllStartingWith() async throws {
        let s = try TestServer()
        _ = try await s.createAll("Object", [
            ["name": "1", "strings": ["the", "brown", "lazy", "fox", "jumps"]], ["name": "2", "strings": ["the", "brown", "fox", "jumps"]],
            ["name": "3", "strings": ["over", "the", "lazy", "dog"]],
        ])
        func startsWith(_ prefix: String) -> JSON { ["$regex": .string("^\\Q\(prefix)\\E")] }
        #expect(try await s.names("Object", where: ["strings": ["$all": [startsWith("the"), startsWith("fox"), startsWith("lazy")]]]) == ["1"])
        #expect(try await s.names("Object", where: ["strings": ["$all": [startsWith("the"), startsWith("lazy")]]]) == ["1", "3"])
        #expect(try await s.names("Object", where: ["strings": ["$all": [startsWith("he"), startsWith("lazy")]]]) == [])
        let mixed = try await s.query("Object", ["where": ["strings": ["$all": [startsWith("the"), startsWith("lazy"), startsWith("fox"),
                                                                                ["$unknown": [:]]]]]])
        #expect(mixed.status == 400, "\(mixed.text)")
        #expect(try await s.names("Object", where: ["strings": ["$all": []]]) == [])
        #expect(try await s.names("Object", where: ["strings": ["$all": [[:]]]]) == [])
        #expect(try await s.names("Object", where: ["strings": ["$all": [startsWith("lazy")]]]) == ["1", "3"])
        #expect(try await s.names("Object", where: ["strings": ["$all": [["$unknown": "^\\Qlazy\\E"]]]]) == [])
    }

    // spec: ParseQuery.spec.js: containedBy pointer array
    // spec: ParseQuery.spec.js: containedBy number array
    // spec: ParseQuery.spec.js: containedBy empty array
    // spec: ParseQuery.spec.js: containedBy invalid query
    @Test func containedBy() async throws {
        let s = try TestServer()
        let objects = try await s.createAll("Object", (0..<10).map { ["key": .number(Double($0))] }).map { pointer("Object", $0) }
        _ = try await s.createAll("Parent", [
            ["name": "p1", "objects": .array(Array(objects[0..<3]))], ["name": "p2", "objects": [objects[2], objects[0]]],
            ["name": "p3", "objects": .array(Array(objects[1..<5]))],
        ])
        #expect(try await s.names("Parent", where: ["objects": ["$containedBy": .array(Array(objects[1...]))]]) == ["p3"])
        _ = try await s.createAll("TestObject", [["name": "o1", "numbers": [0, 1, 2]], ["name": "o2", "numbers": [2, 0]],
                                                 ["name": "o3", "numbers": [1, 2, 3, 4]]])
        #expect(try await s.names("TestObject", where: ["numbers": ["$containedBy": [1, 2, 3, 4, 5, 6, 7, 8, 9]]], master: true) == ["o3"])
        #expect(try await s.names("TestObject", where: ["numbers": ["$containedBy": []]], master: true) == [])
        expectParseError(try await s.query("TestObject", ["where": ["objects": ["$containedBy": 1234]]], master: true), 107,
                         "bad $containedBy: should be an array")
    }

    // spec: ParseQuery.spec.js: equalTo queries
    // spec: ParseQuery.spec.js: equalTo undefined
    // spec: ParseQuery.spec.js: lessThan queries
    // spec: ParseQuery.spec.js: lessThanOrEqualTo queries
    // spec: ParseQuery.spec.js: greaterThan queries
    // spec: ParseQuery.spec.js: greaterThanOrEqualTo queries
    // spec: ParseQuery.spec.js: lessThanOrEqualTo greaterThanOrEqualTo queries
    // spec: ParseQuery.spec.js: lessThan greaterThan queries
    // spec: ParseQuery.spec.js: notEqualTo queries
    // spec: ParseQuery.spec.js: containedIn queries
    // spec: ParseQuery.spec.js: notContainedIn queries
    // spec: ParseQuery.spec.js: objectId containedIn queries
    // spec: ParseQuery.spec.js: objectId equalTo queries
    // spec: ParseQuery.spec.js: find no elements
    // spec: ParseQuery.spec.js: count
    @Test func numberComparisons() async throws {
        let (s, ids) = try await boxedNumbers()
        #expect(try await s.names("BoxedNumber", where: ["number": 3]) == ["3"])
        #expect(try await count(s, "BoxedNumber", ["number": ["$exists": false]]) == 0)  // The SDK's equalTo(undefined).
        #expect(try await count(s, "BoxedNumber", ["number": ["$lt": 7]]) == 7)
        #expect(try await count(s, "BoxedNumber", ["number": ["$lte": 7]]) == 8)
        #expect(try await count(s, "BoxedNumber", ["number": ["$gt": 7]]) == 2)
        #expect(try await count(s, "BoxedNumber", ["number": ["$gte": 7]]) == 3)
        #expect(try await s.names("BoxedNumber", where: ["number": ["$lte": 7, "$gte": 7]]) == ["7"])
        #expect(try await count(s, "BoxedNumber", ["number": ["$lt": 9, "$gt": 3]]) == 5)
        #expect(try await count(s, "BoxedNumber", ["number": ["$ne": 5]]) == 9)
        #expect(try await s.names("BoxedNumber", where: ["number": ["$in": [3, 5, 7, 9, 11]]]) == ["3", "5", "7", "9"])
        #expect(try await count(s, "BoxedNumber", ["number": ["$nin": [3, 5, 7, 9, 11]]]) == 6)
        let inIds = try await s.orderedNames("BoxedNumber", ["where": ["objectId": ["$in": [.string(ids[2]), .string(ids[3]), .string(ids[0]), "NONSENSE"]]],
                                                             "order": "number"])
        #expect(inIds == ["0", "2", "3"])
        #expect(try await s.names("BoxedNumber", where: ["objectId": .string(ids[4])]) == ["4"])
        #expect(try await count(s, "BoxedNumber", ["number": 17]) == 0)
        let counted = try await s.query("BoxedNumber", ["where": ["number": ["$gt": 1]], "count": 1, "limit": 0])
        #expect(counted.json["count"] == 8)
    }

    // spec: ParseQuery.spec.js: lessThan zero queries
    // spec: ParseQuery.spec.js: lessThanOrEqualTo zero queries
    // spec: ParseQuery.spec.js: greaterThan zero queries
    // spec: ParseQuery.spec.js: greaterThanOrEqualTo zero queries
    // spec: ParseQuery.spec.js: notEqualTo zero queries
    // spec: ParseQuery.spec.js: equalTo zero queries
    // spec: ParseQuery.spec.js: number equalTo boolean queries
    // spec: ParseQuery.spec.js: containedIn false queries
    // spec: ParseQuery.spec.js: notContainedIn false queries
    @Test func zeroAndFalse() async throws {
        let (s, _) = try await boxedNumbers([-3, -2, -1, 0, 1])
        #expect(try await count(s, "BoxedNumber", ["number": ["$lt": 0]]) == 3)
        #expect(try await count(s, "BoxedNumber", ["number": ["$lte": 0]]) == 4)
        #expect(try await count(s, "BoxedNumber", ["number": ["$gt": 0]]) == 1)
        #expect(try await count(s, "BoxedNumber", ["number": ["$gte": 0]]) == 2)
        #expect(try await count(s, "BoxedNumber", ["number": ["$ne": 0]]) == 4)
        #expect(try await count(s, "BoxedNumber", ["number": 0]) == 1)
        #expect(try await count(s, "BoxedNumber", ["number": false]) == 0)
        expectParseError(try await s.query("BoxedNumber", ["where": ["number": ["$in": false]]]), 107, "bad $in value")
        expectParseError(try await s.query("BoxedNumber", ["where": ["number": ["$nin": false]]]), 107, "bad $nin value")
    }

    // spec: ParseQuery.spec.js: equalTo false queries
    // spec: ParseQuery.spec.js: where $eq false queries (rest)
    // spec: ParseQuery.spec.js: where $eq null queries (rest)
    @Test func falseAndNullEquality() async throws {
        let s = try TestServer()
        _ = try await s.createAll("TestObject", [["name": "f", "field": false], ["name": "t", "field": true], ["name": "n", "field": .null]])
        #expect(try await s.names("TestObject", where: ["field": false]) == ["f"])
        #expect(try await s.names("TestObject", where: ["field": ["$eq": false]], master: true) == ["f"])
        #expect(try await s.names("TestObject", where: ["field": ["$eq": .null]], master: true) == ["n"])
    }

    // spec: ParseQuery.spec.js: find with error
    // spec: ParseQuery.spec.js: first with error
    // spec: ParseQuery.spec.js: get
    // spec: ParseQuery.spec.js: get error
    // spec: ParseQuery.spec.js: first
    // spec: ParseQuery.spec.js: first no result
    // spec: ParseQuery.spec.js: first with two results
    @Test func getFirstAndErrors() async throws {
        let s = try TestServer()
        let ids = try await s.createAll("TestObject", [["foo": "bar"], ["foo": "bar"]])
        expectParseError(try await s.query("BoxedNumber", ["where": ["$foo": "bar"]]), 105)
        expectParseError(try await s.query("BoxedNumber", ["where": ["$foo": "bar"], "limit": 1]), 105)
        let got = try await s.fetch("TestObject", ids[0])
        #expect(got["objectId"]?.stringValue == ids[0])
        #expect(got["foo"] == "bar")
        #expect(isParseISODate(got["createdAt"]?.stringValue) && isParseISODate(got["updatedAt"]?.stringValue))
        let missing = try await s.request("GET", "/classes/TestObject/InvalidObjectID")
        #expect(missing.status == 404 && missing.code == 101)
        #expect(try await s.queryResults("TestObject", ["where": ["foo": "bar"], "limit": 1]).map { $0["foo"] } == ["bar"])
        #expect(try await s.queryResults("TestObject", ["where": ["foo": "baz"], "limit": 1]).isEmpty)
    }

    // spec: ParseQuery.spec.js: notEqualTo object
    // spec: ParseQuery.spec.js: skip
    // spec: ParseQuery.spec.js: skip doesn't affect count
    @Test func notEqualPointerSkipAndCount() async throws {
        let s = try TestServer()
        let items = try await s.createAll("TestObject", [[:], [:]])
        _ = try await s.createAll("Container", [["name": "c1", "item": pointer("TestObject", items[0])],
                                                ["name": "c2", "item": pointer("TestObject", items[1])]])
        #expect(try await s.names("Container", where: ["item": ["$ne": pointer("TestObject", items[0])]]) == ["c2"])
        #expect(try await s.queryResults("TestObject", ["skip": 1]).count == 1)
        #expect(try await s.queryResults("TestObject", ["skip": 3]).count == 0)
        for skip in [0, 1, 3] {
            let counted = try await s.query("TestObject", ["count": 1, "limit": 0, "skip": .number(Double(skip))])
            #expect(counted.json["count"] == 2, "skip \(skip)")
        }
    }

    // spec: ParseQuery.spec.js: order by ascending number
    // spec: ParseQuery.spec.js: order by descending number
    // spec: ParseQuery.spec.js: order by ascending number then descending string
    // spec: ParseQuery.spec.js: order by non-existing string
    // spec: ParseQuery.spec.js: order by descending number then ascending string
    // spec: ParseQuery.spec.js: order by descending number and string
    // spec: ParseQuery.spec.js: order by descending number and string, with space
    // spec: ParseQuery.spec.js: order by descending number and string, with array arg
    // spec: ParseQuery.spec.js: order by descending number and string, with multiple args
    // spec: ParseQuery.spec.js: can't order by password
    @Test func ordering() async throws {
        let s = try TestServer()
        _ = try await s.createAll("BoxedNumber", zip([3, 1, 3, 2], ["a", "b", "c", "d"]).map { ["number": .number(Double($0)), "string": .string($1)] })
        func order(_ order: String) async throws -> [String] {
            try await s.queryResults("BoxedNumber", ["order": .string(order)]).map { "\($0["number"]?.numberValue.map { Int($0) } ?? -1)\($0["string"]?.stringValue ?? "?")" }
        }
        #expect(try await order("number,-string") == ["1b", "2d", "3c", "3a"])
        #expect(try await order("foo").count == 4)
        #expect(try await order("-number,string") == ["3a", "3c", "2d", "1b"])
        #expect(try await order("-number,-string") == ["3c", "3a", "2d", "1b"])
        #expect(try await order("-number, -string") == ["3c", "3a", "2d", "1b"])
        let boxes = try TestServer()
        _ = try await boxes.createAll("BoxedNumber", [3, 1, 2].map { ["number": .number(Double($0))] })
        #expect(try await boxes.queryResults("BoxedNumber", ["order": "number"]).map { $0["number"] } == [1, 2, 3])
        #expect(try await boxes.queryResults("BoxedNumber", ["order": "-number"]).map { $0["number"] } == [3, 2, 1])
        expectParseError(try await boxes.query("BoxedNumber", ["order": "_password"]), 105)
    }

    // spec: ParseQuery.spec.js: can order on an object string field
    // spec: ParseQuery.spec.js: can order on an object string field (level 2)
    // spec: ParseQuery.spec.js: can order on an object number field
    // spec: ParseQuery.spec.js: can order on an object number field (level 2)
    @Test func orderingOnObjectFields() async throws {
        let s = try TestServer()
        _ = try await s.createAll("Test", [["sortField": ["value": "Z"]], ["sortField": ["value": "A"]], ["sortField": ["value": "M"]]])
        _ = try await s.createAll("Test2", [["sortField": ["value": ["field": "Z"]]], ["sortField": ["value": ["field": "A"]]],
                                            ["sortField": ["value": ["field": "M"]]]])
        _ = try await s.createAll("Test3", [["sortField": ["value": 10]], ["sortField": ["value": 1]], ["sortField": ["value": 5]]])
        _ = try await s.createAll("Test4", [["sortField": ["value": ["field": 10]]], ["sortField": ["value": ["field": 1]]],
                                            ["sortField": ["value": ["field": 5]]]])
        func first(_ className: String, _ order: String, _ path: [String]) async throws -> JSON? {
            let rows = try await s.queryResults(className, ["order": .string(order), "limit": 1])
            return path.reduce(rows.first) { $0?[$1] }
        }
        #expect(try await first("Test", "-sortField.value", ["sortField", "value"]) == "Z")
        #expect(try await first("Test", "sortField.value", ["sortField", "value"]) == "A")
        #expect(try await first("Test2", "-sortField.value.field", ["sortField", "value", "field"]) == "Z")
        #expect(try await first("Test2", "sortField.value.field", ["sortField", "value", "field"]) == "A")
        #expect(try await first("Test3", "-sortField.value", ["sortField", "value"]) == 10)
        #expect(try await first("Test3", "sortField.value", ["sortField", "value"]) == 1)
        #expect(try await first("Test4", "-sortField.value.field", ["sortField", "value", "field"]) == 10)
        #expect(try await first("Test4", "sortField.value.field", ["sortField", "value", "field"]) == 1)
    }

    // spec: ParseQuery.spec.js: order by _created_at
    // spec: ParseQuery.spec.js: order by createdAt
    // spec: ParseQuery.spec.js: order by _updated_at
    // spec: ParseQuery.spec.js: order by updatedAt
    @Test func orderingByBuiltInDates() async throws {
        let s = try TestServer()
        var ids: [Int: String] = [:]
        for number in [3, 1, 2] {
            ids[number] = try await s.create("BoxedNumber", ["number": .number(Double(number))])
            try await Task.sleep(for: .milliseconds(5))  // Distinct milliseconds.
        }
        func numbers(_ order: String) async throws -> [JSON?] {
            try await s.queryResults("BoxedNumber", ["order": .string(order)]).map { $0["number"] }
        }
        #expect(try await numbers("_created_at") == [3, 1, 2])
        #expect(try await numbers("-createdAt") == [2, 1, 3])
        try await s.update("BoxedNumber", ids[1]!, ["number": 4])
        #expect(try await numbers("_updated_at") == [3, 2, 4])
        #expect(try await numbers("-_updated_at") == [4, 2, 3])
        #expect(try await numbers("-updatedAt") == [4, 2, 3])
    }

    // spec: ParseQuery.spec.js: time equality
    // spec: ParseQuery.spec.js: time lessThan
    // spec: ParseQuery.spec.js: time createdAt
    @Test func timeQueries() async throws {
        let s = try TestServer()
        let start = ParseDate.now().millisecondsSince1970
        var created: [String] = []
        for offset in 1...3 {
            let time = ParseDate(millisecondsSince1970: start + Int64(offset) * 1000).iso
            let id = try await s.create("TestObject", ["name": .string("item\(offset)"), "time": date(time)])
            created.append(try await s.fetch("TestObject", id)["createdAt"]?.stringValue ?? "")
        }
        let second = ParseDate(millisecondsSince1970: start + 2000).iso, third = ParseDate(millisecondsSince1970: start + 3000).iso
        #expect(try await s.names("TestObject", where: ["time": date(second)]) == ["item2"])
        #expect(try await s.names("TestObject", where: ["time": ["$lt": date(third)]]) == ["item1", "item2"])
        #expect(try await s.names("TestObject", where: ["createdAt": ["$gte": date(created[0])]]) == ["item1", "item2", "item3"])
    }

    /// The JS SDK's `quote`: `\Q…\E`, with each `\E` inside spelled out.
    func quote(_ text: String) -> String { "\\Q" + text.replacingOccurrences(of: "\\E", with: "\\E\\\\E\\Q") + "\\E" }

    // spec: ParseQuery.spec.js: matches string
    // spec: ParseQuery.spec.js: matches regex
    // spec: ParseQuery.spec.js: case insensitive regex success
    // spec: ParseQuery.spec.js: regexes with invalid options fail
    // spec: ParseQuery.spec.js: Use a regex that requires all modifiers
    // spec: ParseQuery.spec.js: Regular expression constructor includes modifiers inline
    // spec: ParseQuery.spec.js: contains
    // spec: ParseQuery.spec.js: nested contains
    // spec: ParseQuery.spec.js: startsWith
    // spec: ParseQuery.spec.js: endsWith
    @Test func regexes() async throws {
        let s = try TestServer()
        _ = try await s.createAll("TestObject", [["name": "f", "myString": "football"], ["name": "s", "myString": "soccer"],
                                                 ["name": "p", "myString": "PArSe\nCom"], ["name": "b", "myString": "\n\nbuffer\n\nparse.COM"]])
        #expect(try await s.names("TestObject", where: ["myString": ["$regex": "^fo*\\wb[^o]l+$"]]) == ["f"])
        #expect(try await s.names("TestObject", where: ["myString": ["$regex": "FootBall", "$options": "i"]]) == ["f"])
        expectParseError(try await s.query("TestObject", ["where": ["myString": ["$regex": "FootBall", "$options": "some invalid option"]]]), 102)
        let commented = "parse # First fragment. We'll write this in one case but match insensitively\n"
            + ".com  # Second fragment. This can be separated by any character, including newline;"
            + "however, this comment must end with a newline to recognize it as a comment\n"
        // "b" (`…parse.COM`) matches too; the spec's database holds only "p".
        #expect(try await s.names("TestObject", where: ["myString": ["$regex": .string(commented), "$options": "mixs"]]) == ["b", "p"])
        #expect(try await s.names("TestObject", where: ["myString": ["$regex": "parse\\.com", "$options": "im"]]) == ["b"])

        let ascii = "\\E' !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~'"
        _ = try await s.createAll("Ascii", [["name": "zax", "myString": .string("zax" + ascii + "qub")], ["name": "start", "myString": .string("start" + ascii)],
                                            ["name": "end", "myString": .string(ascii + "end")], ["name": "only", "myString": .string(ascii)]])
        #expect(try await s.names("Ascii", where: ["myString": ["$regex": .string(quote(ascii))]]) == ["end", "only", "start", "zax"])
        #expect(try await s.names("Ascii", where: ["myString": ["$regex": .string("^" + quote(ascii))]]) == ["end", "only"])
        #expect(try await s.names("Ascii", where: ["myString": ["$regex": .string(quote(ascii) + "$")]]) == ["only", "start"])
        _ = try await s.createAll("Sender", [["name": "1", "sender": ["group": ["A", "B"]]], ["name": "2", "sender": ["group": ["A", "C"]]],
                                             ["name": "3", "sender": ["group": ["B", "C"]]]])
        #expect(try await s.names("Sender", where: ["sender.group": ["$regex": .string(quote("A"))]]) == ["1", "2"])
        // Anchored, an element must match on its own (not the array's JSON text).
        #expect(try await s.names("Sender", where: ["sender.group": ["$regex": "^C$"]]) == ["2", "3"])
    }

    // spec: ParseQuery.spec.js: exists
    // spec: ParseQuery.spec.js: doesNotExist
    // spec: ParseQuery.spec.js: exists relation
    // spec: ParseQuery.spec.js: doesNotExist relation
    @Test func existence() async throws {
        let s = try TestServer()
        let objects: [JSON] = (0...8).map { index -> JSON in
            let value = JSON.number(Double(index + 1))
            return index % 2 == 0 ? ["x": value] : ["y": value]
        }
        _ = try await s.createAll("TestObject", objects)
        let withX = try await s.queryResults("TestObject", ["where": ["x": ["$exists": true]]])
        #expect(withX.count == 5 && withX.allSatisfy { $0["x"] != nil })
        let withoutX = try await s.queryResults("TestObject", ["where": ["x": ["$exists": false]]])
        #expect(withoutX.count == 4 && withoutX.allSatisfy { $0["y"] != nil })
        var containers: [JSON] = []
        for index in 0...8 {
            if index % 2 == 0 {
                let item = try await s.create("Item", ["x": .number(Double(index))])
                containers.append(["x": pointer("Item", item)])
            } else {
                containers.append(["y": .number(Double(index))])
            }
        }
        _ = try await s.createAll("Container", containers)
        let pointing = try await s.queryResults("Container", ["where": ["x": ["$exists": true]]])
        #expect(pointing.count == 5 && pointing.allSatisfy { $0["x"]?["__type"] == "Pointer" })
        let notPointing = try await s.queryResults("Container", ["where": ["x": ["$exists": false]]])
        #expect(notPointing.count == 4 && notPointing.allSatisfy { $0["y"] != nil })
    }

    // spec: ParseQuery.spec.js: don't include by default
    // spec: ParseQuery.spec.js: include relation
    // spec: ParseQuery.spec.js: include relation array
    // spec: ParseQuery.spec.js: nested include
    // spec: ParseQuery.spec.js: include doesn't make dirty wrong
    @Test func includes() async throws {
        let s = try TestServer()
        let child = try await s.create("TestObject", ["foo": "bar"])
        _ = try await s.create("Container", ["child": pointer("TestObject", child)])
        let plain = try await s.queryResults("Container")
        #expect(plain.count == 1 && plain[0]["child"] == pointer("TestObject", child))
        for include: JSON in ["child", ["child"]] {
            let included = try await s.queryResults("Container", ["include": include])
            #expect(included.first?["child"]?["foo"] == "bar")
            #expect(included.first?["child"]?["objectId"]?.stringValue == child)
            #expect(included.first?["child"]?["__type"] == "Object" && included.first?["child"]?["className"] == "TestObject")
        }
        for index in 0..<5 {
            let childId = try await s.create("Child", ["x": .number(Double(index))])
            let parentId = try await s.create("Parent", ["y": .number(Double(index)), "child": pointer("Child", childId)])
            _ = try await s.create("Grandparent", ["z": .number(Double(index)), "parent": pointer("Parent", parentId)])
        }
        let grandparents = try await s.queryResults("Grandparent", ["include": ["parent.child"]])
        #expect(grandparents.count == 5)
        for object in grandparents {
            #expect(object["z"] != nil && object["z"] == object["parent"]?["y"] && object["z"] == object["parent"]?["child"]?["x"])
        }
    }

    // spec: ParseQuery.spec.js: properly includes array
    // spec: ParseQuery.spec.js: properly includes array of mixed objects
    // spec: ParseQuery.spec.js: properly nested array of mixed objects with bad ids
    // spec: ParseQuery.spec.js: properly fetches nested pointers
    @Test func includesOfPointerArrays() async throws {
        let s = try TestServer()
        let first = try await s.createAll("AnObject", (0..<5).map { ["key": .number(Double($0))] }).map { pointer("AnObject", $0) }
        let second = try await s.createAll("AnotherObject", (5..<10).map { ["key": .number(Double($0))] }).map { pointer("AnotherObject", $0) }
        func keys(_ className: String) async throws -> [Int] {
            let rows = try await s.queryResults(className, ["include": "objects"])
            return (rows.first?["objects"]?.arrayValue ?? []).compactMap { $0["key"]?.numberValue.map { Int($0) } }.sorted()
        }
        _ = try await s.create("AContainer", ["objects": .array(first)])
        #expect(try await keys("AContainer") == [0, 1, 2, 3, 4])
        _ = try await s.create("MixedContainer", ["objects": .array(first + second)])
        #expect(try await keys("MixedContainer") == Array(0..<10))
        // Every other pointer names a missing object: those are left out.
        let withBadIds = (first + second).enumerated().map { index, pointer -> JSON in
            index % 2 == 0 ? ["__type": "Pointer", "className": pointer["className"]!, "objectId": "randomThing"] : pointer
        }
        _ = try await s.create("BadContainer", ["objects": .array(withBadIds)])
        #expect(try await keys("BadContainer") == [1, 3, 5, 7, 9])

        let color = try await s.create("Color", ["hex": "#133733"])
        let circle = try await s.create("Circle", ["radius": 1337, "color": pointer("Color", color)])
        _ = try await s.create("ComplexFigure", ["consistsOf": [pointer("Circle", circle), pointer("Circle", "badId")]])
        let figures = try await s.queryResults("ComplexFigure", ["include": "consistsOf.color"])
        let parts = figures.first?["consistsOf"]?.arrayValue ?? []
        #expect(parts.count == 1 && parts.first?["color"]?["hex"] == "#133733")
    }

    // spec: ParseQuery.spec.js: matches query
    // spec: ParseQuery.spec.js: select query
    // spec: ParseQuery.spec.js: $select inside $or
    // spec: ParseQuery.spec.js: dontSelect query
    // spec: ParseQuery.spec.js: multiple dontSelect query
    @Test func subqueries() async throws {
        let s = try TestServer()
        for index in 0..<10 {
            let child = try await s.create("ChildObject", ["x": .number(Double(index))])
            _ = try await s.create("ParentObject", ["x": .number(Double(10 + index)), "child": pointer("ChildObject", child)])
        }
        let bigChildren: JSON = ["className": "ChildObject", "where": ["x": ["$gt": 5]]]
        let matching = try await s.queryResults("ParentObject", ["where": ["child": ["$inQuery": bigChildren]]])
        #expect(matching.count == 4 && matching.allSatisfy { ($0["x"]?.numberValue ?? 0) > 15 })
        let notMatching = try await s.queryResults("ParentObject", ["where": ["child": ["$notInQuery": bigChildren]]])
        #expect(notMatching.count == 6 && notMatching.allSatisfy { (10...15).contains($0["x"]?.numberValue ?? 0) })

        _ = try await s.createAll("Restaurant", [["ratings": 7, "location": "Djibouti2"], ["ratings": 5, "location": "Djibouti"],
                                                 ["ratings": 3, "location": "Ouagadougou"]])
        _ = try await s.createAll("Person", [["name": "Bob2", "hometown": "Djibouti2"], ["name": "Bob", "hometown": "Djibouti"],
                                             ["name": "Tom", "hometown": "Ouagadougou"], ["name": "Billy", "hometown": "Detroit"]])
        func restaurants(_ constraint: JSON) -> JSON { ["query": ["className": "Restaurant", "where": constraint], "key": "location"] }
        let rated = restaurants(["ratings": ["$gt": 4], "location": ["$ne": "Djibouti2"]])
        #expect(try await s.names("Person", where: ["hometown": ["$select": rated]]) == ["Bob"])
        #expect(try await s.names("Person", where: ["$or": [["hometown": ["$select": rated]], ["name": "Tom"]]]) == ["Bob", "Tom"])
        #expect(try await s.names("Person", where: ["hometown": ["$dontSelect": rated]]) == ["Billy", "Bob2", "Tom"])
        let either: JSON = ["className": "Person", "where": ["$or": [["hometown": ["$select": restaurants(["ratings": ["$gt": 6]])]],
                                                                    ["hometown": ["$select": restaurants(["ratings": ["$lt": 4]])]]]]]
        #expect(try await s.names("Person", where: ["objectId": ["$dontSelect": ["query": either, "key": "objectId"]]]) == ["Billy", "Bob"])
    }

    // spec: ParseQuery.spec.js: $nor valid query
    // spec: ParseQuery.spec.js: $nor invalid query - empty array
    // spec: ParseQuery.spec.js: $nor invalid query - wrong type
    @Test func nor() async throws {
        let s = try TestServer()
        _ = try await s.createAll("TestObject", (0..<10).map { ["rating": .number(Double($0))] })
        let rows = try await s.queryResults("TestObject", ["where": ["$nor": [["rating": ["$gt": 5]], ["rating": ["$lte": 3]]]]], master: true)
        #expect(rows.compactMap { $0["rating"]?.numberValue }.sorted() == [4, 5])
        expectParseError(try await s.query("TestObject", ["where": ["$nor": []]], master: true), 102)
        expectParseError(try await s.query("TestObject", ["where": ["$nor": 1337]], master: true), 102)
    }

    // spec: ParseQuery.spec.js: dontSelect query without conditions
    // spec: ParseQuery.spec.js: equalTo on same column as $dontSelect should not break $dontSelect functionality (#3678)
    @Test func dontSelectWithoutConditionsAndWithEquality() async throws {
        let s = try TestServer()
        _ = try await s.createAll("Restaurant", [["location": "Djibouti"], ["location": "Ouagadougou"]])
        _ = try await s.createAll("Person", [["name": "Bob", "hometown": "Djibouti"], ["name": "Tom", "hometown": "Yoloblahblahblah"],
                                             ["name": "Billy", "hometown": "Ouagadougou"]])
        #expect(try await s.names("Person", where: ["hometown": ["$dontSelect": ["query": ["className": "Restaurant"], "key": "location"]]]) == ["Tom"])
        let authors = try await s.createAll("Author", [["name": "Julius"], ["name": "Bob"]])
        let (postAuthor, requestUser) = (pointer("Author", authors[0]), pointer("Author", authors[1]))
        _ = try await s.createAll("Post", [["author": postAuthor, "title": "Lorem ipsum"], ["author": requestUser, "title": "Kafka"],
                                           ["author": requestUser, "title": "Brown fox"]])
        _ = try await s.create("Blocked", ["blockedBy": postAuthor, "blockedUser": requestUser])
        let banList: JSON = ["query": ["className": "Blocked", "where": ["blockedUser": requestUser]], "key": "blockedBy"]
        #expect(try await s.names("Post", where: ["author": ["$eq": postAuthor, "$dontSelect": banList]], key: "title") == [])
        #expect(try await s.names("Post", where: ["author": ["$dontSelect": banList]], key: "title") == ["Brown fox", "Kafka"])
    }

    // spec: ParseQuery.spec.js: include user
    @Test func includeUser() async throws {
        let s = try TestServer()
        let bob = try await s.request("POST", "/users", json: ["username": "bob", "password": "password", "age": 21])
        let userId = bob.json["objectId"]?.stringValue ?? "", token = bob.json["sessionToken"]?.stringValue
        let object = try await s.create("TestObject", ["owner": pointer("_User", userId)], token: token)
        let got = try await s.request("GET", "/classes/TestObject/\(object)", headers: ["X-Parse-Session-Token": token ?? ""],
                                      query: ["include": "owner"])
        #expect(got.json["objectId"]?.stringValue == object)
        #expect(got.json["owner"]?["className"] == "_User" && got.json["owner"]?["age"] == 21)
    }

    // spec: ParseQuery.spec.js: or queries
    // spec: ParseQuery.spec.js: or complex queries
    @Test func orQueries() async throws {
        let s = try TestServer()
        _ = try await s.createAll("BoxedNumber", (0..<10).map { ["x": .number(Double($0))] })
        let either = try await s.queryResults("BoxedNumber", ["where": ["$or": [["x": ["$lt": 2]], ["x": ["$gt": 5]]]]])
        #expect(either.count == 6 && either.allSatisfy { ($0["x"]?.numberValue).map { $0 < 2 || $0 > 5 } == true })
        for x in 0..<10 {
            let child = try await s.create("Child", ["x": .number(Double(x))])
            _ = try await s.create("Parent", ["y": .number(Double(x)), "child": pointer("Child", child)])
        }
        let complex: JSON = ["$or": [["child": ["$inQuery": ["className": "Child", "where": ["x": 4]]]], ["y": ["$lt": 2]]]]
        #expect(try await count(s, "Parent", complex) == 3)
    }

    /// A query whose URL parameters are given as they are sent (Node's querystring repeats a key per array element).
    func rawQuery(_ s: TestServer, _ className: String, _ items: [(String, String)]) async throws -> JSON? {
        var allowed = CharacterSet.urlQueryAllowed
        allowed.remove(charactersIn: "&=+?/")
        let query = items.map { "\($0)=\($1.addingPercentEncoding(withAllowedCharacters: allowed)!)" }.joined(separator: "&")
        let response = try await s.request("GET", "/classes/\(className)?\(query)", master: true)
        #expect(response.status == 200, "\(query): \(response.text)")
        return response.json["results"]?.arrayValue?.first
    }

    /// The fields of `row` other than the built-in ones.
    func ownKeys(_ row: JSON?) -> Set<String> { keySet(row).subtracting(["objectId", "createdAt", "updatedAt"]) }

    // spec: ParseQuery.spec.js: select keys query JS SDK
    // spec: ParseQuery.spec.js: select keys (arrays)
    // spec: ParseQuery.spec.js: select keys (strings)
    // spec: ParseQuery.spec.js: exclude keys query JS SDK
    // spec: ParseQuery.spec.js: exclude keys (arrays)
    // spec: ParseQuery.spec.js: exclude keys (strings)
    // spec: ParseQuery.spec.js: exclude keys with select same key
    // spec: ParseQuery.spec.js: exclude keys with select different key
    @Test func selectAndExcludeKeys() async throws {
        let s = try TestServer()
        let id = try await s.create("TestObject", ["foo": "baz", "bar": 1, "qux": 2, "hello": "world"])
        let only = ["where", #"{"objectId":"\#(id)"}"#]
        func fields(_ items: [(String, String)]) async throws -> Set<String> {
            let row = try await rawQuery(s, "TestObject", [(only[0], only[1])] + items)
            #expect(row?["objectId"]?.stringValue == id && row?["createdAt"] != nil && row?["updatedAt"] != nil)
            return ownKeys(row)
        }
        // The JS SDK's select(...) and exclude(...) send comma-separated lists.
        #expect(try await fields([("keys", "foo")]) == ["foo"])
        #expect(try await fields([("keys", "")]) == [])
        #expect(try await fields([("keys", "foo,bar")]) == ["foo", "bar"])
        #expect(try await fields([("keys", "foo,bar,qux")]) == ["foo", "bar", "qux"])
        #expect(try await fields([("excludeKeys", "foo")]) == ["bar", "qux", "hello"])
        #expect(try await fields([("excludeKeys", "")]) == ["foo", "bar", "qux", "hello"])
        #expect(try await fields([("excludeKeys", "foo,bar,qux")]) == ["hello"])
        // Arrays, as Node's querystring sends them: one parameter per element, none for an empty array.
        #expect(try await fields([("keys", "hello")]) == ["hello"])
        #expect(try await fields([("keys", "foo"), ("keys", "hello")]) == ["foo", "hello"])
        #expect(try await fields([("keys", "foo"), ("keys", "bar"), ("keys", "hello")]) == ["foo", "bar", "hello"])
        #expect(try await fields([]) == ["foo", "bar", "qux", "hello"])
        #expect(try await fields([("excludeKeys", "foo"), ("excludeKeys", "hello")]) == ["bar", "qux"])
        // JSON text.
        #expect(try await fields([("keys", #"["foo", "hello"]"#)]) == ["foo", "hello"])
        #expect(try await fields([("keys", #"["foo", "bar", "hello"]"#)]) == ["foo", "bar", "hello"])
        #expect(try await fields([("excludeKeys", #"["hello"]"#)]) == ["foo", "bar", "qux"])
        #expect(try await fields([("excludeKeys", #"["foo", "hello"]"#)]) == ["bar", "qux"])
        // Both.
        #expect(try await fields([("keys", "foo"), ("excludeKeys", "foo")]) == [])
        #expect(try await fields([("keys", "foo,hello"), ("excludeKeys", "foo")]) == ["hello"])
    }

    // spec: ParseQuery.spec.js: exclude keys with include same key
    // spec: ParseQuery.spec.js: exclude keys with include different key
    // spec: ParseQuery.spec.js: exclude keys with includeAll
    @Test func excludeKeysWithInclude() async throws {
        let s = try TestServer()
        let child = try await s.create("TestObject", ["name": "child"])
        let id = try await s.create("TestObject", ["child": pointer("TestObject", child), "child1": pointer("TestObject", child),
                                                   "child2": pointer("TestObject", child), "hello": "world"])
        let only = ("where", #"{"objectId":"\#(id)"}"#)
        let same = try await rawQuery(s, "TestObject", [only, ("include", "child"), ("excludeKeys", "child")])
        #expect(same?["child"] == nil && same?["hello"] == "world")
        let different = try await rawQuery(s, "TestObject", [only, ("include", "child1,child2"), ("excludeKeys", "child1")])
        #expect(different?["child1"] == nil && different?["child2"]?["objectId"]?.stringValue == child && different?["child2"]?["name"] == "child")
        let all = try await rawQuery(s, "TestObject", [only, ("includeAll", "true"), ("excludeKeys", "child1")])
        #expect(all?["child1"] == nil && all?["child2"]?["objectId"]?.stringValue == child && all?["hello"] == "world")
    }

    // spec: ParseQuery.spec.js: notEqual with array of pointers
    // spec: ParseQuery.spec.js: querying for null value
    // spec: ParseQuery.spec.js: query within dictionary
    // spec: ParseQuery.spec.js: query match on array with single object
    // spec: ParseQuery.spec.js: query match on array with multiple objects
    // spec: ParseQuery.spec.js: query should not match on array when searching for null
    @Test func arraysOfPointersNullsAndDictionaries() async throws {
        let s = try TestServer()
        let children = try await s.createAll("Child", [[:], [:]])
        let parents = try await s.createAll("Parent", children.map { ["child": [pointer("Child", $0)]] })
        #expect(try await s.queryResults("Parent", ["where": ["child": ["$ne": pointer("Child", children[0])]]]).map { $0["objectId"]?.stringValue } == [parents[1]])

        _ = try await s.create("TestObject", ["name": "null", "aNull": .null])
        let nulls = try await s.queryResults("TestObject", ["where": ["aNull": .null, "name": "null"]])
        #expect(nulls.count == 1 && nulls.first?["aNull"] == .null)
        _ = try await s.createAll("TestObject", [["aDict": ["x": 1, "y": 2]], ["aDict": ["x": 2, "y": 3]]])
        #expect(try await count(s, "TestObject", ["aDict.x": 1]) == 1)

        let target = pointer("TestObject", "abc123")
        _ = try await s.createAll("Holder", [["name": "one", "someObjs": [target]],
                                             ["name": "two", "someObjs": [pointer("TestObject", "abc"), pointer("TestObject", "123")]]])
        #expect(try await s.names("Holder", where: ["someObjs": target]) == ["one"])
        #expect(try await s.names("Holder", where: ["someObjs": pointer("TestObject", "abc")]) == ["two"])
        _ = try await s.create("Holder", ["name": "three", "someKey": "someValue", "someObjs": [pointer("TestObject", "123")]])
        #expect(try await s.names("Holder", where: ["someKey": "someValue", "someObjs": .null]) == [])
    }

    // spec: ParseQuery.spec.js: supports include on the wrong key type (#2262)
    @Test func includeOnTheWrongKeyType() async throws {
        let s = try TestServer()
        let child = try await s.create("TestChildObject", ["hello": "world"])
        _ = try await s.create("TestObject", ["foo": "bar", "child": pointer("TestChildObject", child)])
        let rows = try await s.queryResults("TestObject", ["include": "child,child.parent,createdAt,createdAt.createdAt"])
        #expect(rows.count == 1 && rows.first?["child"]?["hello"] == "world" && isParseISODate(rows.first?["createdAt"]?.stringValue))
    }

    // spec: ParseQuery.spec.js: should properly interpret a query v1
    // spec: ParseQuery.spec.js: should properly interpret a query v2
    @Test func queriesThatMustNotFail() async throws {
        let s = try TestServer()
        let v1 = try await s.query("C1", ["where": ["A1": ["$select": ["query": ["className": "C1", "where": [:]], "key": "A2"]]],
                                          "include": "A3,A2"])
        #expect(v1.status == 200, "\(v1.text)")
        let user = try await s.signUpAccount("foo", password: "bar")
        let me = pointer("_User", user.id)
        let matchOr: JSON = ["className": "MatchRelationshipActivityResponse",
                             "where": ["$or": [["userA": me, "userAResponse": 1], ["userB": me, "userBResponse": 1]]]]
        let orQuery: JSON = ["className": "_User", "where": ["$or": [
            ["objectId": .string(user.id)],
            ["$relatedTo": ["object": me, "key": "blockedUsers"]],
            ["objectId": ["$select": ["query": matchOr, "key": "userAObjectId"]]],
            ["objectId": ["$select": ["query": matchOr, "key": "userBObjectId"]]],
        ]]]
        let v2 = try await s.query("_User", ["where": ["objectId": ["$notInQuery": orQuery]]], token: user.token)
        #expect(v2.status == 200, "\(v2.text)")
    }

    // spec: ParseQuery.spec.js: should match a key in an array (#3195)
    // spec: ParseQuery.spec.js: should find objects with array of pointers
    @Test func keysAndSubqueriesOverArraysOfPointers() async throws {
        let s = try TestServer()
        let author = try await s.create("Author", [:])
        let post = try await s.create("Post", ["author": pointer("Author", author)])
        _ = try await s.create("Group", ["members": [pointer("Author", author)]])
        let matched = try await s.queryResults("Post", ["where": ["author": ["$select": ["query": ["className": "Group"], "key": "members"]]]])
        #expect(matched.map { $0["objectId"]?.stringValue } == [post])

        let contained = try await s.createAll("ContainedObject", (0..<5).map { ["index": .number(Double($0))] }).map { pointer("ContainedObject", $0) }
        _ = try await s.createAll("Container", [["objects": .array(contained)], ["objects": [contained[2]]]])
        let inQuery: JSON = ["className": "ContainedObject", "where": ["index": ["$gte": 1]]]
        #expect(try await count(s, "Container", ["objects": ["$inQuery": inQuery]]) == 2)
    }

    // spec: ParseQuery.spec.js: query with two OR subqueries (regression test #1259)
    // spec: ParseQuery.spec.js: objectId containedIn with multiple large array
    // spec: ParseQuery.spec.js: containedIn with pointers should work with string array
    // spec: ParseQuery.spec.js: containedIn with pointers should work with string array, with many objects
    @Test func relationOrsLongListsAndIdsForPointers() async throws {
        let s = try TestServer()
        let related = try await s.create("Class2", [:])
        let owner = try await s.create("Class1", ["relation": ["__op": "AddRelation", "objects": [pointer("Class2", related)]]])
        let relatedTo: JSON = ["object": pointer("Class1", owner), "key": "relation"]
        let both = try await s.queryResults("Class2", ["where": ["$or": [["$relatedTo": relatedTo, "nonExistantKey1": ["$exists": false]],
                                                                        ["$relatedTo": relatedTo, "nonExistantKey2": ["$exists": false]]]]])
        #expect(both.map { $0["objectId"]?.stringValue } == [related])

        let mine = try await s.create("MyClass", [:])
        let longList = JSON.array((0..<130).map { .string(String($0)) } + [.string(mine)])
        #expect(try await count(s, "MyClass", ["objectId": ["$in": longList]]) == 1)

        let children = try await s.createAll("Child", (0..<10).map { _ in [:] })
        _ = try await s.createAll("Holder", children.map { ["child": pointer("Child", $0)] } + (0..<10).map { _ in [:] })
        #expect(try await count(s, "Holder", ["child": ["$in": [.string(children[0])]]]) == 1)
        #expect(try await count(s, "Holder", ["child": ["$in": .array(children[0..<5].map { .string($0) })]]) == 5)
    }

    /// Foobar → barBaz (Barbaz) → bazoo (Bazoo), and group (Tang); answers Foobar's id.
    func foobarChain(_ s: TestServer) async throws -> String {
        let bazoo = try await s.create("Bazoo", ["some": "thing", "otherSome": "value"])
        let barBaz = try await s.create("Barbaz", ["key": "value", "otherKey": "value", "bazoo": pointer("Bazoo", bazoo)])
        let tang = try await s.create("Tang", ["clan": "wu"])
        return try await s.create("Foobar", ["foo": "bar", "fizz": "buzz", "barBaz": pointer("Barbaz", barBaz), "group": pointer("Tang", tang)])
    }

    // spec: ParseQuery.spec.js: include for specific object
    // spec: ParseQuery.spec.js: select keys for specific object
    // spec: ParseQuery.spec.js: select nested keys (issue #1567)
    // spec: ParseQuery.spec.js: select nested keys 2 level (issue #1567)
    // spec: ParseQuery.spec.js: exclude nested keys
    // spec: ParseQuery.spec.js: exclude nested keys 2 level
    // spec: ParseQuery.spec.js: select nested keys 2 level includeAll
    // spec: ParseQuery.spec.js: select nested keys 2 level without include (issue #3185)
    @Test func nestedKeysOnGets() async throws {
        let s = try TestServer()
        let child = try await s.create("Child", ["foo": "bar"])
        let parent = try await s.create("Parent", ["child": pointer("Child", child)])
        let included = try await s.request("GET", "/classes/Parent/\(parent)", query: ["include": "child"])
        #expect(included.json["child"]?["foo"] == "bar")

        let id = try await foobarChain(s)
        func get(_ query: [String: String]) async throws -> JSON {
            let response = try await s.request("GET", "/classes/Foobar/\(id)", master: true, query: query)
            #expect(response.status == 200, "\(response.text)")
            return response.json
        }
        let fizz = try await get(["keys": "fizz"])
        #expect(fizz["fizz"] == "buzz" && fizz["foo"] == nil)
        let nested = try await get(["keys": "fizz,barBaz.key"])
        #expect(nested["fizz"] == "buzz" && nested["foo"] == nil)
        #expect(nested["barBaz"]?["key"] == "value" && nested["barBaz"]?["otherKey"] == nil)
        let twoLevels = try await get(["keys": "fizz,barBaz.key,barBaz.bazoo.some"])
        #expect(twoLevels["fizz"] == "buzz" && twoLevels["foo"] == nil)
        #expect(twoLevels["barBaz"]?["key"] == "value" && twoLevels["barBaz"]?["otherKey"] == nil)
        #expect(twoLevels["barBaz"]?["bazoo"]?["some"] == "thing" && twoLevels["barBaz"]?["bazoo"]?["otherSome"] == nil)
        let excluded = try await get(["excludeKeys": "foo,barBaz.otherKey"])
        #expect(excluded["fizz"] == "buzz" && excluded["foo"] == nil)
        #expect(excluded["barBaz"]?["key"] == "value" && excluded["barBaz"]?["otherKey"] == nil)
        let excludedTwoLevels = try await get(["excludeKeys": "foo,barBaz.otherKey,barBaz.bazoo.otherSome"])
        #expect(excludedTwoLevels["fizz"] == "buzz" && excludedTwoLevels["foo"] == nil)
        #expect(excludedTwoLevels["barBaz"]?["key"] == "value" && excludedTwoLevels["barBaz"]?["otherKey"] == nil)
        #expect(excludedTwoLevels["barBaz"]?["bazoo"]?["some"] == "thing" && excludedTwoLevels["barBaz"]?["bazoo"]?["otherSome"] == nil)

        let all = try await rawQuery(s, "Foobar", [("where", #"{"objectId":"\#(id)"}"#), ("includeAll", "true"),
                                                   ("keys", "fizz,barBaz.key,barBaz.bazoo.some")])
        #expect(all?["group"]?["clan"] == "wu" && all?["foo"] == nil && all?["fizz"] == "buzz")
        #expect(all?["barBaz"]?["key"] == "value" && all?["barBaz"]?["otherKey"] == nil)
        #expect(all?["barBaz"]?["bazoo"]?["some"] == "thing" && all?["barBaz"]?["bazoo"]?["otherSome"] == nil)
    }

    // spec: ParseQuery.spec.js: include with *
    // spec: ParseQuery.spec.js: include with ["*"]
    // spec: ParseQuery.spec.js: include with * overrides
    // spec: ParseQuery.spec.js: include with ["*"] overrides
    // spec: ParseQuery.spec.js: includeAll
    // spec: ParseQuery.spec.js: include pointer and pointer array
    // spec: ParseQuery.spec.js: include pointer and pointer array (keys switched)
    // spec: ParseQuery.spec.js: includeAll pointer and pointer array
    @Test func includeEverything() async throws {
        let s = try TestServer()
        let children = try await s.createAll("TestObject", [["foo": "bar", "name": "ac"], ["foo": "baz", "name": "flo"], ["foo": "bad", "name": "mo"]])
        let parent = try await s.create("Container", ["child1": pointer("TestObject", children[0]), "child2": pointer("TestObject", children[1]),
                                                      "child3": pointer("TestObject", children[2])])
        for option in [("include", "*"), ("include", #"["*"]"#), ("include", "child2,*"), ("include", #"["child2","*"]"#), ("includeAll", "true")] {
            let row = try await rawQuery(s, "Container", [("where", #"{"objectId":"\#(parent)"}"#), option])
            #expect(row?["child1"]?["foo"] == "bar" && row?["child2"]?["foo"] == "baz" && row?["child3"]?["foo"] == "bad", "\(option)")
            #expect(row?["child1"]?["name"] == "ac" && row?["child2"]?["name"] == "flo" && row?["child3"]?["name"] == "mo", "\(option)")
        }
        let holder = try await s.create("Holder", ["child": pointer("TestObject", children[0]), "child2": [pointer("TestObject", children[1])]])
        for option in [("include", "child,child2"), ("include", "child2,child"), ("includeAll", "true")] {
            let row = try await rawQuery(s, "Holder", [("where", #"{"objectId":"\#(holder)"}"#), option])
            #expect(row?["child"]?["foo"] == "bar", "\(option)")
            #expect(row?["child2"]?.arrayValue?.map { $0["name"] } == ["flo"], "\(option)")
        }
    }

    // spec: ParseQuery.spec.js: properly handles nested ors
    // spec: ParseQuery.spec.js: should not depend on parameter order #3169
    @Test func nestedOrsAndPointerKeyOrder() async throws {
        let s = try TestServer()
        _ = try await s.createAll("Object", (0..<4).map { ["x": .number(Double($0))] })
        #expect(try await count(s, "Object", ["$or": [["$or": [["x": 0], ["x": 1]]], ["x": 2]]]) == 3)
        let scores = try await s.createAll("Score", [["scoreId": "1"], ["scoreId": "2"]])
        _ = try await s.createAll("Game", [["gameId": "1", "score": [pointer("Score", scores[0])]], ["gameId": "2", "score": [pointer("Score", scores[1])]]])
        // The SDK sends the pointer's keys in any order.
        let body: JSON = ["where": .object(["score": .object(["objectId": .string(scores[0]), "className": "Score", "__type": "Pointer"])]), "_method": "GET"]
        let response = try await s.request("POST", "/classes/Game", json: body)
        #expect(response.json["results"]?.arrayValue?.map { $0["gameId"] } == ["1"])
    }

    // spec: ParseQuery.spec.js: should not interfere with has when using select on field with undefined value #3999
    @Test func selectingAnIncludedKeyThatIsMissing() async throws {
        let s = try TestServer()
        let other = try await s.create("OtherObject", ["otherField": 1])
        _ = try await s.createAll("TestObject", [["testPointerField": pointer("OtherObject", other), "shouldBe": true], ["shouldBe": false]])
        let rows = try await s.queryResults("TestObject", ["include": "testPointerField", "keys": "testPointerField,testPointerField.otherField,shouldBe"])
        #expect(rows.count == 2)
        for row in rows { #expect((row["testPointerField"] != nil) == (row["shouldBe"] == true)) }
    }

    // spec: ParseQuery.spec.js: should handle relative times correctly
    // spec: ParseQuery.spec.js: should error on invalid relative time
    // spec: ParseQuery.spec.js: should error when using $relativeTime on non-Date field
    @Test func relativeTimes() async throws {
        let s = try TestServer()
        let day: Int64 = 24 * 60 * 60 * 1000
        let now = ParseDate.now().millisecondsSince1970
        _ = try await s.createAll("MyCustomObject", [
            ["name": "obj1", "ttl": date(ParseDate(millisecondsSince1970: now + 2 * day).iso), "nonDateField": "abcd"],
            ["name": "obj2", "ttl": date(ParseDate(millisecondsSince1970: now - 2 * day).iso)],
        ])
        func relative(_ constraint: JSON) async throws -> Int { try await count(s, "MyCustomObject", ["ttl": constraint], master: true) }
        #expect(try await relative(["$gt": ["$relativeTime": "in 1 day"]]) == 1)
        #expect(try await relative(["$gt": ["$relativeTime": "1 day ago"]]) == 1)
        #expect(try await relative(["$lt": ["$relativeTime": "5 days ago"]]) == 0)
        #expect(try await relative(["$gt": ["$relativeTime": "3 days ago"]]) == 2)
        #expect(try await relative(["$gt": ["$relativeTime": "now"]]) == 1)
        #expect(try await relative(["$gt": ["$relativeTime": "now"], "$lt": ["$relativeTime": "in 1 day"]]) == 0)
        #expect(try await relative(["$gt": ["$relativeTime": "1 year 3 weeks ago"]]) == 2)
        expectParseError(try await s.query("MyCustomObject", ["where": ["ttl": ["$gt": ["$relativeTime": "-12 bananas ago"]]]], master: true), 107)
        expectParseError(try await s.query("MyCustomObject", ["where": ["nonDateField": ["$gt": ["$relativeTime": "1 day ago"]]]], master: true), 107)
    }

    // spec: ParseQuery.spec.js: should match complex structure with dot notation when using matchesKeyInQuery
    // spec: ParseQuery.spec.js: should match complex structure with dot notation when using doesNotMatchKeyInQuery
    // spec: ParseQuery.spec.js: should not throw error with undefined dot notation when using matchesKeyInQuery
    // spec: ParseQuery.spec.js: should not throw error with undefined dot notation when using doesNotMatchKeyInQuery
    @Test func selectingThroughDotNotation() async throws {
        let s = try TestServer()
        let groups = try await s.createAll("Group", [["name": "Group #1"], ["name": "Group #2"]])
        _ = try await s.createAll("Role", [["name": "Role #1", "type": "x", "belongsTo": pointer("Group", groups[0])],
                                           ["name": "Role #2", "type": "y", "belongsTo": pointer("Group", groups[0])],
                                           ["name": "Role #3", "type": "x"]])
        let rolesOfTypeX: JSON = ["query": ["className": "Role", "where": ["type": "x"]], "key": "belongsTo.objectId"]
        #expect(try await s.names("Group", where: ["objectId": ["$select": rolesOfTypeX]]) == ["Group #1"])
        #expect(try await s.names("Group", where: ["objectId": ["$dontSelect": rolesOfTypeX]]) == ["Group #2"])
    }

    // spec: ParseQuery.spec.js: withJSON supports geoWithin.centerSphere
    // spec: ParseQuery.spec.js: withJSON with geoWithin.centerSphere fails without parameters
    // spec: ParseQuery.spec.js: withJSON with geoWithin.centerSphere fails with invalid distance
    // spec: ParseQuery.spec.js: withJSON with geoWithin.centerSphere fails with invalid coordinate
    // spec: ParseQuery.spec.js: withJSON with geoWithin.centerSphere fails with invalid geo point
    @Test func centerSphere() async throws {
        let s = try TestServer()
        _ = try await s.createAll("TestObject", [["location": geoPoint(1.5, 1.5)], ["location": geoPoint(10, 10)], ["location": geoPoint(20, 20)]])
        let radius = JSON.number((1569 + 1) / 6371.0)
        #expect(try await count(s, "TestObject", ["location": ["$geoWithin": ["$centerSphere": [geoPoint(0, 0), radius]]]]) == 2)
        #expect(try await count(s, "TestObject", ["location": ["$geoWithin": ["$centerSphere": [[0, 0], radius]]]]) == 2)
        expectParseError(try await s.query("TestObject", ["where": ["location": ["$geoWithin": ["$centerSphere": []]]]]), 107)
        expectParseError(try await s.query("TestObject", ["where": ["location": ["$geoWithin": ["$centerSphere": [[0, 0], "invalid_distance"]]]]]), 107)
        let badCoordinate = try await s.query("TestObject", ["where": ["location": ["$geoWithin": ["$centerSphere": [[-190, -190], 1]]]]])
        #expect(badCoordinate.status == 400, "\(badCoordinate.text)")
        let badPoint = try await s.query("TestObject", ["where": ["location": ["$geoWithin": ["$centerSphere": [["longitude": 0, "dummytude": 0], 1]]]]])
        #expect(badPoint.status == 400, "\(badPoint.text)")
    }

    // spec: ParseQuery.spec.js: can add new config to existing config
    // spec: ParseQuery.spec.js: can update numeric array
    // spec: ParseQuery.spec.js: can update mixed array
    // spec: ParseQuery.spec.js: can query regex with unicode
    // spec: ParseQuery.spec.js: can update mixed array more than 100 elements
    @Test func updatesSeenThroughQueries() async throws {
        let s = try TestServer()
        let file: JSON = ["__type": "File", "name": "name", "url": "http://url"]
        #expect(try await s.request("PUT", "/config", json: ["params": ["files": [file]]], master: true).status == 200)
        #expect(try await s.request("PUT", "/config", json: ["params": ["newConfig": "good"]], master: true).status == 200)
        let config = try await s.request("GET", "/config")
        #expect(config.json["params"]?["files"] == [file] && config.json["params"]?["newConfig"] == "good")

        for (first, second) in [([0, 1.1, 1, -2, 3], [0, 1.1, 1, -2, 3, 4]) as (JSON, JSON),
                                ([0, 1.1, "hello world", ["foo": "bar"]], [0, 1, ["foo": "bar"], [], [1, 2, "bar"]])] {
            let id = try await s.create("TestObject", ["array": first])
            #expect(try await s.queryResults("TestObject", ["where": ["objectId": .string(id)]]).first?["array"] == first)
            try await s.update("TestObject", id, ["array": second])
            #expect(try await s.queryResults("TestObject", ["where": ["objectId": .string(id)]]).first?["array"] == second)
        }
        var long: [JSON] = [0, 1.1, "hello world", ["foo": "bar"], .null]
        let longId = try await s.create("TestObject", ["array": .array(long)])
        #expect(try await s.fetch("TestObject", longId)["array"]?.arrayValue?.count == 5)
        long += (0..<100).map { .number(Double($0)) }
        try await s.update("TestObject", longId, ["array": .array(long)])
        #expect(try await s.queryResults("TestObject", ["where": ["objectId": .string(longId)]]).first?["array"]?.arrayValue?.count == 105)

        _ = try await s.create("Unicode", ["field": "autoöo"])
        let found = try await s.queryResults("Unicode", ["where": ["field": ["$regex": .string(quote("autoöo"))]]])
        #expect(found.map { $0["field"] } == ["autoöo"])
    }
}
