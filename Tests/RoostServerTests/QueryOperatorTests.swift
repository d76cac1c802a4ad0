import Foundation
import RoostCore
import Testing

/// Every `where` operator end to end, with the results Parse (MongoDB) gives.
@Suite struct QueryOperatorTests {
    /// Six `Op` objects (a, b, c, d, e, q) and the two `Person`s they point to.
    struct Fixture {
        let server: TestServer
        let ids: [String: String]
        let p1: JSON
        let p2: JSON
    }

    func fixture() async throws -> Fixture {
        let server = try TestServer()
        let people = try await server.createAll("Person", [["name": "p1"], ["name": "p2"]])
        let p1 = pointer("Person", people[0]), p2 = pointer("Person", people[1])
        let names = ["a", "b", "c", "d", "e", "q"]
        let ids = try await server.createAll("Op", [
            ["name": "a", "n": 1, "s": "apple", "d": date("2024-01-01T00:00:00.000Z"), "tags": ["x", "y"], "owner": p1,
             "address": ["city": "Paris", "zip": "75001"], "flag": true, "members": [p1, p2]],
            ["name": "b", "n": 2, "s": "banana", "d": date("2024-06-01T00:00:00.000Z"), "tags": ["y"], "owner": p2,
             "address": ["city": "Berlin"], "flag": false, "members": [p1]],
            ["name": "c", "n": 3, "s": "cherry", "d": date("2025-01-01T00:00:00.000Z"), "tags": [], "address": ["city": "paris"],
             "members": []],
            ["name": "d", "n": 10, "s": "Date", "tags": ["x", "y", "z"], "owner": p1, "text": "line1\nline2"],
            ["name": "e"],
            ["name": "q", "s": "a.b(c)+d"],
        ])
        return Fixture(server: server, ids: Dictionary(uniqueKeysWithValues: zip(names, ids)), p1: p1, p2: p2)
    }

    @Test func equality() async throws {
        let f = try await fixture()
        let s = f.server
        #expect(try await s.names("Op", where: ["n": 2]) == ["b"])
        #expect(try await s.names("Op", where: ["s": "cherry"]) == ["c"])
        #expect(try await s.names("Op", where: ["flag": true]) == ["a"])
        #expect(try await s.names("Op", where: ["flag": false]) == ["b"])
        #expect(try await s.names("Op", where: ["d": date("2024-06-01T00:00:00.000Z")]) == ["b"])
        #expect(try await s.names("Op", where: ["objectId": .string(f.ids["c"]!)]) == ["c"])
        #expect(try await s.names("Op", where: ["name": "b", "n": 2]) == ["b"])
        #expect(try await s.names("Op", where: ["name": "b", "n": 3]) == [])
        // A value contained in an array field.
        #expect(try await s.names("Op", where: ["tags": "x"]) == ["a", "d"])
        #expect(try await s.names("Op", where: ["tags": "z"]) == ["d"])
        #expect(try await s.names("Op", where: ["members": f.p2]) == ["a"])
        #expect(try await s.names("Op", where: ["members": f.p1]) == ["a", "b"])
        // Pointer equality.
        #expect(try await s.names("Op", where: ["owner": f.p1]) == ["a", "d"])
        #expect(try await s.names("Op", where: ["owner": f.p2]) == ["b"])
        #expect(try await s.names("Op", where: ["owner": pointer("Person", "missing000")]) == [])
        // Dot path into an Object field.
        #expect(try await s.names("Op", where: ["address.city": "Paris"]) == ["a"])
        #expect(try await s.names("Op", where: ["address.zip": "75001"]) == ["a"])
        #expect(try await s.names("Op", where: ["address.city": "Rome"]) == [])
    }

