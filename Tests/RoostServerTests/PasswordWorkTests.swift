import Foundation
import Testing

/// Password hashing (PBKDF2) runs on threads of its own, with the connection parked: the HTTP thread
/// goes on serving its other connections meanwhile.
@Suite struct PasswordWorkTests {
    @Test func aSignUpDoesNotHoldUpOtherConnectionsOfItsThread() throws {
        // One HTTP thread, and a hash slow enough (seconds) to be surely still running below.
        let server = try TestServer(arguments: ["--threads", "1", "--password-iterations", "3000000"])
        let signUp = try RawConnection(port: server.port)
        let body = #"{"username":"slow","password":"a password"}"#
        try signUp.send("POST /parse/users HTTP/1.1\r\nHost: roost\r\nX-Parse-Application-Id: \(TestServer.applicationId)\r\n"
            + "Content-Length: \(body.utf8.count)\r\n\r\n" + body)
        let other = try RawConnection(port: server.port)
        for _ in 0..<5 {
            #expect(try other.exchange("GET /parse/health HTTP/1.1\r\nHost: roost\r\n\r\n").head.hasPrefix("HTTP/1.1 200"))
        }
        #expect(!signUp.hasAnswer, "the sign-up was answered before five health checks on its HTTP thread")
        let created = try signUp.receive()
        #expect(created.head.hasPrefix("HTTP/1.1 201"))
        // Logging in checks the password on the same threads.
        let logIn = try other.exchange("GET /parse/login?username=slow&password=a%20password HTTP/1.1\r\nHost: roost\r\n"
            + "X-Parse-Application-Id: \(TestServer.applicationId)\r\n\r\n")
        #expect(logIn.head.hasPrefix("HTTP/1.1 200"))
        #expect(logIn.body.contains("\"sessionToken\":\"r:"))
    }
}
