import Foundation
import RoostCore
import Testing

/// Parse Server's spec/ParseGeoPoint.spec.js, the cases a REST client can observe. The JS SDK's
/// `withinMiles`/`withinKilometers`/`withinRadians` send `$nearSphere` with `$maxDistance` in radians
/// (miles / 3958.8, kilometers / 6371.0).
@Suite struct ParseGeoPointSpecTests {
    func near(_ point: JSON, radians: Double? = nil) -> JSON {
        var constraint: [String: JSON] = ["$nearSphere": point]
        if let radians { constraint["$maxDistance"] = .number(radians) }
        return .object(constraint)
    }

    // spec: ParseGeoPoint.spec.js: geo point roundtrip
    // spec: ParseGeoPoint.spec.js: update geopoint
    // spec: ParseGeoPoint.spec.js: has the correct __type field in the json response
    // spec: ParseGeoPoint.spec.js: creating geo point exception two fields
    // spec: ParseGeoPoint.spec.js: updating geo point exception two fields
    // spec: ParseGeoPoint.spec.js: supports a sub-object with a geo point
    // spec: ParseGeoPoint.spec.js: supports array of geo points
    // spec: ParseGeoPoint.spec.js: equalTo geopoint
    // spec: ParseGeoPoint.spec.js: fails to fetch geopoints that are specifically not at (0,0)
    @Test func storingAndMatchingPoints() async throws {
        let s = try TestServer()
        let id = try await s.create("TestObject", ["location": geoPoint(44, -11), "name": "Ferndale"])
        let got = try await s.fetch("TestObject", id)
        #expect(got["location"] == geoPoint(44, -11) && got["location"]?["__type"] == "GeoPoint")
        try await s.update("TestObject", id, ["location": geoPoint(24, 19)])
        #expect(try await s.fetch("TestObject", id)["location"] == geoPoint(24, 19))

        let two = try await s.request("POST", "/classes/Other", json: ["locationOne": geoPoint(20, 20), "locationTwo": geoPoint(20, 20)])
        #expect(two.status == 400 && two.code == 111, "\(two.text)")
        let one = try await s.create("Another", ["locationOne": geoPoint(20, 20)])
        let second = try await s.request("PUT", "/classes/Another/\(one)", json: ["locationTwo": geoPoint(20, 20)])
        #expect(second.status == 400 && second.code == 111, "\(second.text)")

        let sub = try await s.create("Sub", ["subobject": ["location": geoPoint(44, -11)]])
        #expect(try await s.fetch("Sub", sub)["subobject"]?["location"] == geoPoint(44, -11))
        let many = try await s.create("Many", ["locations": [geoPoint(44, -11), geoPoint(22, -55)]])
        #expect(try await s.fetch("Many", many)["locations"] == [geoPoint(44, -11), geoPoint(22, -55)])

        let matched = try await s.queryResults("TestObject", ["where": ["location": geoPoint(24, 19)]])
        #expect(matched.map { $0["location"] } == [geoPoint(24, 19)])
        _ = try await s.createAll("Zero", [["location": geoPoint(0, 0)], ["location": geoPoint(49.2577142, -123.1941149)]])
        #expect(try await s.queryResults("Zero", ["where": ["location": ["$ne": geoPoint(0, 0)]]]).count == 1)
    }

    // spec: ParseGeoPoint.spec.js: geo line
    // spec: ParseGeoPoint.spec.js: geo max distance large
    // spec: ParseGeoPoint.spec.js: geo max distance medium
    // spec: ParseGeoPoint.spec.js: geo max distance small
    @Test func linesAndRadians() async throws {
        let s = try TestServer()
        _ = try await s.createAll("TestObject", (0..<10).map { ["location": geoPoint(Double($0) * 4 - 12, Double($0) * 3.2 - 11), "construct": "line",
                                                               "seq": .number(Double($0))] })
        let line = try await s.queryResults("TestObject", ["where": ["construct": "line", "location": near(geoPoint(24, 19), radians: 10000 / 3958.8)]])
        #expect(line.count == 10 && line.first?["seq"] == 9 && line.count > 3 && line[3]["seq"] == 6)

        _ = try await s.createAll("Ring", (0..<3).map { ["location": geoPoint(0, Double($0) * 45), "index": .number(Double($0))] })
        #expect(try await s.queryResults("Ring", ["where": ["location": near(geoPoint(1, -1), radians: 3.14)]]).count == 3)
        #expect(try await s.queryResults("Ring", ["where": ["location": near(geoPoint(1, -1), radians: 3.14 * 0.5)]]).map { $0["index"] } == [0, 1])
        #expect(try await s.queryResults("Ring", ["where": ["location": near(geoPoint(1, -1), radians: 3.14 * 0.25)]]).map { $0["index"] } == [0])
    }

