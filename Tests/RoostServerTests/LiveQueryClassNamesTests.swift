import Testing
@testable import RoostServer

/// `--live-query-classes` entries, matched as parse-server's `LiveQueryController.hasLiveQuery` matches
/// `liveQuery.classNames`: `new RegExp('^' + entry + '$')`.
@Suite struct LiveQueryClassNamesTests {
    @Test func entriesMatchWholeClassNamesAsParseAnchorsThem() throws {
        let names = try LiveQueryClassNames(["Test.*", "Note", "_Session"])
        #expect(names.contains("TestObject") && names.contains("Test") && names.contains("Note") && names.contains("_Session"))
        #expect(!names.contains("MyTestObject") && !names.contains("Notebook") && !names.contains("Session"))
        #expect(names.contains("TestObject"), "a cached answer is the same")
    }

    @Test func anAlternationIsSplicedBetweenTheAnchorsUngroupedAsInParse() throws {
        let ungrouped = try LiveQueryClassNames(["Note|Todo"])  // ^Note|Todo$: starts with Note, or ends with Todo.
        #expect(ungrouped.contains("Note") && ungrouped.contains("Notebook") && ungrouped.contains("MyTodo"))
        let grouped = try LiveQueryClassNames(["(Note|Todo)"])
        #expect(grouped.contains("Todo") && !grouped.contains("Notebook"))
    }

    @Test func noEntriesMakeNoClassLiveAndABadEntryIsNamed() throws {
        #expect(!(try LiveQueryClassNames([])).contains("Note"))
        #expect(throws: LiveQueryClassNames.InvalidPattern.self) { try LiveQueryClassNames(["Note", "[a-"]) }
        do {
            _ = try LiveQueryClassNames(["Note", "Test("])
            Issue.record("'Test(' was accepted")
        } catch {
            #expect(error.pattern == "Test(" && error.description.hasPrefix("'Test(' is not a regular expression (missing closing parenthesis"),
                    "\(error)")
        }
    }
}
