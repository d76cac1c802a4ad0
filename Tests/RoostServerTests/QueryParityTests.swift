import Foundation
import RoostCore
import Testing

/// Query behaviours where we once answered differently from Parse Server (MongoDB): arrays reached through dot
/// paths, objectIds in a Pointer field's `$in`, `$select` of an array of pointers, `$relativeTime`, repeated URL
/// parameters, and the words of Parse's error messages.
@Suite struct QueryParityTests {
    @Test func dotPathsReachIntoArraysAndIndexThem() async throws {
        let s = try TestServer()
        _ = try await s.createAll("Msg", [
            ["name": "ab", "sender": ["group": ["A", "B"], "rank": [1, 5]], "items": [1, ["value": 9]]],
            ["name": "ac", "sender": ["group": ["A", "C"], "rank": [2]], "items": [4, ["value": 2]]],
            ["name": "b", "sender": ["group": "B", "rank": 7], "items": [7]],
            ["name": "none", "sender": ["other": 1]],
        ])
        // An array at the end of a dot path matches through any element, as a scalar there does.
        #expect(try await s.names("Msg", where: ["sender.group": ["$in": ["A"]]]) == ["ab", "ac"])
        #expect(try await s.names("Msg", where: ["sender.group": ["$in": ["B"]]]) == ["ab", "b"])
        #expect(try await s.names("Msg", where: ["sender.group": ["$nin": ["A"]]]) == ["b", "none"])
        #expect(try await s.names("Msg", where: ["sender.group": "C"]) == ["ac"])
        #expect(try await s.names("Msg", where: ["sender.group": ["$ne": "A"]]) == ["b", "none"])
        #expect(try await s.names("Msg", where: ["sender.rank": ["$gt": 4]]) == ["ab", "b"])
        #expect(try await s.names("Msg", where: ["sender.rank": ["$all": [1, 5]]]) == ["ab"])
        // Numeric parts index arrays.
        #expect(try await s.names("Msg", where: ["items.1.value": ["$gt": 5]]) == ["ab"])
        #expect(try await s.names("Msg", where: ["items.0": ["$lt": 5]]) == ["ab", "ac"])
        #expect(try await s.names("Msg", where: ["items.0": 7]) == ["b"])
        #expect(try await s.names("Msg", where: ["items.1": ["$exists": false]]) == ["b", "none"])
        // Arrays of objects on the way are crossed, as MongoDB crosses them.
        _ = try await s.createAll("Post", [
            ["name": "p1", "comments": [["author": "ann", "likes": 3], ["author": "bob", "likes": 9]]],
            ["name": "p2", "comments": [["author": "cy", "likes": 1]], "meta": ["tags": [["k": "x"], ["k": "y"]]]],
            ["name": "p3", "comments": []],
        ])
        #expect(try await s.names("Post", where: ["comments.author": "bob"]) == ["p1"])
        #expect(try await s.names("Post", where: ["comments.author": ["$in": ["cy", "ann"]]]) == ["p1", "p2"])
        #expect(try await s.names("Post", where: ["comments.author": ["$ne": "ann"]]) == ["p2", "p3"])
        #expect(try await s.names("Post", where: ["comments.likes": ["$gt": 5]]) == ["p1"])
        #expect(try await s.names("Post", where: ["comments.author": ["$regex": "^c"]]) == ["p2"])
        #expect(try await s.names("Post", where: ["comments.author": ["$exists": true]]) == ["p1", "p2"])
        #expect(try await s.names("Post", where: ["comments.author": ["$exists": false]]) == ["p3"])
        #expect(try await s.names("Post", where: ["meta.tags.k": "y"]) == ["p2"])
        #expect(try await s.names("Post", where: ["comments.1.author": "bob"]) == ["p1"])
        // Order by an indexed path too.
        #expect(try await s.orderedNames("Msg", ["where": ["items.0": ["$exists": true]], "order": "-items.0"]) == ["b", "ac", "ab"])
    }

