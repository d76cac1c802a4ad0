import RoostCore
@testable import RoostServer
import Testing

/// The values a dot path reaches, as MongoDB's dot notation reaches them.
@Suite struct PathValuesTests {
    func reached(_ document: JSON, _ path: String) -> [JSON] {
        PathValues.values(in: document, path: path.split(separator: ".").map(String.init))
    }

    @Test func objectsArraysAndIndexes() {
        let post: JSON = ["comments": [["author": "ann", "tags": ["x", "y"]], ["author": "bob"], "loose", [["author": "deep"]]],
                          "meta": ["by": "cy"], "numbered": ["1": "one"]]
        #expect(reached(post, "meta.by") == ["cy"])
        #expect(reached(post, "comments.author") == ["ann", "bob"])  // Not into the nested array.
        #expect(reached(post, "comments.tags") == ["x", "y", ["x", "y"]])  // An array at the end: its elements and itself.
        #expect(reached(post, "comments.1.author") == ["bob"])
        #expect(reached(post, "comments.9.author") == [])
        #expect(reached(post, "numbered.1") == ["one"])  // A numeric part also names an object's key.
        #expect(reached(post, "meta.missing") == [])
        #expect(reached("text", "a") == [])
    }
}
