import Foundation
import RoostCore
import Testing

/// Parse Server's spec/ParsePolygon.spec.js over REST. `Parse.Polygon` sends its points as they are
/// (`{"__type": "Polygon", "coordinates": [[lat, lng], ...]}`); the server closes an open path. The
/// MongoDB-only describe block (2d/2dsphere indexes, Mongo's loop validation) is not carried, nor, for now, the
/// `$geoIntersects` cases ("with location"): Roost has no `$geoIntersects` yet.
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
}
