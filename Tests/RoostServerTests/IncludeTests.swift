import Foundation
import RoostCore
import Testing

/// `include` (and `keys` with a dot path): pointers replaced by the objects they point to, read with the
/// caller's rights.
@Suite struct IncludeTests {
    struct Fixture {
        let server: TestServer
        let alice: Account
        let ann: String
        let bob: String
        /// Post ids: p1, p2 (public) and hidden (readable by alice only).
        let posts: [String: String]
        /// Comment ids: c1 … c4.
        let comments: [String: String]
    }

    func fixture() async throws -> Fixture {
        let server = try TestServer(arguments: fastHashing)
        let alice = try await server.signUpAccount("alice")
        let authors = try await server.createAll("Author", [["name": "Ann"], ["name": "Bob"]])
        let p1 = try await server.create("Post", ["title": "T1", "body": "B1", "author": pointer("Author", authors[0])])
        let p2 = try await server.create("Post", ["title": "T2", "body": "B2", "author": pointer("Author", authors[1])])
        let hidden = try await server.create("Post", ["title": "Hidden", "body": "H", "author": pointer("Author", authors[0]),
                                                      "ACL": privateACL(alice.id)], token: alice.token)
        let c1 = try await server.create("Comment", ["text": "c1", "post": pointer("Post", p1),
                                                     "posts": [pointer("Post", p1), pointer("Post", p2)]])
        let c2 = try await server.create("Comment", ["text": "c2", "post": pointer("Post", hidden),
                                                     "posts": [pointer("Post", hidden), pointer("Post", p1)]])
        let c3 = try await server.create("Comment", ["text": "c3", "post": pointer("Post", "missing000")])
        let c4 = try await server.create("Comment", ["text": "c4"])
        return Fixture(server: server, alice: alice, ann: authors[0], bob: authors[1],
                       posts: ["p1": p1, "p2": p2, "hidden": hidden],
                       comments: ["c1": c1, "c2": c2, "c3": c3, "c4": c4])
    }

    /// The comment `text` of a query with the given options, as `token` sees it.
    func comment(_ f: Fixture, _ text: String, _ options: [String: JSON], token: String? = nil,
                 sourceLocation: SourceLocation = #_sourceLocation) async throws -> JSON {
        var parameters = options
        parameters["where"] = ["text": .string(text)]
        let results = try await f.server.queryResults("Comment", parameters, token: token, sourceLocation: sourceLocation)
        #expect(results.count == 1, sourceLocation: sourceLocation)
        return results.first ?? .null
    }

    @Test func includeReplacesAPointerByTheObject() async throws {
        let f = try await fixture()
        let plain = try await comment(f, "c1", [:])
        #expect(plain["post"] == pointer("Post", f.posts["p1"]!))

        let included = try await comment(f, "c1", ["include": "post"])
        let post = try #require(included["post"])
        #expect(post["__type"] == "Object")
        #expect(post["className"] == "Post")
        #expect(post["objectId"] == .string(f.posts["p1"]!))
        #expect(post["title"] == "T1")
        #expect(post["body"] == "B1")
        #expect(isParseISODate(post["createdAt"]?.stringValue))
        #expect(isParseISODate(post["updatedAt"]?.stringValue))
        // One level only: the post's own pointer stays a pointer.
        #expect(post["author"] == pointer("Author", f.ann))
        #expect(keySet(post) == ["__type", "className", "objectId", "createdAt", "updatedAt", "title", "body", "author"])
        // The rest of the comment is untouched.
        #expect(included["text"] == "c1")
        #expect(included["posts"] == [pointer("Post", f.posts["p1"]!), pointer("Post", f.posts["p2"]!)])
    }

