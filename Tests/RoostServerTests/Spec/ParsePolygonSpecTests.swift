import Foundation
import RoostCore
import Testing

/// Parse Server's spec/ParsePolygon.spec.js over REST. `Parse.Polygon` sends its points as they are
/// (`{"__type": "Polygon", "coordinates": [[lat, lng], ...]}`); the server closes an open path. The
/// MongoDB-only describe block (2d/2dsphere indexes, Mongo's loop validation) is not carried.
@Suite struct ParsePolygonSpecTests {
    private let square: [[Double]] = [[0, 0], [0, 1], [1, 1], [1, 0]]

    private func polygon(_ points: [[Double]]) -> JSON {
        ["__type": "Polygon", "coordinates": .array(points.map { .array($0.map { .number($0) }) })]
    }

    // spec: ParsePolygon.spec.js: polygon save open path
    // spec: ParsePolygon.spec.js: polygon save closed path
    // spec: ParsePolygon.spec.js: polygon counterclockwise
    @Test func pathsAreStoredClosed() async throws {
        let server = try TestServer()
        let cases: [([[Double]], [[Double]])] = [
            (square, square + [[0, 0]]),
            (square + [[0, 0]], square + [[0, 0]]),
            ([[1, 1], [0, 1], [0, 0], [1, 0]], [[1, 1], [0, 1], [0, 0], [1, 0], [1, 1]]),
        ]
        for (saved, read) in cases {
            let id = try await server.create("TestObject", ["polygon": polygon(saved)])
            #expect(try await server.fetch("TestObject", id)["polygon"] == polygon(read), "\(saved)")
        }
    }

    // spec: ParsePolygon.spec.js: polygon equalTo (open/closed) path
    @Test func equalToMatchesTheOpenAndTheClosedPath() async throws {
        let server = try TestServer()
        _ = try await server.create("TestObject", ["polygon": polygon(square)])
        for points in [square, square + [[0, 0]]] {
            let results = try await server.results("TestObject", ["where": ["polygon": polygon(points)]])
            #expect(results.count == 1 && results.first?["polygon"] == polygon(square + [[0, 0]]), "\(points)")
        }
    }

    // spec: ParsePolygon.spec.js: polygon update
    @Test func anUpdateReplacesThePolygon() async throws {
        let server = try TestServer()
        let id = try await server.create("TestObject", ["polygon": polygon(square)])
        let moved: [[Double]] = [[2, 2], [2, 3], [3, 3], [3, 2]]
        try await server.update("TestObject", id, ["polygon": polygon(moved)])
        #expect(try await server.fetch("TestObject", id)["polygon"] == polygon(moved + [[2, 2]]))
    }

    // spec: ParsePolygon.spec.js: polygon invalid value
    // spec: ParsePolygon.spec.js: polygon three points minimum
    // spec: ParsePolygon.spec.js: polygon three different points minimum
    @Test func badPolygonsAreNotSaved() async throws {
        let server = try TestServer()
        let invalid: JSON = ["__type": "Polygon", "coordinates": [["foo", "bar"], [0, 1], [1, 0], [1, 1], [0, 0]]]
        for value in [invalid, polygon([[0, 0]]), polygon([[0, 0], [0, 1], [0, 0]])] {
            let response = try await server.request("POST", "/classes/TestObject", json: ["polygon": value])
            #expect(response.status == 400 && response.code != nil, "\(value.jsonText): \(response.text)")
        }
    }

    // spec: ParsePolygon.spec.js: polygonContain query
    // spec: ParsePolygon.spec.js: polygonContain query no reverse input (Regression test for #4608)
    // spec: ParsePolygon.spec.js: polygonContain query real data (Regression test for #4608)
    // spec: ParsePolygon.spec.js: polygonContain invalid geoPoint
    // spec-differs: ParsePolygon.spec.js: polygonContain invalid input -- a point out of range is 107 (Parse's GeoPoint check throws a TypeError: 500)
    @Test func polygonsContainingAPointAreFound() async throws {
        let server = try TestServer()
        func containing(_ point: JSON) async throws -> TestResponse {
            try await server.request("POST", "/classes/TestObject", json: [
                "_method": "GET", "where": ["boundary": ["$geoIntersects": ["$point": point]]]])
        }
        func at(_ latitude: Double, _ longitude: Double) -> JSON { ["__type": "GeoPoint", "latitude": .number(latitude), "longitude": .number(longitude)] }
        let shapes: [[[Double]]] = [[[0.25, 0], [0.25, 1.25], [0.75, 1.25], [0.75, 0]], [[0, 0], [0, 2], [2, 2], [2, 0]],
                                    [[10, 10], [10, 15], [15, 15], [15, 10], [10, 10]]]
        let ids = try await server.createAll("TestObject", shapes.map { ["boundary": polygon($0)] })
        let found = try await containing(at(0.5, 1.0))
        #expect(Set(found.json["results"]?.arrayValue?.compactMap { $0["objectId"]?.stringValue } ?? []) == Set(ids.prefix(2)), "\(found.text)")
        #expect(try await containing(at(0.5, 0.1)).json["results"]?.arrayValue?.count == 2)
        #expect(try await containing(at(12, 15)).json["results"]?.arrayValue?.count == 1)  // On an edge: inside.
        #expect(try await containing(at(5, 5)).json["results"] == [])
        let detroit: [[Double]] = [[42.631655189280224, -83.78406753121705], [42.633047793854814, -83.75333640366955],
                                   [42.61625254348911, -83.75149921669944], [42.61526926650296, -83.78161794858735]]
        let city = try await server.create("City", ["boundary": polygon(detroit)])
        let inCity = try await server.request("GET", "/classes/City", query: [
            "where": #"{"boundary":{"$geoIntersects":{"$point":{"__type":"GeoPoint","latitude":42.624599,"longitude":-83.770162}}}}"#])
        #expect(inCity.json["results"]?.arrayValue?.first?["objectId"] == .string(city), "\(inCity.text)")
        expectError(try await containing([]), 107, "bad $geoIntersect value; $point should be GeoPoint")
        expectError(try await containing(at(181, 181)), 107)
    }
}