    @Test func objectIdsInAPointersInList() async throws {
        let s = try TestServer()
        let people = try await s.createAll("Person", [["name": "p1"], ["name": "p2"], ["name": "p3"]])
        _ = try await s.createAll("Pet", [
            ["name": "rex", "owner": pointer("Person", people[0])],
            ["name": "tom", "owner": pointer("Person", people[1])],
            ["name": "kit", "owner": pointer("Person", people[2])],
        ])
        #expect(try await s.names("Pet", where: ["owner": ["$in": [.string(people[0]), .string(people[1])]]]) == ["rex", "tom"])
        #expect(try await s.names("Pet", where: ["owner": ["$nin": [.string(people[0])]]]) == ["kit", "tom"])
        #expect(try await s.names("Pet", where: ["owner": ["$ne": .string(people[1])]]) == ["kit", "rex"])
        // Ids and pointers mixed, as Parse takes them.
        #expect(try await s.names("Pet", where: ["owner": ["$in": [.string(people[0]), pointer("Person", people[2])]]]) == ["kit", "rex"])
        // A plain equality with an id is still no match (Parse compares it with `Person$<id>`).
        #expect(try await s.names("Pet", where: ["owner": .string(people[0])]) == [])
    }

    @Test func selectSpreadsAnArrayOfPointers() async throws {
        let s = try TestServer()
        let authors = try await s.createAll("Author", [["name": "ann"], ["name": "bob"], ["name": "cy"]])
        _ = try await s.createAll("Post", [
            ["name": "p-ann", "author": pointer("Author", authors[0])],
            ["name": "p-bob", "author": pointer("Author", authors[1])],
            ["name": "p-cy", "author": pointer("Author", authors[2])],
        ])
        _ = try await s.createAll("Group", [
            ["name": "g1", "members": [pointer("Author", authors[0]), pointer("Author", authors[1])]],
            ["name": "g2", "members": [pointer("Author", authors[1])]],
        ])
        let everyGroup: JSON = ["query": ["className": "Group"], "key": "members"]
        #expect(try await s.names("Post", where: ["author": ["$select": everyGroup]]) == ["p-ann", "p-bob"])
        #expect(try await s.names("Post", where: ["author": ["$dontSelect": everyGroup]]) == ["p-cy"])
        let g2: JSON = ["query": ["className": "Group", "where": ["name": "g2"]], "key": "members"]
        #expect(try await s.names("Post", where: ["author": ["$select": g2]]) == ["p-bob"])
    }

    @Test func relativeTimes() async throws {
        let s = try TestServer()
        let day = 24 * 60 * 60 * 1000 as Int64
        let now = ParseDate.now().millisecondsSince1970
        _ = try await s.createAll("Ttl", [
            ["name": "future", "ttl": date(ParseDate(millisecondsSince1970: now + 2 * day).iso), "text": "x"],
            ["name": "past", "ttl": date(ParseDate(millisecondsSince1970: now - 2 * day).iso), "text": "x"],
        ])
        #expect(try await s.names("Ttl", where: ["ttl": ["$gt": ["$relativeTime": "in 1 day"]]]) == ["future"])
        #expect(try await s.names("Ttl", where: ["ttl": ["$lt": ["$relativeTime": "3 days ago"]]]) == [])
        #expect(try await s.names("Ttl", where: ["ttl": ["$gte": ["$relativeTime": "3 DAYS  AGO"]]]) == ["future", "past"])
        #expect(try await s.names("Ttl", where: ["ttl": ["$lte": ["$relativeTime": "now"]]]) == ["past"])
        #expect(try await s.names("Ttl", where: ["ttl": ["$gt": ["$relativeTime": "in 1 day 23 hrs"]]]) == ["future"])
        #expect(try await s.names("Ttl", where: ["ttl": ["$gt": ["$relativeTime": "in 2 days 1 hr"]]]) == [])
        #expect(try await s.names("Ttl", where: ["createdAt": ["$gt": ["$relativeTime": "1 hr ago"]]]) == ["future", "past"])
        let bad: [(JSON, String)] = [
            (["ttl": ["$gt": ["$relativeTime": "-12 bananas ago"]]], "bad $relativeTime ($gt) value. Invalid interval: 'bananas'"),
            (["ttl": ["$lt": ["$relativeTime": "1 day"]]], "bad $relativeTime ($lt) value. Time should either start with 'in' or end with 'ago'"),
            (["ttl": ["$lt": ["$relativeTime": "in 1 day ago"]]], "bad $relativeTime ($lt) value. Time cannot have both 'in' and 'ago'"),
            (["ttl": ["$gte": ["$relativeTime": "in 1 day 2"]]], "bad $relativeTime ($gte) value. Invalid time string. Dangling unit or number."),
            (["ttl": ["$lte": ["$relativeTime": "in 1.5 days"]]], "bad $relativeTime ($lte) value. '1.5' is not an integer."),
            (["text": ["$gt": ["$relativeTime": "1 day ago"]]], "$relativeTime can only be used with Date field"),
            (["objectId": ["$gt": ["$relativeTime": "1 day ago"]]], "$relativeTime can only be used with Date field"),
            (["ttl": ["$eq": ["$relativeTime": "1 day ago"]]], "$relativeTime can only be used with the $lt, $lte, $gt, and $gte operators"),
            (["ttl": ["$ne": ["$relativeTime": "1 day ago"]]], "$relativeTime can only be used with the $lt, $lte, $gt, and $gte operators"),
        ]
        for (constraint, message) in bad {
            expectParseError(try await s.query("Ttl", ["where": constraint], master: true), 107, message)
        }
    }

