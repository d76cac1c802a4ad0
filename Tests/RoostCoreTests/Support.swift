import RoostCore

/// The Parse error code `body` throws, or `nil` when it does not throw a `ParseError`.
func parseErrorCode<T>(_ body: () throws -> T) -> Int? {
    do {
        _ = try body()
        return nil
    } catch let error as ParseError {
        return error.code.rawValue
    } catch {
        return nil
    }
}

