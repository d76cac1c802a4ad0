import ArgumentParser
import RoostServer

/// A flag's value, else its `ROOST_*` environment variable's, checked: an error names the flag or the
/// variable the bad value came from. Variables are named after their flag: `--pin-threads` ↔ `ROOST_PIN_THREADS`.
struct Settings {
    let environment: [String: String]

    static func variable(for name: String) -> String { "ROOST_" + name.uppercased().replacing("-", with: "_") }

    func string(_ flag: String?, _ name: String) -> String? {
        flag ?? environment[Settings.variable(for: name)]
    }

    /// Where a value given by `flag` (non-nil) or else by its variable came from, as errors name it: `--name` or `ROOST_NAME`.
    static func source<T>(_ flag: T?, _ name: String) -> String { flag != nil ? "--\(name)" : variable(for: name) }

    /// Comma-separated addresses and CIDR ranges (`--master-key-ips`, `--maintenance-key-ips`).
    func addressRanges(_ flag: String?, _ name: String) throws -> [AddressRange]? {
        guard let value = string(flag, name) else { return nil }
        do {
            return try AddressRange.list(value)
        } catch let error as AddressRange.InvalidEntry {
            let source = Settings.source(flag, name)
            throw ValidationError("invalid entry in \(source): \(error.entry) (not an IPv4 or IPv6 address or CIDR range)")
        }
    }

    /// A switch (`--name`, `--no-name`), or its variable set to true/false, 1/0, yes/no or on/off.
    func boolean(_ flag: Bool?, _ name: String) throws -> Bool? {
        try value(flag, name, expected: "true or false, 1 or 0, yes or no") { text in
            switch text.lowercased() {
            case "true", "1", "yes", "on": true
            case "false", "0", "no", "off": false
            default: nil
            }
        }
    }

    func integer(_ flag: Int?, _ name: String, in range: ClosedRange<Int>) throws -> Int? {
        let expected = range.upperBound == .max ? "a whole number of at least \(range.lowerBound)"
            : "a whole number from \(range.lowerBound) to \(range.upperBound)"
        if let flag {
            guard range.contains(flag) else { throw ValidationError("invalid value for --\(name): \(flag) (expected \(expected))") }
            return flag
        }
        return try value(nil, name, expected: expected) { Int($0).flatMap { range.contains($0) ? $0 : nil } }
    }

    /// The flag's value as given (ArgumentParser checked its type), else the variable's text converted.
    func value<T>(_ flag: T?, _ name: String, expected: String, _ convert: (String) -> T?) throws -> T? {
        if let flag { return flag }
        let variable = Settings.variable(for: name)
        guard let text = environment[variable] else { return nil }
        guard let value = convert(text) else { throw ValidationError("invalid value for \(variable): '\(text)' (expected \(expected))") }
        return value
    }

    /// A text flag or variable that must convert (e.g. a log level): the error names whichever was given.
    func converted<T>(_ flag: String?, _ name: String, expected: String, _ convert: (String) -> T?) throws -> T? {
        if let flag {
            guard let value = convert(flag) else { throw ValidationError("invalid value for --\(name): '\(flag)' (expected \(expected))") }
            return value
        }
        return try value(nil, name, expected: expected, convert)
    }
}
