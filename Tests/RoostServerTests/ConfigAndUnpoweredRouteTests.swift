import Foundation
import RoostCore
import Testing

/// `/config` (REST guide "Config") and the endpoints answered as Parse answers them without
/// Cloud Code, analytics or a mailer.
@Suite struct ConfigAndUnpoweredRouteTests {
    @Test func configStartsEmptyAndMergesMasterUpdates() async throws {
        let server = try TestServer()
        let empty = try await server.request("GET", "/config")
        #expect(empty.status == 200)
        #expect(empty.json == ["params": [:]])

        let refused = try await server.request("PUT", "/config", json: ["params": ["winningNumber": 43]])
        #expect(refused.status == 403)
        #expect(refused.json == ["error": "unauthorized: master key is required"])

        let stored = try await server.request("PUT", "/config", json: [
            "params": ["welcomeMessage": "Welcome to The Internet!", "winningNumber": 42, "secret": "s3"],
            "masterKeyOnly": ["secret": true],
        ], master: true)
        #expect(stored.status == 200)
        #expect(stored.json == ["result": true])
        _ = try await server.request("PUT", "/config", json: ["params": ["winningNumber": 43]], master: true)

        let client = try await server.request("GET", "/config")
        #expect(client.json == [
            "params": ["welcomeMessage": "Welcome to The Internet!", "winningNumber": 43],
            "masterKeyOnly": ["welcomeMessage": false, "winningNumber": false],
        ])
        let master = try await server.request("GET", "/config", master: true)
        #expect(master.json["params"]?["secret"] == "s3")
        #expect(master.json["masterKeyOnly"]?["secret"] == true)

        _ = try await server.request("PUT", "/config", json: ["params": ["welcomeMessage": ["__op": "Delete"]]], master: true)
        let afterDelete = try await server.request("GET", "/config")
        #expect(afterDelete.json == ["params": ["winningNumber": 43], "masterKeyOnly": ["welcomeMessage": false, "winningNumber": false]])

        let notAnObject = try await server.request("PUT", "/config", json: ["params": [1, 2]], master: true)
        #expect(notAnObject.status == 400)
        #expect(notAnObject.json["code"] == 107)
    }

    @Test func endpointsWithoutTheirMachineryAnswerAsParse() async throws {
        let server = try TestServer()
        let function = try await server.request("POST", "/functions/hello", json: [:])
        #expect(function.status == 400)
        #expect(function.json == ["code": 141, "error": "Invalid function: \"hello\""])

        let event = try await server.request("POST", "/events/AppOpened", json: ["at": ["__type": "Date", "iso": "2026-11-23T10:00:00.000Z"]])
        #expect(event.status == 200)
        #expect(event.json == [:])

        #expect(try await server.request("GET", "/functions/hello").status == 404)  // Parse routes POST only.

        for path in ["/requestPasswordReset", "/verificationEmailRequest"] {
            let reset = try await server.request("POST", path, json: ["email": "coolguy@iloveapps.com"])
            #expect(reset.status == 500)
            #expect(reset.json["code"] == 1)
            #expect(reset.json["error"]?.stringValue?.contains("emailAdapter") == true)
        }
        #expect(try await server.request("POST", "/events/AppOpened", json: [:], appId: false).status == 403)

        // Push without a push adapter: 115, after Parse's own checks of the target; master key first.
        let push = ["where": ["deviceType": "ios"], "data": ["alert": "Hello"]] as JSON
        #expect(try await server.request("POST", "/push", json: push).status == 403)
        #expect(try await server.request("POST", "/push", json: push, master: true).json
            == ["code": 115, "error": "Missing push configuration"])
        #expect(try await server.request("POST", "/push", json: ["data": ["alert": "Hi"]], master: true).json["code"] == 115)
        // No webhooks registered and no scheduled jobs: empty lists for the master key.
        for path in ["/hooks/functions", "/hooks/triggers", "/cloud_code/jobs"] {
            let list = try await server.request("GET", path, master: true)
            #expect(list.status == 200)
            #expect(list.json == [])
            #expect(try await server.request("GET", path).status == 403)
        }
        // spec: JobSchedule.spec.js: should reject access when not using masterKey (PUT /jobs/id)
        // spec: JobSchedule.spec.js: should reject access when not using masterKey (DELETE /jobs/id)
        // spec: JobSchedule.spec.js: should fail creating a job with an invalid name
        // spec: JobSchedule.spec.js: should fail updating a job with an invalid name
        let schedules: [(String, String)] = [("POST", "/cloud_code/jobs"), ("PUT", "/cloud_code/jobs/jobId"), ("DELETE", "/cloud_code/jobs/jobId")]
        for (method, path) in schedules {
            let refused = try await server.request(method, path, json: ["job_schedule": ["jobName": "job"]])
            #expect(refused.status == 403 && refused.json == ["error": "unauthorized: master key is required"], "\(method) \(path)")
        }
        for (method, path) in schedules.prefix(2) {
            let undeployed = try await server.request(method, path, json: ["job_schedule": ["jobName": "job"]], master: true)
            #expect(undeployed.status == 500 && undeployed.json == ["code": 1, "error": "Cannot Schedule a job that is not deployed"])
        }
        expectError(try await server.request("DELETE", "/cloud_code/jobs/jobId", master: true), 101, "Object not found.")
        let hook = try await server.request("GET", "/hooks/functions/hello", master: true)
        #expect(hook.json == ["code": 143, "error": "no function named: hello is defined"])
        // A client's request, not a server fault: nothing at error level in the log.
        #expect(server.stop() == 0)
        #expect(!server.log().contains(" error "))
    }
}
