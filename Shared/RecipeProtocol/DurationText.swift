import Foundation

extension Duration {
    /// The duration as people say it in a message: "5 s", "1.5 s", "250 ms".
    public var spokenText: String {
        let millis = components.seconds * 1_000 + components.attoseconds / 1_000_000_000_000_000
        if millis >= 1_000 && millis % 1_000 == 0 { return "\(millis / 1_000) s" }
        return millis > 1_000 ? String(format: "%.1f s", Double(millis) / 1_000) : "\(millis) ms"
    }
}
