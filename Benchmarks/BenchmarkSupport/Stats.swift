import Foundation

/// Percentiles and rates of a set of round-trip times.
public struct Stats: Sendable {
    public let p50: Duration
    public let p99: Duration
    public let mean: Duration
    public let requestsPerSecond: Double

    public init(_ samples: [Duration]) {
        let sorted = samples.sorted()
        p50 = sorted[sorted.count / 2]
        p99 = sorted[min(sorted.count - 1, sorted.count * 99 / 100)]
        let total = sorted.reduce(Duration.zero, +)
        mean = total / sorted.count
        requestsPerSecond = Double(sorted.count) / total.seconds
    }

    public var throughput: String { String(format: "%.0f req/s", requestsPerSecond) }
}

extension Duration {
    public var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
    public var micros: String { String(format: "%.1f µs", seconds * 1e6) }
    public var millis: String { String(format: "%.2f ms", seconds * 1e3) }
}

/// A table row: a label, then right-aligned columns.
public func row(_ label: String, _ columns: String..., labelWidth: Int = 22, columnWidth: Int = 14) -> String {
    label.padding(toLength: labelWidth, withPad: " ", startingAt: 0)
        + columns.map { String(repeating: " ", count: max(0, columnWidth - $0.count)) + $0 }.joined()
}

/// "1.23×"
public func ratio(_ value: Double) -> String { String(format: "%.2f×", value) }
