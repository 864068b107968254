import Foundation
import RecipeModel

/// New request ids: random version-4 UUIDs, as the protocol recommends.
public enum RequestID {
    /// A fresh id (`UUID.random()`: two `getrandom` calls, not Foundation's three system calls per id).
    public static func make() -> String { UUID.random().uuidString }
}