    @Test func eqAndNe() async throws {
        let f = try await fixture()
        let s = f.server
        #expect(try await s.names("Op", where: ["n": ["$eq": 3]]) == ["c"])
        #expect(try await s.names("Op", where: ["s": ["$eq": "Date"]]) == ["d"])
        #expect(try await s.names("Op", where: ["owner": ["$eq": f.p2]]) == ["b"])
        #expect(try await s.names("Op", where: ["tags": ["$eq": "z"]]) == ["d"])
        #expect(try await s.names("Op", where: ["d": ["$eq": date("2024-06-01T00:00:00.000Z")]]) == ["b"])
        #expect(try await s.names("Op", where: ["address.city": ["$eq": "Berlin"]]) == ["b"])
        // `$ne` matches objects without the field too.
        #expect(try await s.names("Op", where: ["n": ["$ne": 2]]) == ["a", "c", "d", "e", "q"])
        #expect(try await s.names("Op", where: ["s": ["$ne": "apple"]]) == ["b", "c", "d", "e", "q"])
        #expect(try await s.names("Op", where: ["owner": ["$ne": f.p1]]) == ["b", "c", "e", "q"])
        #expect(try await s.names("Op", where: ["flag": ["$ne": true]]) == ["b", "c", "d", "e", "q"])
        #expect(try await s.names("Op", where: ["d": ["$ne": date("2024-06-01T00:00:00.000Z")]]) == ["a", "c", "d", "e", "q"])
        #expect(try await s.names("Op", where: ["address.city": ["$ne": "Paris"]]) == ["b", "c", "d", "e", "q"])
        // On an array field: arrays not containing the value.
        #expect(try await s.names("Op", where: ["tags": ["$ne": "y"]]) == ["c", "e", "q"])
    }

