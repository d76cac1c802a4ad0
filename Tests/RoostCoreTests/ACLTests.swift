import RoostCore
import Testing

@Suite struct ACLTests {
    @Test(arguments: [
        ([:], [:]),
        (["*": ["read": true]], ["*": ["read": true]]),
        (["u1": ["read": true, "write": true], "role:Admins": ["write": true]],
         ["u1": ["read": true, "write": true], "role:Admins": ["write": true]]),
        (["*": ["read": true, "write": false]], ["*": ["read": true]]),
        (["*": ["read": false], "u1": ["write": true]], ["u1": ["write": true]]),
        (["*": [:]], [:]),
    ] as [(JSON, JSON)])
    func validACLs(acl: JSON, normalized: JSON) throws {
        #expect(try ACL.validate(acl) == normalized)
    }

    /// Parse: 123 "Invalid ACL." for any other shape.
    @Test(arguments: [
        "public", 1, true, nil, [], [["*": ["read": true]]],
        ["*": true],
        ["*": "read"],
        ["*": ["read"]],
        ["*": nil],
        ["*": ["read": "true"]],
        ["*": ["read": 1]],
        ["*": ["read": nil]],
        ["*": ["delete": true]],
        ["*": ["Read": true]],
        ["": ["read": true]],
    ] as [JSON])
    func invalidACLsAre123(acl: JSON) throws {
        let error = try #require(throws: ParseError.self) { try ACL.validate(acl) }
        #expect(error.code == .invalidACL)
        #expect(error.message == "Invalid ACL.")
        #expect(error.json == ["code": 123, "error": "Invalid ACL."])
    }

    @Test func subjectsGrantingAPermission() {
        let acl: JSON = ["*": ["read": true], "u1": ["read": true, "write": true], "role:Admins": ["write": true],
                         "u2": ["read": false]]
        #expect(ACL.subjects(of: acl, granting: "read") == ["*", "u1"])
        #expect(ACL.subjects(of: acl, granting: "write") == ["role:Admins", "u1"])
        #expect(ACL.subjects(of: "x", granting: "read") == [])
    }
}
