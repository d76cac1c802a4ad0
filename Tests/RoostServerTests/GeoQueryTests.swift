import Foundation
import RoostCore
import Testing

/// Geo queries on a GeoPoint field: `$nearSphere` (nearest first, with the four `$maxDistance` forms),
/// `$within` `$box`, `$geoWithin` `$polygon` and `$centerSphere`.
@Suite struct GeoQueryTests {
    /// Places on the equator 1°, 2°, 5° and 10° east of (0, 0) (1° ≈ 111.2 km ≈ 69.1 mi ≈ 0.01745 rad),
    /// New York, Sydney, and one place without a location.
    func places() async throws -> TestServer {
        let server = try TestServer()
        _ = try await server.createAll("Place", [
            ["name": "a", "location": geoPoint(0, 1)],
            ["name": "b", "location": geoPoint(0, 2)],
            ["name": "c", "location": geoPoint(0, 5)],
            ["name": "d", "location": geoPoint(0, 10)],
            ["name": "ny", "location": geoPoint(40.7128, -74.006)],
            ["name": "sy", "location": geoPoint(-33.87, 151.21)],
            ["name": "none"],
        ])
        return server
    }

    func near(_ server: TestServer, _ point: JSON, _ extra: [String: JSON] = [:], options: [String: JSON] = [:],
              sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String] {
        var constraint = extra
        constraint["$nearSphere"] = point
        var parameters = options
        parameters["where"] = ["location": .object(constraint)]
        return try await server.orderedNames("Place", parameters, sourceLocation: sourceLocation)
    }

    @Test func nearSphereOrdersNearestFirst() async throws {
        let server = try await places()
        #expect(try await near(server, geoPoint(0, 0)) == ["a", "b", "c", "d", "ny", "sy"])
        #expect(try await near(server, geoPoint(0, 10)) == ["d", "c", "b", "a", "ny", "sy"])
        #expect(try await near(server, geoPoint(41, -73)) == ["ny", "a", "b", "c", "d", "sy"])
        // With limit and skip: the nearest ones.
        #expect(try await near(server, geoPoint(0, 0), options: ["limit": 2]) == ["a", "b"])
        #expect(try await near(server, geoPoint(0, 0), options: ["limit": 2, "skip": 1]) == ["b", "c"])
        // With another constraint.
        var parameters: [String: JSON] = ["where": ["location": ["$nearSphere": geoPoint(0, 0)], "name": ["$nin": ["a", "c"]]]]
        #expect(try await server.orderedNames("Place", parameters) == ["b", "d", "ny", "sy"])
        // An explicit order wins over distance.
        parameters = ["where": ["location": ["$nearSphere": geoPoint(0, 0)]], "order": "-name"]
        #expect(try await server.orderedNames("Place", parameters) == ["sy", "ny", "d", "c", "b", "a"])
        // Through the SDK's POST form.
        let body = try await server.query("Place", ["where": ["location": ["$nearSphere": geoPoint(0, 4)]], "limit": 3], viaBody: true)
        #expect(body.json["results"]?.arrayValue?.map { $0["name"] } == ["c", "b", "a"])
    }

    @Test func nearSphereWithAMaximumDistance() async throws {
        let server = try await places()
        let origin = geoPoint(0, 0)
        // Radians.
        #expect(try await near(server, origin, ["$maxDistance": 0.03]) == ["a"])
        #expect(try await near(server, origin, ["$maxDistance": 0.05]) == ["a", "b"])
        #expect(try await near(server, origin, ["$maxDistanceInRadians": 0.05]) == ["a", "b"])
        #expect(try await near(server, origin, ["$maxDistanceInRadians": 0.1]) == ["a", "b", "c"])
        #expect(try await near(server, origin, ["$maxDistanceInRadians": 0.01]) == [])
        #expect(try await near(server, origin, ["$maxDistance": 3.2]) == ["a", "b", "c", "d", "ny", "sy"])
        // Kilometers (Earth radius 6371 km).
        #expect(try await near(server, origin, ["$maxDistanceInKilometers": 150]) == ["a"])
        #expect(try await near(server, origin, ["$maxDistanceInKilometers": 600]) == ["a", "b", "c"])
        #expect(try await near(server, origin, ["$maxDistanceInKilometers": 1200]) == ["a", "b", "c", "d"])
        // Miles (Earth radius 3958.8 mi).
        #expect(try await near(server, origin, ["$maxDistanceInMiles": 100]) == ["a"])
        #expect(try await near(server, origin, ["$maxDistanceInMiles": 200]) == ["a", "b"])
        #expect(try await near(server, origin, ["$maxDistanceInMiles": 800]) == ["a", "b", "c", "d"])
        // Around another point.
        #expect(try await near(server, geoPoint(0, 10), ["$maxDistanceInKilometers": 600]) == ["d", "c"])
        // Counting.
        let counted = try await server.query("Place", ["where": ["location": ["$nearSphere": origin, "$maxDistance": 0.05]],
                                                       "count": 1, "limit": 0])
        #expect(counted.json == ["results": [], "count": 2])
    }

