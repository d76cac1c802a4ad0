import RoostCore

extension RoostClient {
    /// Runs a Cloud Function (`POST /functions/<name>`, the Parse SDKs' `Cloud.run`) with the current
    /// user's session, and answers its `result`. Roost serves functions through webhooks registered
    /// with `/hooks/functions`.
    /// - Throws: `RoostError` code 141 when the function is unknown or its webhook answered an error.
    public func callFunction(_ name: String, parameters: [String: JSON] = [:]) async throws -> JSON {
        // The name is one path segment.
        guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || "_-.".contains($0) }) else {
            throw RoostError.invalidArgument("invalid function name: \(name)")
        }
        let answer = try await request("POST", "functions/\(name)", body: .object(parameters))
        return answer["result"] ?? .null
    }

    /// `callFunction` for code that is not async (command-line tools).
    public func callFunctionBlocking(_ name: String, parameters: [String: JSON] = [:]) throws -> JSON {
        try runBlocking { try await self.callFunction(name, parameters: parameters) }
    }
}