    // spec: ParseGeoPoint.spec.js: geo max distance in km everywhere
    // spec: ParseGeoPoint.spec.js: geo max distance in km california
    // spec: ParseGeoPoint.spec.js: geo max distance in km bay area
    // spec: ParseGeoPoint.spec.js: geo max distance in km mid peninsula
    // spec: ParseGeoPoint.spec.js: geo max distance in miles everywhere
    // spec: ParseGeoPoint.spec.js: geo max distance in miles california
    // spec: ParseGeoPoint.spec.js: geo max distance in miles bay area
    // spec: ParseGeoPoint.spec.js: geo max distance in miles mid peninsula
    // spec: ParseGeoPoint.spec.js: returns nearest location
    @Test func californiaDistances() async throws {
        let s = try TestServer()
        _ = try await s.createAll("TestObject", [["location": geoPoint(38.52, -121.5), "name": "Sacramento"],
                                                 ["location": geoPoint(37.75, -122.68), "name": "San Francisco"],
                                                 ["location": geoPoint(21.35, -157.93), "name": "Honolulu"]])
        let sfo = geoPoint(37.6189722, -122.3748889)
        func names(_ radians: Double?) async throws -> [String] {
            try await s.orderedNames("TestObject", ["where": ["location": near(sfo, radians: radians)]])
        }
        #expect(try await names(4800 / 6371.0).count == 3)
        #expect(try await names(3700 / 6371.0) == ["San Francisco", "Sacramento"])
        #expect(try await names(100 / 6371.0) == ["San Francisco"])
        #expect(try await names(10 / 6371.0) == [])
        #expect(try await names(2600 / 3958.8).count == 3)
        #expect(try await names(2200 / 3958.8) == ["San Francisco", "Sacramento"])
        #expect(try await names(62 / 3958.8) == ["San Francisco"])
        #expect(try await names(10 / 3958.8) == [])
        #expect(try await names(nil).prefix(2) == ["San Francisco", "Sacramento"])
    }

    // spec: ParseGeoPoint.spec.js: works with geobox queries
    // spec: ParseGeoPoint.spec.js: supports withinPolygon open path
    // spec: ParseGeoPoint.spec.js: supports withinPolygon closed path
    // spec: ParseGeoPoint.spec.js: supports withinPolygon Polygon object
    // spec: ParseGeoPoint.spec.js: invalid Polygon object withinPolygon
    // spec: ParseGeoPoint.spec.js: invalid input withinPolygon
    // spec: ParseGeoPoint.spec.js: invalid geoPoint withinPolygon
    // spec: ParseGeoPoint.spec.js: minimum 3 points withinPolygon
    // spec-differs: ParseGeoPoint.spec.js: out of bounds Polygon object withinPolygon -- Parse answers 500 with code 1 (an uncaught TypeError from the SDK's GeoPoint check); we answer the client's mistake with 400 code 107
    // spec-differs: ParseGeoPoint.spec.js: invalid latitude withinPolygon -- Parse answers 500 with code 1; we answer 400 code 107
    // spec-differs: ParseGeoPoint.spec.js: invalid longitude withinPolygon -- Parse answers 500 with code 1; we answer 400 code 107
    @Test func boxesAndPolygons() async throws {
        let s = try TestServer()
        _ = try await s.createAll("Polygon", [["location": geoPoint(1.5, 1.5)], ["location": geoPoint(10, 10)], ["location": geoPoint(20, 20)]])
        #expect(try await s.queryResults("Polygon", ["where": ["location": ["$within": ["$box": [geoPoint(0, 0), geoPoint(10, 10)]]]]]).count == 2)
        func within(_ polygon: JSON) async throws -> TestResponse {
            try await s.query("Polygon", ["where": ["location": ["$geoWithin": ["$polygon": polygon]]]], viaBody: true)
        }
        let square: [JSON] = [geoPoint(0, 0), geoPoint(0, 10), geoPoint(10, 10), geoPoint(10, 0)]
        for polygon: JSON in [.array(square), .array(square + [geoPoint(0, 0)]),
                              ["__type": "Polygon", "coordinates": [[0, 0], [10, 0], [10, 10], [0, 10], [0, 0]]]] {
            let response = try await within(polygon)
            #expect(response.json["results"]?.arrayValue?.count == 2, "\(polygon.jsonText): \(response.text)")
        }
        expectParseError(try await within(["__type": "Polygon", "coordinates": [[0, 0], [10, 0]]]), 107)
        expectParseError(try await within(1234), 107)
        expectParseError(try await within([[:]]), 107)
        expectParseError(try await within([]), 107)
        expectParseError(try await within(["__type": "Polygon", "coordinates": [[0, 0], [181, 0], [0, 10]]]), 107)
        expectParseError(try await within([geoPoint(0, 0), ["__type": "GeoPoint", "latitude": 181, "longitude": 0], geoPoint(0, 0)]), 107)
        expectParseError(try await within([geoPoint(0, 0), ["__type": "GeoPoint", "latitude": 0, "longitude": 181], geoPoint(0, 0)]), 107)
    }

    // spec: ParseGeoPoint.spec.js: withinKilometers supports count
    // spec: ParseGeoPoint.spec.js: withinKilometers complex supports count
    @Test func countsWithinDistances() async throws {
        let s = try TestServer()
        _ = try await s.createAll("TestObject", [["location": geoPoint(10, 10)], ["location": geoPoint(20, 20)], ["location": geoPoint(30, 30)]])
        func counted(_ constraint: JSON) async throws -> JSON? {
            try await s.query("TestObject", ["where": constraint, "count": 1, "limit": 0]).json["count"]
        }
        #expect(try await counted(["location": near(geoPoint(10, 10), radians: 5 / 6371.0)]) == 1)
        #expect(try await counted(["$or": [["location": near(geoPoint(10, 10), radians: 5 / 6371.0)],
                                           ["location": near(geoPoint(20, 20), radians: 5 / 6371.0)]]]) == 2)
    }
}