    @Test func withinBox() async throws {
        let server = try await places()
        func box(_ southWest: JSON, _ northEast: JSON) async throws -> [String] {
            try await server.names("Place", where: ["location": ["$within": ["$box": [southWest, northEast]]]])
        }
        #expect(try await box(geoPoint(-1, 0.5), geoPoint(1, 2.5)) == ["a", "b"])
        #expect(try await box(geoPoint(-1, 4), geoPoint(1, 11)) == ["c", "d"])
        #expect(try await box(geoPoint(30, -80), geoPoint(50, -70)) == ["ny"])
        #expect(try await box(geoPoint(-90, -180), geoPoint(90, 180)) == ["a", "b", "c", "d", "ny", "sy"])
        #expect(try await box(geoPoint(10, 10), geoPoint(20, 20)) == [])
        // The corners in the other order, as the REST guide's example gives them, mean the same box.
        #expect(try await box(geoPoint(1, 2.5), geoPoint(-1, 0.5)) == ["a", "b"])
        #expect(try await box(geoPoint(50, -80), geoPoint(30, -70)) == ["ny"])
    }

    @Test func geoWithinPolygon() async throws {
        let server = try await places()
        func within(_ polygon: JSON) async throws -> [String] {
            try await server.names("Place", where: ["location": ["$geoWithin": ["$polygon": polygon]]])
        }
        // GeoPoints.
        #expect(try await within([geoPoint(-1, 0.5), geoPoint(1, 0.5), geoPoint(1, 5.5), geoPoint(-1, 5.5)]) == ["a", "b", "c"])
        #expect(try await within([geoPoint(-1, 1.5), geoPoint(1, 1.5), geoPoint(0, 12)]) == ["b", "c", "d"])
        #expect(try await within([geoPoint(35, -80), geoPoint(45, -80), geoPoint(40, -65)]) == ["ny"])
        #expect(try await within([geoPoint(10, 10), geoPoint(20, 10), geoPoint(15, 20)]) == [])
        // A Polygon object: [latitude, longitude] pairs.
        let polygon: JSON = ["__type": "Polygon", "coordinates": [[-1, 0.5], [1, 0.5], [1, 5.5], [-1, 5.5]]]
        #expect(try await within(polygon) == ["a", "b", "c"])
    }

    @Test func geoWithinCenterSphere() async throws {
        let server = try await places()
        func within(_ center: JSON, _ radius: Double) async throws -> [String] {
            try await server.names("Place", where: ["location": ["$geoWithin": ["$centerSphere": [center, .number(radius)]]]])
        }
        #expect(try await within(geoPoint(0, 0), 0.05) == ["a", "b"])
        #expect(try await within(geoPoint(0, 0), 0.1) == ["a", "b", "c"])
        #expect(try await within(geoPoint(0, 10), 0.1) == ["c", "d"])
        #expect(try await within(geoPoint(0, 0), 0.001) == [])
        // The center as [longitude, latitude], as MongoDB takes it.
        #expect(try await within([10, 0], 0.1) == ["c", "d"])
        #expect(try await within([-74, 40.7], 0.01) == ["ny"])
    }

    @Test func malformedGeoConstraintsAre107() async throws {
        let server = try await places()
        let cases: [JSON] = [
            ["location": ["$within": ["$box": [geoPoint(0, 0)]]]],
            ["location": ["$geoWithin": ["$polygon": [geoPoint(0, 0), geoPoint(1, 1)]]]],
            ["location": ["$geoWithin": ["$centerSphere": [geoPoint(0, 0)]]]],
            ["location": ["$geoWithin": ["$centerSphere": [geoPoint(0, 0), -1]]]],
        ]
        for constraint in cases {
            let response = try await server.query("Place", ["where": constraint])
            expectParseError(response, 107)
        }
        // The server still answers.
        #expect(try await near(server, geoPoint(0, 0), options: ["limit": 1]) == ["a"])
    }
}