    @Test func includeADotPathIncludesEveryLevel() async throws {
        let f = try await fixture()
        let included = try await comment(f, "c1", ["include": "post.author"])
        #expect(included["post"]?["__type"] == "Object")
        #expect(included["post"]?["title"] == "T1")
        let author = included["post"]?["author"]
        #expect(author?["__type"] == "Object")
        #expect(author?["className"] == "Author")
        #expect(author?["objectId"] == .string(f.ann))
        #expect(author?["name"] == "Ann")
        // Both spelled out, in either order.
        let both = try await comment(f, "c1", ["include": "post.author,post"])
        #expect(both["post"]?["author"]?["name"] == "Ann")
    }

    @Test func includePointersInsideArrays() async throws {
        let f = try await fixture()
        let included = try await comment(f, "c1", ["include": "posts"])
        let posts = try #require(included["posts"]?.arrayValue)
        #expect(posts.map { $0["__type"] } == ["Object", "Object"])
        #expect(posts.map { $0["title"] } == ["T1", "T2"])
        #expect(posts.map { $0["objectId"] } == [.string(f.posts["p1"]!), .string(f.posts["p2"]!)])
        // Deeper, through the array.
        let deep = try await comment(f, "c1", ["include": "posts.author"])
        #expect(deep["posts"]?.arrayValue?.map { $0["author"]?["name"] } == ["Ann", "Bob"])
        // The single pointer is not included unless asked for.
        #expect(included["post"] == pointer("Post", f.posts["p1"]!))
    }

    @Test func anIncludedObjectTheCallerMayNotReadIsLeftOut() async throws {
        let f = try await fixture()
        // Anonymous: the key disappears, and the element leaves its array.
        let anonymous = try await comment(f, "c2", ["include": "post,posts"])
        #expect(anonymous["post"] == nil)
        #expect(anonymous["text"] == "c2")
        #expect(anonymous["posts"]?.arrayValue?.map { $0["objectId"] } == [.string(f.posts["p1"]!)])
        #expect(anonymous["posts"]?.arrayValue?.first?["title"] == "T1")
        // The reader sees it.
        let reader = try await comment(f, "c2", ["include": "post,posts"], token: f.alice.token)
        #expect(reader["post"]?["title"] == "Hidden")
        #expect(reader["posts"]?.arrayValue?.map { $0["title"] } == ["Hidden", "T1"])
        // So does the master key.
        let master = try await f.server.queryResults("Comment", ["where": ["text": "c2"], "include": "post"], master: true)
        #expect(master.first?["post"]?["title"] == "Hidden")
        // Deeper levels too: the hidden post's author is not fetched for the anonymous caller.
        let deep = try await comment(f, "c2", ["include": "post.author"])
        #expect(deep["post"] == nil)
    }

    @Test func anIncludedPointerToAMissingObjectIsLeftOut() async throws {
        let f = try await fixture()
        let missing = try await comment(f, "c3", ["include": "post"])
        #expect(missing["post"] == nil)
        #expect(missing["text"] == "c3")
        // No pointer at all: nothing changes.
        let none = try await comment(f, "c4", ["include": "post,posts"])
        #expect(keySet(none) == ["objectId", "createdAt", "updatedAt", "text"])
        // Including a field that holds no pointer leaves it as it is.
        let notPointer = try await comment(f, "c1", ["include": "text"])
        #expect(notPointer["text"] == "c1")
        // A key that does not exist.
        let nothing = try await comment(f, "c1", ["include": "nothing"])
        #expect(nothing["post"] == pointer("Post", f.posts["p1"]!))
    }

    @Test func includeOnAllResultsOfAQuery() async throws {
        let f = try await fixture()
        let results = try await f.server.queryResults("Comment", ["include": "post", "order": "text"])
        #expect(results.map { $0["text"] } == ["c1", "c2", "c3", "c4"])
        #expect(results.map { $0["post"]?["title"]?.stringValue ?? "-" } == ["T1", "-", "-", "-"])
        #expect(results.map { $0["post"] == nil } == [false, true, true, true])
        // Through the SDK's POST form.
        let body = try await f.server.query("Comment", ["where": ["text": "c1"], "include": "post.author"], viaBody: true)
        #expect(body.json["results"]?.arrayValue?.first?["post"]?["author"]?["name"] == "Ann")
    }

