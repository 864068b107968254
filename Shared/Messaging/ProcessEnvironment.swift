import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process environment, as the executables read their settings from it.
public enum ProcessEnvironment {
    /// The value of `name`, or `nil` when it is unset or empty.
    public static func value(_ name: String) -> String? {
        guard let raw = getenv(name) else { return nil }
        let value = String(cString: raw)
        return value.isEmpty ? nil : value
    }
}

/// A comma-separated list from the environment (`a.pub,b.pub`), empty when unset.
public func environmentList(_ name: String) -> [String] {
    (ProcessEnvironment.value(name) ?? "").split(separator: ",")
        .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
}