    @Test func repeatedParametersAreJoined() async throws {
        let s = try TestServer()
        _ = try await s.createAll("Rep", [["name": "a", "n": 2, "x": 1, "y": 2, "z": 3], ["name": "b", "n": 1, "x": 4, "y": 5, "z": 6]])
        let picked = try await s.request("GET", "/classes/Rep?keys=x&keys=y&order=n")
        #expect(picked.status == 200, "\(picked.text)")
        let rows = picked.json["results"]?.arrayValue ?? []
        #expect(rows.map { keySet($0).subtracting(["objectId", "createdAt", "updatedAt"]) } == [["x", "y"], ["x", "y"]])
        let brackets = try await s.request("GET", "/classes/Rep?keys[]=z&keys[]=name&order=-n")
        #expect(brackets.json["results"]?.arrayValue?.map { $0["name"] } == ["a", "b"])
        #expect(brackets.json["results"]?.arrayValue?.first.map { keySet($0).subtracting(["objectId", "createdAt", "updatedAt"]) } == ["z", "name"])
        // Express's brackets: `[]` appends, `[0]` indexes (the values strings, as its parser leaves them).
        for (query, count) in [("where[name][$in][]=a&where[name][$in][]=b", 2), ("where[name][$in][]=b", 1), ("where[name][$in][0]=a", 1)] {
            let (head, body) = try RawConnection(port: s.port).exchange(
                "GET /parse/classes/Rep?\(query) HTTP/1.1\r\nHost: roost\r\nX-Parse-Application-Id: \(TestServer.applicationId)\r\n"
                + "Connection: close\r\n\r\n")
            let found = try JSONParser.parse(body)["results"]?.arrayValue?.count
            #expect(head.hasPrefix("HTTP/1.1 200") && found == count, "\(query): \(body)")
        }
        let ordered = try await s.request("GET", "/classes/Rep?order=-x&order=y")
        #expect(ordered.json["results"]?.arrayValue?.map { $0["name"] } == ["b", "a"])
        // A get takes them too.
        let id = try await s.createAll("Rep", [["name": "c", "x": 7, "y": 8, "z": 9]])[0]
        let got = try await s.request("GET", "/classes/Rep/\(id)?keys=x&keys=z")
        #expect(keySet(got.json).subtracting(["objectId", "createdAt", "updatedAt"]) == ["x", "z"])
    }