    @Test func includeOnASingleObjectGet() async throws {
        let f = try await fixture()
        let response = try await f.server.request("GET", "/classes/Comment/\(f.comments["c1"]!)", query: ["include": "post.author,posts"])
        #expect(response.status == 200)
        #expect(response.json["post"]?["author"]?["name"] == "Ann")
        #expect(response.json["posts"]?.arrayValue?.map { $0["title"] } == ["T1", "T2"])
        let hidden = try await f.server.request("GET", "/classes/Comment/\(f.comments["c2"]!)", query: ["include": "post"])
        #expect(hidden.status == 200)
        #expect(hidden.json["post"] == nil)
    }

    /// `keys=post.title` selects `post` and includes it, with only `title` (and the built-in keys) in it.
    @Test func keysWithADotPathIncludeThePointer() async throws {
        let f = try await fixture()
        let result = try await comment(f, "c1", ["keys": "post.title"])
        #expect(keySet(result) == ["objectId", "createdAt", "updatedAt", "post"])
        let post = try #require(result["post"])
        #expect(post["__type"] == "Object")
        #expect(post["title"] == "T1")
        #expect(post["objectId"] == .string(f.posts["p1"]!))
        #expect(post["body"] == nil)
        #expect(post["author"] == nil)
        // Two levels: post.author.name includes post and post.author.
        let deep = try await comment(f, "c1", ["keys": "post.author.name"])
        #expect(deep["post"]?["author"]?["name"] == "Ann")
        #expect(deep["post"]?["title"] == nil)
    }

    /// Included objects go through the class-level permissions of their class: protected fields are left out.
    @Test func includedObjectsHideProtectedFields() async throws {
        let f = try await fixture()
        let permissions = openPermissions(["protectedFields": ["*": ["body"]]])
        let put = try await f.server.request("PUT", "/schemas/Post", json: ["classLevelPermissions": permissions], master: true)
        #expect(put.status == 200, "\(put.text)")
        // Queried directly, the field is hidden.
        let direct = try await f.server.queryResults("Post", ["where": ["title": "T1"]])
        #expect(direct.first?["body"] == nil)
        #expect(direct.first?["title"] == "T1")
        // Included, too.
        let included = try await comment(f, "c1", ["include": "post,posts"])
        #expect(included["post"]?["title"] == "T1")
        #expect(included["post"]?["body"] == nil)
        #expect(included["posts"]?.arrayValue?.map { $0["body"] == nil } == [true, true])
        // The master key sees everything.
        let master = try await f.server.queryResults("Comment", ["where": ["text": "c1"], "include": "post"], master: true)
        #expect(master.first?["post"]?["body"] == "B1")
    }

    /// `include=*` includes every pointer field of the class and arrays of pointers too.
    @Test func includeAll() async throws {
        let f = try await fixture()
        let result = try await comment(f, "c1", ["include": "*"])
        #expect(result["post"]?["title"] == "T1")
        #expect(result["posts"]?.arrayValue?.map { $0["title"] } == ["T1", "T2"])
    }

    /// An included `_User` is read with the caller's rights (private by default since Parse 6) and never
    /// carries secrets.
    @Test func includedUsers() async throws {
        let f = try await fixture()
        let note = try await f.server.create("Note", ["text": "mine", "user": pointer("_User", f.alice.id)], token: f.alice.token)
        let own = try await f.server.queryResults("Note", ["include": "user"], token: f.alice.token)
        #expect(own.first?["objectId"] == .string(note))
        let user = own.first?["user"]
        #expect(user?["__type"] == "Object")
        #expect(user?["className"] == "_User")
        #expect(user?["username"] == "alice")
        #expect(user?["password"] == nil)
        #expect(user?["sessionToken"] == nil)
        #expect(user?["authData"] == nil)
        let anonymous = try await f.server.queryResults("Note", ["include": "user"])
        #expect(anonymous.count == 1)
        #expect(anonymous.first?["user"] == nil)
    }
}
