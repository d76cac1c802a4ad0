import RoostCore
import Testing

@Suite struct FieldOperationTests {
    @Test(arguments: [
        (["__op": "Increment", "amount": 1], .increment(1), .number),
        (["__op": "Increment", "amount": -2.5], .increment(-2.5), .number),
        (["__op": "Add", "objects": [1, "a"]], .add([1, "a"]), .array),
        (["__op": "AddUnique", "objects": [1]], .addUnique([1]), .array),
        (["__op": "Remove", "objects": []], .remove([]), .array),
        (["__op": "Delete"], .delete, nil),
        ("plain", .set("plain"), .string),
        (7, .set(7), .number),
        (nil, .set(nil), nil),
        (["a": 1], .set(["a": 1]), .object),
        ([1, 2], .set([1, 2]), .array),
    ] as [(JSON, FieldOperation, FieldType?)])
    func decodes(value: JSON, operation: FieldOperation, type: FieldType?) throws {
        let (decoded, inferred) = try FieldOperation.decode(value)
        #expect(decoded == operation)
        #expect(inferred == type)
    }

    @Test func decodedOperandsAreValidated() throws {
        let (operation, _) = try FieldOperation.decode(
            ["__op": "Add", "objects": [["__type": "Date", "iso": "2026-11-22T12:00:00+02:00"]]])
        #expect(operation == .add([["__type": "Date", "iso": "2026-11-22T10:00:00.000Z"]]))
        #expect(parseErrorCode { try FieldOperation.decode(["__op": "Add", "objects": [["__type": "Date"]]]) } == 111)
        #expect(parseErrorCode { try FieldOperation.decode(["__op": "AddUnique", "objects": [["a.b": 1]]]) } == 121)
        #expect(parseErrorCode { try FieldOperation.decode(["__type": "Pointer", "className": "A"]) } == 111)
    }

    /// Parse: an unknown op is 108 "The X operator is not supported yet."
    @Test(arguments: ["Multiply", "increment", "Set", "", "Batch2"])
    func unknownOperations(op: String) throws {
        let error = try #require(throws: ParseError.self) { try FieldOperation.decode(["__op": .string(op)]) }
        #expect(error.code == .commandUnavailable)
        #expect(error.message == "The \(op) operator is not supported yet.")
    }

    /// Parse: malformed operands are 107 (INVALID_JSON).
    @Test(arguments: [
        ["__op": "Increment"],
        ["__op": "Increment", "amount": "1"],
        ["__op": "Increment", "amount": nil],
        ["__op": "Increment", "amount": [1]],
        ["__op": "Increment", "amount": true],
        ["__op": "Add"],
        ["__op": "Add", "objects": 1],
        ["__op": "AddUnique", "objects": "a"],
        ["__op": "Remove", "objects": ["a": 1]],
    ] as [JSON])
    func malformedOperands(value: JSON) {
        #expect(parseErrorCode { try FieldOperation.decode(value) } == 107)
    }

    @Test(arguments: [
        (.increment(5), nil, 5),
        (.increment(5), .null, 5),
        (.increment(5), 10, 15),
        (.increment(-1), 0, -1),
        (.increment(0.5), 1.25, 1.75),
        (.add([2, 2]), nil, [2, 2]),
        (.add([2, 2]), [1, 2], [1, 2, 2, 2]),
        (.add([["k": 1]]), [], [["k": 1]]),
        (.addUnique([2, 3, 3]), [1, 2], [1, 2, 3]),
        (.addUnique(["a"]), nil, ["a"]),
        (.addUnique([["x": 1, "y": 2]]), [["y": 2, "x": 1]], [["x": 1, "y": 2]]),
        (.addUnique([1]), [3, 2, 1], [3, 2, 1]),
        (.remove([2]), [1, 2, 3, 2], [1, 3]),
        (.remove([["k": 1]]), [["k": 1], ["k": 2]], [["k": 2]]),
        (.remove([1]), nil, []),
        (.remove([9]), [1], [1]),
        (.set("x"), 1, "x"),
        (.set(nil), 1, nil),
    ] as [(FieldOperation, JSON?, JSON)])
    func applied(operation: FieldOperation, current: JSON?, expected: JSON) throws {
        #expect(try operation.applied(to: current) == expected)
    }

    @Test func deleteRemovesTheField() throws {
        #expect(try FieldOperation.delete.applied(to: 5) == nil)
        #expect(try FieldOperation.delete.applied(to: nil) == nil)
    }

    @Test(arguments: [
        (.increment(1), "a"),
        (.increment(1), [1]),
        (.increment(1), true),
        (.add([1]), "a"),
        (.addUnique([1]), 1),
        (.remove([1]), ["a": 1]),
    ] as [(FieldOperation, JSON)])
    func operationsOnTheWrongTypeAre111(operation: FieldOperation, current: JSON) {
        #expect(parseErrorCode { try operation.applied(to: current) } == 111)
    }

    @Test func onlyCountersAndArrayOperationsEchoTheirResult() {
        #expect(FieldOperation.increment(1).echoesResult)
        #expect(FieldOperation.add([]).echoesResult)
        #expect(FieldOperation.addUnique([]).echoesResult)
        #expect(FieldOperation.remove([]).echoesResult)
        #expect(!FieldOperation.set(1).echoesResult)
        #expect(!FieldOperation.delete.echoesResult)
    }

    /// A sum past a Double's range is refused, never stored as infinity (written as `null`).
    @Test(arguments: [(1.7e308, 1.7e308), (-1.7e308, -1.7e308), (Double.greatestFiniteMagnitude, Double.greatestFiniteMagnitude)])
    func anOverflowingIncrementIsRefused(current: Double, amount: Double) {
        #expect(throws: ParseError.self) { try FieldOperation.increment(amount).applied(to: .number(current)) }
    }

    @Test func anIncrementUpToTheLimitAdds() throws {
        #expect(try FieldOperation.increment(1.7e308).applied(to: .number(-1.7e308)) == .number(0))
        #expect(try FieldOperation.increment(1e308).applied(to: .number(7e307))?.numberValue?.isFinite == true)
    }
}