    @Test func errorMessagesAreParsesWords() async throws {
        let s = try TestServer()
        _ = try await s.createAll("Item", [["name": "a", "n": 1, "tags": ["x"], "loc": geoPoint(1, 1)]])
        let cases: [(JSON, Int, String)] = [
            (["tags": ["$containedBy": "x"]], 107, "bad $containedBy: should be an array"),
            (["name": ["$regex": 5]], 107, "bad regex: 5"),
            (["name": ["$regex": ["a"]]], 107, "bad regex: a"),
            (["name": ["$regex": "a", "$options": ""]], 102, "Bad $options value for query: "),
            (["name": ["$regex": 5, "$options": "q"]], 102, "Bad $options value for query: q"),
            (["$or": ["n": 1]], 102, "Bad $or format - use an array value."),
            (["$and": 1], 102, "Bad $and format - use an array value."),
            (["$nor": 1], 102, "Bad $nor format - use an array of at least 1 value."),
            // Parse's check for containsAllStartingWith's `^\Q…\E` regexes.
            (["tags": ["$all": [["$regex": "^\\Qx\\E"], "y"]]], 107, "All $all values must be of regex type or none: /^\\Qx\\E/,y"),
            (["tags": ["$all": [["$regex": "^x"]]]], 107, "All $all values must be of regex type or none: /^x/"),
            (["loc": ["$within": ["$box": [geoPoint(0, 0)]]]], 107, "malformatted $within arg"),
            (["loc": ["$within": 1]], 107, "malformatted $within arg"),
            (["loc": ["$geoWithin": ["$polygon": 1234]]], 107,
             "bad $geoWithin value; $polygon should be Polygon object or Array of Parse.GeoPoint's"),
            (["loc": ["$geoWithin": ["$polygon": []]]], 107, "bad $geoWithin value; $polygon should contain at least 3 GeoPoints"),
            (["loc": ["$geoWithin": ["$polygon": [[:], [:], [:]]]]], 107, "bad $geoWithin value"),
            (["loc": ["$geoWithin": ["$polygon": ["__type": "Polygon", "coordinates": [[0, 0], [1, 1]]]]]], 107,
             "bad $geoWithin value; Polygon.coordinates should contain at least 3 lon/lat pairs"),
            (["loc": ["$geoWithin": ["$centerSphere": 1]]], 107,
             "bad $geoWithin value; $centerSphere should be an array of Parse.GeoPoint and distance"),
            (["loc": ["$geoWithin": ["$centerSphere": [1, 1]]]], 107, "bad $geoWithin value; $centerSphere geo point invalid"),
            (["loc": ["$geoWithin": ["$centerSphere": [geoPoint(0, 0), -1]]]], 107, "bad $geoWithin value; $centerSphere distance invalid"),
        ]
        for (constraint, code, message) in cases {
            expectParseError(try await s.query("Item", ["where": constraint]), code, message)
        }
        // Operators take atoms (Pointer, Date, GeoPoint... or a scalar), not plain objects or arrays, but on Array fields.
        expectParseError(try await s.query("Item", ["where": ["n": ["$lt": ["a": 1]]]]), 107, #"bad atom: {"a":1}"#)
        expectParseError(try await s.query("Item", ["where": ["name": ["$ne": [1, 2]]]]), 107, "bad atom: [1,2]")
        expectParseError(try await s.query("Item", ["where": ["name": ["$in": ["a", ["b": 1]]]]]), 107, #"bad atom: {"b":1}"#)
        expectParseError(try await s.query("Item", ["where": ["name.x": ["$nin": [["b": 1]]]]]), 107, #"bad atom: {"b":1}"#)
        #expect(try await s.names("Item", where: ["tags": ["$ne": ["y": 1]]]) == ["a"])
        #expect(try await s.names("Item", where: ["n": ["$in": [1, date("2024-01-01T00:00:00.000Z")]]]) == ["a"])
        // `$exists` reads its operand by truth, as MongoDB does.
        #expect(try await s.names("Item", where: ["n": ["$exists": 1]]) == ["a"])
        #expect(try await s.names("Item", where: ["n": ["$exists": 0]]) == [])
        #expect(try await s.names("Item", where: ["n": ["$exists": "false"]]) == ["a"])
        #expect(try await s.names("Item", where: ["missing": ["$exists": .null]]) == ["a"])
        expectParseError(try await s.query("Item", ["where": ["n": ["$exists": ["x": 1]]]]), 107, #"bad atom: {"x":1}"#)
        // Regexes and values may mix otherwise, as MongoDB takes them.
        #expect(try await s.names("Item", where: ["tags": ["$all": [["$regex": "^x"], "x"]]]) == ["a"])
        #expect(try await s.names("Item", where: ["tags": ["$all": [["$regex": "^x"], "y"]]]) == [])
        // `$in` spreads arrays in its list, as Parse does.
        #expect(try await s.names("Item", where: ["n": ["$in": [[1, 2]]]]) == ["a"])
    }
}