    @Test func comparisonsOnNumbersStringsAndDates() async throws {
        let f = try await fixture()
        let s = f.server
        #expect(try await s.names("Op", where: ["n": ["$gt": 2]]) == ["c", "d"])
        #expect(try await s.names("Op", where: ["n": ["$gte": 2, "$lt": 10]]) == ["b", "c"])
        #expect(try await s.names("Op", where: ["n": ["$lte": 1]]) == ["a"])
        #expect(try await s.names("Op", where: ["n": ["$lt": 1]]) == [])
        #expect(try await s.names("Op", where: ["n": ["$gt": 2.5, "$lte": 10]]) == ["c", "d"])
        // Strings compare by code point ("D" < "a" < "b").
        #expect(try await s.names("Op", where: ["s": ["$gt": "b"]]) == ["b", "c"])
        #expect(try await s.names("Op", where: ["s": ["$gte": "banana"]]) == ["b", "c"])
        #expect(try await s.names("Op", where: ["s": ["$lt": "b"]]) == ["a", "d", "q"])
        #expect(try await s.names("Op", where: ["s": ["$lte": "apple"]]) == ["a", "d", "q"])
        // Dates.
        #expect(try await s.names("Op", where: ["d": ["$gte": date("2024-06-01T00:00:00.000Z")]]) == ["b", "c"])
        #expect(try await s.names("Op", where: ["d": ["$lt": date("2024-06-01T00:00:00.000Z")]]) == ["a"])
        #expect(try await s.names("Op", where: ["d": ["$gt": date("2024-01-01T00:00:00.000Z"),
                                                      "$lte": date("2025-01-01T00:00:00.000Z")]]) == ["b", "c"])
        // Comparisons never cross types.
        #expect(try await s.names("Op", where: ["n": ["$lt": "5"]]) == [])
        #expect(try await s.names("Op", where: ["s": ["$gt": 0]]) == [])
        // Dot paths.
        #expect(try await s.names("Op", where: ["address.city": ["$gte": "P"]]) == ["a", "c"])
    }

    @Test func builtInDatesCompareWithADate() async throws {
        let f = try await fixture()
        let s = f.server
        let all = ["a", "b", "c", "d", "e", "q"]
        #expect(try await s.names("Op", where: ["createdAt": ["$gt": date("2000-01-01T00:00:00.000Z")]]) == all)
        #expect(try await s.names("Op", where: ["createdAt": ["$lt": date("2000-01-01T00:00:00.000Z")]]) == [])
        #expect(try await s.names("Op", where: ["createdAt": ["$lte": date("2999-01-01T00:00:00.000Z")]]) == all)
        #expect(try await s.names("Op", where: ["updatedAt": ["$gte": date("2000-01-01T00:00:00.000Z")]]) == all)
        let a = try await s.fetch("Op", f.ids["a"]!)
        let createdA = date(try #require(a["createdAt"]?.stringValue))
        // Equality with the object's own createdAt, and a closed range around it.
        #expect(try await s.names("Op", where: ["createdAt": createdA, "name": "a"]) == ["a"])
        #expect(try await s.names("Op", where: ["createdAt": ["$gte": createdA, "$lte": createdA]]).contains("a"))
        #expect(try await s.names("Op", where: ["createdAt": ["$gt": createdA], "name": "a"]) == [])
    }

    @Test func inAndNin() async throws {
        let f = try await fixture()
        let s = f.server
        #expect(try await s.names("Op", where: ["n": ["$in": [1, 3, 99]]]) == ["a", "c"])
        #expect(try await s.names("Op", where: ["s": ["$in": ["apple", "Date", "nope"]]]) == ["a", "d"])
        #expect(try await s.names("Op", where: ["n": ["$in": []]]) == [])
        #expect(try await s.names("Op", where: ["owner": ["$in": [f.p2, pointer("Person", "missing000")]]]) == ["b"])
        #expect(try await s.names("Op", where: ["d": ["$in": [date("2024-01-01T00:00:00.000Z"), date("2025-01-01T00:00:00.000Z")]]])
                == ["a", "c"])
        #expect(try await s.names("Op", where: ["objectId": ["$in": [.string(f.ids["a"]!), .string(f.ids["e"]!)]]]) == ["a", "e"])
        #expect(try await s.names("Op", where: ["address.city": ["$in": ["Paris", "Berlin"]]]) == ["a", "b"])
        // On array fields: any element.
        #expect(try await s.names("Op", where: ["tags": ["$in": ["z", "q"]]]) == ["d"])
        #expect(try await s.names("Op", where: ["members": ["$in": [f.p2]]]) == ["a"])
        // `$nin` matches objects without the field too; on arrays, no element may be listed.
        #expect(try await s.names("Op", where: ["n": ["$nin": [1, 2, 3]]]) == ["d", "e", "q"])
        #expect(try await s.names("Op", where: ["owner": ["$nin": [f.p1]]]) == ["b", "c", "e", "q"])
        #expect(try await s.names("Op", where: ["tags": ["$nin": ["y"]]]) == ["c", "e", "q"])
        #expect(try await s.names("Op", where: ["n": ["$nin": []]]) == ["a", "b", "c", "d", "e", "q"])
    }

    @Test func inAndNinWithMoreThanAHundredValues() async throws {
        let f = try await fixture()
        let s = f.server
        let numbers: [JSON] = [2] + (1000..<1150).map { .number(Double($0)) }
        #expect(try await s.names("Op", where: ["n": ["$in": .array(numbers)]], master: false) == ["b"])
        #expect(try await s.names("Op", where: ["n": ["$nin": .array(numbers)]]) == ["a", "c", "d", "e", "q"])
        let strings: [JSON] = (0..<150).map { .string("v\($0)") } + ["banana"]
        #expect(try await s.names("Op", where: ["s": ["$in": .array(strings)]]) == ["b"])
        let pointers: [JSON] = (0..<149).map { pointer("Person", String(format: "fake%06d", $0)) } + [f.p1]
        #expect(try await s.names("Op", where: ["owner": ["$in": .array(pointers)]]) == ["a", "d"])
        #expect(try await s.names("Op", where: ["owner": ["$nin": .array(pointers)]]) == ["b", "c", "e", "q"])
        #expect(try await s.names("Op", where: ["members": ["$in": .array(pointers.dropLast() + [f.p2])]]) == ["a"])
        let ids: [JSON] = (0..<120).map { .string(String(format: "zz%08d", $0)) } + [.string(f.ids["a"]!), .string(f.ids["b"]!)]
        #expect(try await s.names("Op", where: ["objectId": ["$in": .array(ids)]]) == ["a", "b"])
        // The long form works through the JS SDK's POST form as well.
        let body = try await s.query("Op", ["where": ["n": ["$in": .array(numbers)]]], viaBody: true)
        #expect(body.json["results"]?.arrayValue?.map { $0["name"] } == ["b"])
    }

    /// Parse takes `$in` lists of any length and any mix of types.
    @Test func inWithMoreThanAHundredValuesOfMixedTypes() async throws {
        let f = try await fixture()
        let mixed: [JSON] = (0..<60).map { .string("v\($0)") } + (1000..<1060).map { .number(Double($0)) } + [2, "cherry"]
        #expect(try await f.server.names("Op", where: ["n": ["$in": .array(mixed)]]) == ["b"])
        #expect(try await f.server.names("Op", where: ["s": ["$in": .array(mixed)]]) == ["c"])
        #expect(try await f.server.names("Op", where: ["n": ["$nin": .array(mixed)]]) == ["a", "c", "d", "e", "q"])
    }

    @Test func exists() async throws {
        let f = try await fixture()
        let s = f.server
        #expect(try await s.names("Op", where: ["owner": ["$exists": true]]) == ["a", "b", "d"])
        #expect(try await s.names("Op", where: ["owner": ["$exists": false]]) == ["c", "e", "q"])
        #expect(try await s.names("Op", where: ["n": ["$exists": false]]) == ["e", "q"])
        #expect(try await s.names("Op", where: ["tags": ["$exists": true]]) == ["a", "b", "c", "d"])
        #expect(try await s.names("Op", where: ["address.city": ["$exists": true]]) == ["a", "b", "c"])
        #expect(try await s.names("Op", where: ["address.zip": ["$exists": true]]) == ["a"])
        #expect(try await s.names("Op", where: ["address.zip": ["$exists": false]]) == ["b", "c", "d", "e", "q"])
        #expect(try await s.names("Op", where: ["nowhere": ["$exists": false]]) == ["a", "b", "c", "d", "e", "q"])
        #expect(try await s.names("Op", where: ["nowhere": ["$exists": true]]) == [])
    }

    @Test func all() async throws {
        let f = try await fixture()
        let s = f.server
        #expect(try await s.names("Op", where: ["tags": ["$all": ["x", "y"]]]) == ["a", "d"])
        #expect(try await s.names("Op", where: ["tags": ["$all": ["y"]]]) == ["a", "b", "d"])
        #expect(try await s.names("Op", where: ["tags": ["$all": ["x", "nope"]]]) == [])
        #expect(try await s.names("Op", where: ["tags": ["$all": []]]) == [])
        #expect(try await s.names("Op", where: ["members": ["$all": [f.p1, f.p2]]]) == ["a"])
        #expect(try await s.names("Op", where: ["members": ["$all": [f.p1]]]) == ["a", "b"])
        #expect(try await s.names("Op", where: ["members": ["$all": [f.p2, pointer("Person", "missing000")]]]) == [])
    }

    /// The JS SDK's `containsAllStartingWith`: `$all` of `$regex` constraints.
    @Test func allWithRegexElements() async throws {
        let f = try await fixture()
        let response = try await f.server.query("Op", ["where": ["tags": ["$all": [["$regex": "^x"], ["$regex": "^y"]]]]])
        #expect(response.status == 200, "\(response.text)")
        #expect(response.json["results"]?.arrayValue?.compactMap { $0["name"]?.stringValue }.sorted() == ["a", "d"])
    }

    @Test func containedBy() async throws {
        let f = try await fixture()
        let s = f.server
        // Parse's adapters disagree on objects without the field; constrain it to exist.
        func names(_ values: JSON, _ key: String = "tags") async throws -> [String] {
            try await s.names("Op", where: ["$and": [[key: ["$containedBy": values]], [key: ["$exists": true]]]])
        }
        #expect(try await names(["x", "y"]) == ["a", "b", "c"])
        #expect(try await names(["y"]) == ["b", "c"])
        #expect(try await names(["x", "y", "z", "w"]) == ["a", "b", "c", "d"])
        #expect(try await names([]) == ["c"])
        #expect(try await names([f.p1], "members") == ["b", "c"])
        #expect(try await names([f.p1, f.p2], "members") == ["a", "b", "c"])
    }

    @Test func regexWithOptions() async throws {
        let f = try await fixture()
        let s = f.server
        #expect(try await s.names("Op", where: ["s": ["$regex": "^b"]]) == ["b"])
        #expect(try await s.names("Op", where: ["s": ["$regex": "an"]]) == ["b"])
        #expect(try await s.names("Op", where: ["s": ["$regex": "^d"]]) == [])
        // i: case-insensitive.
        #expect(try await s.names("Op", where: ["s": ["$regex": "^d", "$options": "i"]]) == ["d"])
        #expect(try await s.names("Op", where: ["s": ["$regex": "RR", "$options": "i"]]) == ["c"])
        // m: ^ and $ at line breaks.
        #expect(try await s.names("Op", where: ["text": ["$regex": "^line2"]]) == [])
        #expect(try await s.names("Op", where: ["text": ["$regex": "^line2", "$options": "m"]]) == ["d"])
        #expect(try await s.names("Op", where: ["text": ["$regex": "line1$"]]) == [])
        #expect(try await s.names("Op", where: ["text": ["$regex": "line1$", "$options": "m"]]) == ["d"])
        // s: `.` matches a line break.
        #expect(try await s.names("Op", where: ["text": ["$regex": "line1.line2"]]) == [])
        #expect(try await s.names("Op", where: ["text": ["$regex": "line1.line2", "$options": "s"]]) == ["d"])
        // x: white space and # comments in the pattern are ignored.
        #expect(try await s.names("Op", where: ["s": ["$regex": "^ch err y  # a fruit", "$options": "x"]]) == ["c"])
        #expect(try await s.names("Op", where: ["s": ["$regex": "^ch err y"]]) == [])
        // Several options together.
        #expect(try await s.names("Op", where: ["text": ["$regex": "^LINE2$", "$options": "im"]]) == ["d"])
        // Dot paths; fields that are not strings never match.
        #expect(try await s.names("Op", where: ["address.city": ["$regex": "^p", "$options": "i"]]) == ["a", "c"])
        #expect(try await s.names("Op", where: ["n": ["$regex": "1"]]) == [])
    }

    /// What the Parse SDKs send for `startsWith`, `endsWith` and `contains`: the text quoted with `\Q…\E`.
    @Test func regexInTheFormsTheSDKsSend() async throws {
        let f = try await fixture()
        let s = f.server
        func quote(_ text: String) -> String { "\\Q" + text.replacingOccurrences(of: "\\E", with: "\\E\\\\E\\Q") + "\\E" }
        // startsWith
        #expect(try await s.names("Op", where: ["s": ["$regex": .string("^" + quote("a.b("))]]) == ["q"])
        #expect(try await s.names("Op", where: ["s": ["$regex": .string("^" + quote("a.b(c)+d"))]]) == ["q"])
        #expect(try await s.names("Op", where: ["s": ["$regex": .string("^" + quote("axb"))]]) == [])
        #expect(try await s.names("Op", where: ["s": ["$regex": .string("^" + quote("ap"))]]) == ["a"])
        #expect(try await s.names("Op", where: ["s": ["$regex": .string("^" + quote("AP")), "$options": "i"]]) == ["a"])
        // endsWith
        #expect(try await s.names("Op", where: ["s": ["$regex": .string(quote(")+d") + "$")]]) == ["q"])
        #expect(try await s.names("Op", where: ["s": ["$regex": .string(quote("rry") + "$")]]) == ["c"])
        #expect(try await s.names("Op", where: ["s": ["$regex": .string(quote("ch") + "$")]]) == [])
        // contains
        #expect(try await s.names("Op", where: ["s": ["$regex": .string(quote("b(c"))]]) == ["q"])
        #expect(try await s.names("Op", where: ["s": ["$regex": .string(quote("."))]]) == ["q"])
        #expect(try await s.names("Op", where: ["s": ["$regex": .string(quote("an"))]]) == ["b"])
    }

    /// MongoDB applies a regex to each element of an array field.
    @Test func regexOnAnArrayFieldMatchesElements() async throws {
        let f = try await fixture()
        #expect(try await f.server.names("Op", where: ["tags": ["$regex": "^z"]]) == ["d"])
        #expect(try await f.server.names("Op", where: ["tags": ["$regex": "\""]]) == [])
    }

    @Test func orAndNor() async throws {
        let f = try await fixture()
        let s = f.server
        #expect(try await s.names("Op", where: ["$or": [["n": 1], ["s": "cherry"]]]) == ["a", "c"])
        #expect(try await s.names("Op", where: ["$or": [["n": 1]]]) == ["a"])
        // A plain key next to `$or` is AND-ed with it.
        #expect(try await s.names("Op", where: ["flag": false, "$or": [["n": 2], ["n": 3]]]) == ["b"])
        #expect(try await s.names("Op", where: ["$and": [["tags": "x"], ["n": ["$gt": 5]]]]) == ["d"])
        #expect(try await s.names("Op", where: ["$and": [["n": ["$gt": 1]], ["n": ["$lt": 10]]]]) == ["b", "c"])
        #expect(try await s.names("Op", where: ["$nor": [["n": 1], ["n": 2]]]) == ["c", "d", "e", "q"])
        #expect(try await s.names("Op", where: ["$nor": [["owner": ["$exists": true]]]]) == ["c", "e", "q"])
        // Nesting.
        #expect(try await s.names("Op", where: ["$or": [["$and": [["tags": "y"], ["n": ["$gte": 2]]]], ["name": "e"]]])
                == ["b", "d", "e"])
        #expect(try await s.names("Op", where: ["$and": [["$or": [["n": 1], ["n": 10]]], ["$nor": [["tags": "z"]]]]]) == ["a"])
        #expect(try await s.names("Op", where: ["$or": [["address.city": "Berlin"], ["owner": f.p1, "n": ["$gt": 5]]]])
                == ["b", "d"])
    }

    @Test func orderByADotPath() async throws {
        let f = try await fixture()
        let names = try await f.server.orderedNames("Op", ["where": ["address": ["$exists": true]], "order": "address.city"])
        #expect(names == ["b", "a", "c"])
        let descending = try await f.server.orderedNames("Op", ["where": ["address": ["$exists": true]], "order": "-address.city"])
        #expect(descending == ["c", "a", "b"])
    }
}
