import RoostCore
import Testing

@Suite struct WireValueTests {
    @Test(arguments: [
        (nil, nil),
        ("text", .string),
        (42, .number),
        (-0.5, .number),
        (true, .boolean),
        ([1, "a", nil], .array),
        (["a": 1, "b": ["c": [1]]], .object),
        (["__type": "Date", "iso": "2026-11-22T10:00:00.000Z"], .date),
        (["__type": "Pointer", "className": "Player", "objectId": "abc123"], .pointer(targetClass: "Player")),
        (["__type": "Pointer", "className": "_User", "objectId": "u1"], .pointer(targetClass: "_User")),
        (["__type": "Bytes", "base64": "aGVsbG8="], .bytes),
        (["__type": "GeoPoint", "latitude": 40.5, "longitude": -73.25], .geoPoint),
        (["__type": "GeoPoint", "latitude": 90, "longitude": 180], .geoPoint),
        (["__type": "GeoPoint", "latitude": -90, "longitude": -180], .geoPoint),
        (["__type": "File", "name": "photo.jpg"], .file),
    ] as [(JSON, FieldType?)])
    func infersTypes(value: JSON, type: FieldType?) throws {
        let (inferred, normalized) = try WireValue.validate(value)
        #expect(inferred == type)
        #expect(normalized == value)
    }

    @Test(arguments: [
        ("2026-11-22T10:00:00Z", "2026-11-22T10:00:00.000Z"),
        ("2026-11-22T12:00:00.000+02:00", "2026-11-22T10:00:00.000Z"),
        ("2026-11-22T10:00:00.123456Z", "2026-11-22T10:00:00.123Z"),
        ("1960-01-01T00:00:00.000Z", "1960-01-01T00:00:00.000Z"),
    ] as [(String, String)])
    func normalizesDates(iso: String, normalized: String) throws {
        let (type, value) = try WireValue.validate(["__type": "Date", "iso": .string(iso)])
        #expect(type == .date)
        #expect(value == ["__type": "Date", "iso": .string(normalized)])
    }

    @Test func dropsExtraMembersOfTypedValues() throws {
        let (_, pointer) = try WireValue.validate(["__type": "Pointer", "className": "A", "objectId": "x", "extra": 1])
        #expect(pointer == WireValue.pointer("A", "x"))
        let (_, date) = try WireValue.validate(["__type": "Date", "iso": "2026-11-22T10:00:00.000Z", "x": 1])
        #expect(date == WireValue.encode(ParseDate(millisecondsSince1970: 1_795_341_600_000)))
    }

    /// As Parse: a pointer's whole-number id is taken as its digits, and it may name one of Parse's internal classes.
    @Test func pointersToInternalClassesAndWithNumberIds() throws {
        let (type, pointer) = try WireValue.validate(["__type": "Pointer", "className": "_GlobalConfig", "objectId": 1])
        #expect(type == .pointer(targetClass: "_GlobalConfig"))
        #expect(pointer == WireValue.pointer("_GlobalConfig", "1"))
        #expect(try WireValue.validate(["__type": "Pointer", "className": "_PushStatus", "objectId": "abc"]).1 == WireValue.pointer("_PushStatus", "abc"))
    }

    /// Malformed `__type` values: Parse answers 111 "This is not a valid <type>".
    @Test(arguments: [
        ["__type": "Date"],
        ["__type": "Date", "iso": 1_795_341_600_000],
        ["__type": "Date", "iso": "not a date"],
        ["__type": "Date", "iso": "2026-13-01T00:00:00Z"],
        ["__type": "Pointer", "objectId": "abc"],
        ["__type": "Pointer", "className": "Player"],
        ["__type": "Pointer", "className": "Player", "objectId": 12.5],
        ["__type": "Pointer", "className": "Player", "objectId": ""],
        ["__type": "Pointer", "className": "1Player", "objectId": "abc"],
        ["__type": "Pointer", "className": "Bad-Name", "objectId": "abc"],
        ["__type": "Bytes"],
        ["__type": "Bytes", "base64": 12],
        ["__type": "Bytes", "base64": "not base64!"],
        ["__type": "GeoPoint", "latitude": 10],
        ["__type": "GeoPoint", "longitude": 10],
        ["__type": "GeoPoint", "latitude": "10", "longitude": 20],
        ["__type": "GeoPoint", "latitude": nil, "longitude": 20],
        ["__type": "File"],
        ["__type": "Relation", "className": "Player"],
        ["__type": "Foo"],
        ["__type": ""],
        ["__type": 5],
        ["__type": nil],
    ] as [JSON])
    func malformedTypedValues(value: JSON) {
        #expect(parseErrorCode { try WireValue.validate(value) } == 111)
        // The same inside an Array or Object field (a non-string `__type` there is an ordinary key).
        if value["__type"]?.stringValue != nil {
            #expect(parseErrorCode { try WireValue.validate([value]) } == 111)
            #expect(parseErrorCode { try WireValue.validate(["nested": value]) } == 111)
        }
    }

    @Test(arguments: [
        (90.0001, 0.0), (-90.0001, 0.0), (0.0, 180.0001), (0.0, -180.0001), (1000.0, 1000.0),
    ] as [(Double, Double)])
    func geoPointsOutOfRange(latitude: Double, longitude: Double) {
        let value: JSON = ["__type": "GeoPoint", "latitude": .number(latitude), "longitude": .number(longitude)]
        #expect(parseErrorCode { try WireValue.validate(value) } == 107)
    }

    @Test(arguments: [
        ["a.b": 1],
        ["$set": 1],
        ["ok": ["deep$": true]],
        ["ok": [["x.y": 1]]],
    ] as [JSON])
    func nestedKeysWithDollarOrDotAreRefused(value: JSON) {
        #expect(parseErrorCode { try WireValue.validate(value) } == 121)
        #expect(parseErrorCode { try WireValue.validate([value]) } == 121)
    }

    @Test func nestedTypedValuesAreNormalized() throws {
        let (type, value) = try WireValue.validate([
            "when": ["__type": "Date", "iso": "2026-11-22T12:00:00+02:00"],
            "list": [["__type": "Date", "iso": "2026-11-22T10:00:00Z"]],
        ])
        #expect(type == .object)
        #expect(value["when"] == ["__type": "Date", "iso": "2026-11-22T10:00:00.000Z"])
        #expect(value["list"] == [["__type": "Date", "iso": "2026-11-22T10:00:00.000Z"]])
    }

    @Test func fieldTypeNamesAndSchemaForm() {
        #expect(FieldType.pointer(targetClass: "_User").schemaJSON == ["type": "Pointer", "targetClass": "_User"])
        #expect(FieldType.pointer(targetClass: "_User").displayName == "Pointer<_User>")
        #expect(FieldType.geoPoint.schemaJSON == ["type": "GeoPoint"])
        for type in [FieldType.string, .number, .boolean, .date, .object, .array, .bytes, .geoPoint, .file, .polygon, .acl,
                     .pointer(targetClass: "A"), .relation(targetClass: "B")] {
            #expect(FieldType(schemaJSON: type.schemaJSON) == type)
        }
        #expect(FieldType(schemaJSON: ["type": "Pointer"]) == nil)
        #expect(FieldType(schemaJSON: ["type": "Integer"]) == nil)
    }
}
